# A small MLP trained on in-memory random batches (no DataLoader, no files), with two optimizers as
# a job with a separately tuned head has them: SGD with momentum on the first layer, AdamW on the
# second. Optional: the forward and backward under torch.autocast on the CPU in bfloat16 (AMP);
# the second layer frozen (--freeze-second: no gradient, no optimizer, as a frozen head is).
# Shapes (the test computes parameters, bytes and FLOPs from them): linear IN->HIDDEN, ReLU,
# linear HIDDEN->CLASSES, both with biases; batch BATCH.
import argparse

import torch
from torch import nn


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--inputs", type=int, default=32)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--amp", action="store_true", help="torch.autocast(device_type='cpu', dtype=torch.bfloat16)")
    p.add_argument("--freeze-second", action="store_true")
    p.add_argument("--steps", type=int, default=100000)
    args = p.parse_args()
    torch.manual_seed(0)
    first, second = nn.Linear(args.inputs, args.hidden), nn.Linear(args.hidden, args.classes)
    model = nn.Sequential(first, nn.ReLU(), second)
    optimizers = [torch.optim.SGD(first.parameters(), lr=0.01, momentum=0.9)]
    if args.freeze_second:
        second.requires_grad_(False)
    else:
        optimizers.append(torch.optim.AdamW(second.parameters(), lr=1e-3))
    for step in range(args.steps):
        x = torch.randn(args.batch, args.inputs)
        y = torch.randint(0, args.classes, (args.batch,))
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=args.amp):
            loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        if step % 5 == 0:
            print("step %d loss %.4f" % (step, loss.item()), flush=True)


if __name__ == "__main__":
    main()
