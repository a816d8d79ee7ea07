# A small job for learn's lifecycle tests: a linear model trained on random batches, with the ways
# real jobs end or misbehave, each behind an option. --tag only puts the test's folder on the
# command line, so the test can find the job's processes afterwards.
import argparse
import os
import signal
import subprocess
import sys
import time

import torch
from torch import nn


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--tag", default="")
    p.add_argument("--step-sleep", type=float, default=0.0, help="seconds each step sleeps")
    p.add_argument("--started-file", default="", help="written after the first step")
    p.add_argument("--ignore-stop", action="store_true", help="SIGINT and SIGTERM only set a flag (a preemption-aware job)")
    p.add_argument("--escaped-child", action="store_true", help="start a helper in a session of its own")
    p.add_argument("--slow-finally", type=int, default=0, help="chunks the finally block writes, 0.5 s each")
    p.add_argument("--chunks-file", default="")
    p.add_argument("--print-latin1", action="store_true", help="print bytes that are not UTF-8")
    p.add_argument("--numpy-model", action="store_true", help="the arithmetic in numpy, gradients set by hand")
    return p.parse_args()


stop_requested = False


def note_stop(signum, frame):
    global stop_requested
    stop_requested = True


def train(args):
    distributed = "RANK" in os.environ
    if distributed:
        import torch.distributed as dist
        dist.init_process_group("gloo")
    weight = nn.Parameter(torch.zeros(16, 4))
    optimizer = torch.optim.SGD([weight], lr=0.01)
    step = 0
    while True:
        x = torch.randn(8, 16)
        if args.numpy_model:
            import numpy as np
            grad = x.numpy().T @ np.ones((8, 4), dtype=np.float32) / 8
            weight.grad = torch.from_numpy(grad)
        else:
            loss = (x @ weight).pow(2).mean()
            loss.backward()
            if distributed:
                dist.all_reduce(weight.grad)
        optimizer.step()
        optimizer.zero_grad()
        step += 1
        if step == 1 and args.started_file and int(os.environ.get("RANK", "0")) == 0:
            open(args.started_file, "w").close()
        if args.print_latin1:
            sys.stdout.buffer.write(b"step %d M\xfcller\n" % step)
            sys.stdout.flush()
        time.sleep(args.step_sleep)


def main():
    args = parse()
    if args.ignore_stop:
        signal.signal(signal.SIGINT, note_stop)
        signal.signal(signal.SIGTERM, note_stop)
    if args.escaped_child:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", args.tag], start_new_session=True)
    try:
        train(args)
    finally:
        for chunk in range(args.slow_finally):
            time.sleep(0.5)
            with open(args.chunks_file, "a") as out:
                out.write("chunk %d\n" % chunk)


if __name__ == "__main__":
    main()
