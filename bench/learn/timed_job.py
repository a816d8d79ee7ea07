# A training job that times its own optimizer steps and prints them ("step_s STEP SECONDS"), so the
# same clock measures it with and without `nodeaudit learn`: torchvision's ResNet-18 on random
# images at a given size and batch, SGD, through a DataLoader over in-memory tensors (num_workers 0).
import sys
import time

import torch
import torchvision


def main(size, batch, steps):
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(batch * 4, 3, size, size)
    labels = torch.randint(0, 10, (batch * 4,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels), batch_size=batch, shuffle=True)
    step, last = 0, time.perf_counter()
    while step < steps:
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            now = time.perf_counter()
            step += 1
            print("step_s %d %.6f" % (step, now - last), flush=True)
            last = now
            if step >= steps:
                return


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
