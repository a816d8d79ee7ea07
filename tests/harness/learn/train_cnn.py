# A small CNN trained on an ImageFolder tree of 32x32 JPEGs through a 2-worker DataLoader (PIL decode),
# as a user's script would be: learn's test job. Layer shapes (the test computes FLOPs from them):
# conv 3->8 k3 p1 @32x32, maxpool 2, conv 8->16 k3 p1 @16x16, maxpool 2, linear 1024->10.
import argparse
import sys

import torch
from torch import nn
from torchvision import datasets, transforms


class SlowDataset(torch.utils.data.Dataset):
    def __init__(self, inner, seconds):
        self.inner, self.seconds = inner, seconds

    def __len__(self):
        return len(self.inner)

    def __getitem__(self, index):
        import time

        time.sleep(self.seconds)
        return self.inner[index]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--die-at-step", type=int, default=0)
    parser.add_argument("--hang-at-step", type=int, default=0)
    parser.add_argument("--save-every", type=int, default=0)
    parser.add_argument("--prefetch", type=int, default=None)
    parser.add_argument("--amp", action="store_true", help="forward under torch.autocast on the CPU in bfloat16")
    parser.add_argument("--item-sleep-ms", type=float, default=0, help="a slow loader: this long per sample (I/O latency)")
    args = parser.parse_args()
    torch.manual_seed(0)
    print("threads %d" % torch.get_num_threads(), flush=True)
    dataset = datasets.ImageFolder(args.data, transform=transforms.ToTensor())
    if args.item_sleep_ms:
        dataset = SlowDataset(dataset, args.item_sleep_ms / 1e3)
    extra = {"prefetch_factor": args.prefetch} if args.prefetch is not None else {}
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=args.workers, **extra)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(16 * 8 * 8, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = 0
    for epoch in range(args.epochs):
        for images, labels in loader:
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=args.amp):
                loss = nn.functional.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            print("epoch %d step %d loss %.4f" % (epoch, step, loss.item()), flush=True)
            if step == args.die_at_step:
                print("simulated failure at step %d" % step, file=sys.stderr, flush=True)
                sys.exit(3)
            if step == args.hang_at_step:
                import time
                time.sleep(3600)
            if args.save_every and step % args.save_every == 0:
                torch.save(model.state_dict(), "/dev/null")


if __name__ == "__main__":
    main()
