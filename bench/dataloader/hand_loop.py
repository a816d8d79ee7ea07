#!/usr/bin/env python3
"""The peer of host.dataloader: the DataLoader loop a user would time by hand, over the same files,
workers, batch and transform (torchvision's ImageNet recipe: PIL, RandomResizedCrop 224, flip,
ToTensor, Normalize). Prints one line: samples/s over the batches after the first two.
Usage: hand_loop.py DIR WORKERS BATCH BATCHES"""
import glob
import io
import sys
import time

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

directory, workers, batch, batches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
paths = sorted(glob.glob(f"{directory}/*.jpg"))
transform = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                transforms.ToTensor(),
                                transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])


class Files(Dataset):
    def __len__(self):
        return len(paths)

    def __getitem__(self, i):
        with open(paths[i], "rb") as f:
            return transform(Image.open(io.BytesIO(f.read())).convert("RGB"))


loader = DataLoader(Files(), batch_size=batch, shuffle=True, num_workers=workers, persistent_workers=True,
                    drop_last=True)
it = iter(loader)
next(it), next(it)  # workers started, queues filled: as host.dataloader's warm-up
start = time.perf_counter()
for _ in range(batches):
    next(it)
print(f"{batches * batch / (time.perf_counter() - start):.1f}")
