# A token-file GPT-style job: a flat uint16 token file read through np.memmap at random offsets in a
# Dataset, batches from a DataLoader with worker processes, a small embedding + linear model, and the
# device's share of each step held off the CPU by a sleep.
# The model sees every token of each window (so learn's tokens per sample are the tokens read).
# Usage: python job_tokens.py TOKENS.bin [--workers 2] [--batch 8] [--seq 1024] [--device-ms 30]
import argparse
import time

import numpy as np
import torch
from torch import nn


class TokenWindows(torch.utils.data.Dataset):
    def __init__(self, path, seq):
        self.path, self.seq = path, seq
        self.tokens = np.memmap(path, dtype=np.uint16, mode="r")

    def __len__(self):
        return (len(self.tokens) - 1) // self.seq

    def __getitem__(self, index):
        start = index * self.seq
        window = torch.from_numpy(self.tokens[start:start + self.seq + 1].astype(np.int64))
        return window[:-1], window[1:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tokens")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--device-ms", type=float, default=30)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    dataset = TokenWindows(args.tokens, args.seq)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch, shuffle=True, num_workers=args.workers, persistent_workers=args.workers > 0)
    # Small on purpose: on a GPU node the model runs on the device (the sleep below); what runs on
    # this CPU is the loader and a model too small to hide it, so the bench checks the data path.
    model = nn.Sequential(nn.Embedding(256, 16), nn.Linear(16, 32))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    while True:
        for inputs, targets in loader:
            logits = model(inputs % 256)
            loss = nn.functional.cross_entropy(logits.reshape(-1, 32), (targets % 32).reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            time.sleep(args.device_ms / 1e3)  # the device's share of the step
            optimizer.step()


if __name__ == "__main__":
    main()
