# A job that saves checkpoints: a small MLP head on feature shards (.npy files read whole by a Dataset
# through a DataLoader with worker processes) beside a frozen 100 MB table, the device's share of each
# step held off the CPU by a sleep, and torch.save of the model and optimizer state (about 117 MB)
# every few steps into a folder.
# Usage: python job_checkpoint.py SHARDS_DIR CHECKPOINT_DIR [--every 4] [--device-ms 40]
import argparse
import glob
import os
import time

import numpy as np
import torch
from torch import nn


class Shards(torch.utils.data.Dataset):
    def __init__(self, folder):
        self.files = sorted(glob.glob(os.path.join(folder, "*.npy")))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, index):
        features = torch.from_numpy(np.load(self.files[index]))
        return features, int(features.sum().item() > 0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shards")
    parser.add_argument("checkpoints")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--device-ms", type=float, default=40)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    loader = torch.utils.data.DataLoader(Shards(args.shards), batch_size=args.batch, shuffle=True, num_workers=args.workers,
                                         persistent_workers=args.workers > 0)
    # A frozen 100 MB table (a frozen backbone's share) beside a small trained head: the checkpoint
    # holds both, as a fine-tune's does, while the CPU work per step stays small (on a GPU node the
    # model runs on the device, the sleep below), so the bench checks the data path and the saves.
    frozen = nn.Embedding(25_000, 1024)
    frozen.weight.requires_grad_(False)
    model = nn.ModuleDict({"frozen": frozen, "head": nn.Sequential(nn.Linear(4096 + 1024, 256), nn.ReLU(), nn.Linear(256, 2))})
    optimizer = torch.optim.AdamW(model["head"].parameters(), lr=1e-3)
    step = 0
    while True:
        for features, labels in loader:
            context = model["frozen"](labels)  # one frozen row per sample
            loss = nn.functional.cross_entropy(model["head"](torch.cat([features[:, :4096], context], dim=1)), labels)
            optimizer.zero_grad()
            loss.backward()
            time.sleep(args.device_ms / 1e3)  # the device's share of the step
            optimizer.step()
            step += 1
            if step % args.every == 0:
                path = os.path.join(args.checkpoints, "checkpoint.pt")
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path + ".tmp")
                os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
