#!/usr/bin/env bash
# The Python environment host.dataloader's tests run a real PyTorch DataLoader in: torch and
# torchvision from PyPI (they bring NVIDIA's CUDA wheels, about 5.4 GB installed; 2 min 39 s to
# install on a 2-core machine with an empty pip cache) in a virtual environment under the build
# folder. Idempotent: an environment that already imports both is left alone.
# Usage: scripts/torch-venv.sh DIR
set -euo pipefail
venv=${1:?usage: torch-venv.sh DIR}
if [[ -x $venv/bin/python ]] && "$venv/bin/python" -c 'import torch, torchvision' 2>/dev/null; then
  exit 0
fi
echo "torch-venv: installing torch and torchvision into $venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check torch torchvision
"$venv/bin/python" -c 'import torch, torchvision; print("torch-venv: torch", torch.__version__, "torchvision", torchvision.__version__)'
