# Image classification as a user's script: an ImageFolder of JPEGs, torchvision's ImageNet training
# transform (RandomResizedCrop 224, flip, normalize) in a DataLoader with worker processes, a small
# CNN, and the device's share of each step held off the CPU by a sleep (as on a GPU node, where the
# step's compute runs on the GPU while the CPU feeds it).
# Usage: python job_images.py DATA [--workers 2] [--batch 16] [--device-ms 40]
import argparse
import time

import torch
from torch import nn
from torchvision import datasets, transforms


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--device-ms", type=float, default=40)
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    transform = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(), transforms.ToTensor(),
                                    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
    dataset = datasets.ImageFolder(args.data, transform=transform)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=args.workers, persistent_workers=args.workers > 0)
    model = nn.Sequential(nn.AvgPool2d(8), nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(128, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.epochs):
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            time.sleep(args.device_ms / 1e3)  # the device's share of the step
            optimizer.step()


if __name__ == "__main__":
    main()
