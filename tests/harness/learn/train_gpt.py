# A tiny GPT-style decoder trained on random slices of a token file read with np.memmap, no DataLoader:
# learn's test job. Optional: gradient accumulation, torch.compile, DDP under torchrun (gloo).
# Shapes (the test computes parameters and FLOPs from them): vocab V, width d, layers L, context T;
# per layer qkv d->3d, proj d->d, mlp d->4d->d (biases), two LayerNorms; tied-free head d->V, no bias.
import argparse
import math
import os

import numpy as np
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab, d, layers, heads, context):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tokens")
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--d", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--context", type=int, default=32)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--accum", type=int, default=1)
    p.add_argument("--steps", type=int, default=100000)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--compile-backend", default="inductor")
    args = p.parse_args()
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        torch.distributed.init_process_group("gloo")
    torch.manual_seed(0)
    data = np.memmap(args.tokens, dtype=np.uint16, mode="r")
    rng = np.random.default_rng(int(os.environ.get("RANK", "0")))
    model = Gpt(args.vocab, args.d, args.layers, args.heads, args.context)
    if distributed:
        model = nn.parallel.DistributedDataParallel(model)
    forward = torch.compile(model, backend=args.compile_backend) if args.compile else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(args.steps):
        for micro in range(args.accum):
            starts = rng.integers(0, len(data) - args.context - 1, args.batch)
            x = torch.from_numpy(np.stack([data[s:s + args.context] for s in starts]).astype(np.int64))
            y = torch.from_numpy(np.stack([data[s + 1:s + 1 + args.context] for s in starts]).astype(np.int64))
            loss = nn.functional.cross_entropy(forward(x).view(-1, args.vocab), y.view(-1)) / args.accum
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 5 == 0:
            print("step %d loss %.4f" % (step, loss.item() * args.accum), flush=True)


if __name__ == "__main__":
    main()
