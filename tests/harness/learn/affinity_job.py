# A training loop that records, in every process, how many CPUs it may run on: the main process once,
# each DataLoader worker at its start. `learn --vary cpus` must confine them all. Appends lines
# "main N" / "worker N" to LOG.
# Usage: python affinity_job.py LOG
import os
import sys

import torch


class Numbers(torch.utils.data.Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, index):
        return torch.full((8,), float(index % 7))


def note(log, who):
    with open(log, "a") as out:
        out.write("%s %d\n" % (who, len(os.sched_getaffinity(0))))


def main(log):
    note(log, "main")
    loader = torch.utils.data.DataLoader(Numbers(), batch_size=16, num_workers=2, worker_init_fn=lambda _: note(log, "worker"))
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for batch in loader:
        loss = model(batch).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(sys.argv[1])
