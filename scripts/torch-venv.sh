#!/usr/bin/env bash
# The Python environment the tests run real PyTorch jobs in (host.dataloader, pipeline.step --loader
# pytorch, learn): torch and torchvision from PyPI (they bring NVIDIA's CUDA wheels, about 5.4 GB
# installed; 2 min 39 s to install on a 2-core machine with an empty pip cache) in a virtual
# environment under the build folder. The versions are pinned so a test's expectations (FLOP counts,
# DataLoader behaviour) do not move with a new release; an environment that already holds exactly
# these versions is left alone, any other is brought to them.
# Usage: scripts/torch-venv.sh DIR
set -euo pipefail
venv=${1:?usage: torch-venv.sh DIR}
pins=(torch==2.15.0 torchvision==0.29.2 numpy==2.4.6 pillow==13.0.0)
check='import sys, importlib.metadata as m
want = dict(p.split("==") for p in sys.argv[1:])
sys.exit(0 if all(m.version(n) == v for n, v in want.items()) else 1)'
if [[ -x $venv/bin/python ]] && "$venv/bin/python" -c "$check" "${pins[@]}" 2>/dev/null; then
  exit 0
fi
echo "torch-venv: installing ${pins[*]} into $venv"
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}"
"$venv/bin/python" -c 'import torch, torchvision; print("torch-venv: torch", torch.__version__, "torchvision", torchvision.__version__)'
