#!/usr/bin/env bash
# A venv with DLIO 2.0.0 (MLPerf Storage's loader emulator) for dlio_side_by_side.sh, from PyPI
# with --no-deps: its declared dependencies pull TensorFlow and DALI, which the PyTorch path does
# not import. torch and torchvision come from the torch venv (a .pth file), not installed again.
# Usage: bench/dataloader/dlio-venv.sh DLIO_VENV TORCH_VENV
set -euo pipefail
venv=${1:?usage: dlio-venv.sh DLIO_VENV TORCH_VENV} torch_venv=${2:?usage: dlio-venv.sh DLIO_VENV TORCH_VENV}
if [[ -x $venv/bin/dlio_benchmark ]] && "$venv/bin/python" -c 'import dlio_benchmark, torch' 2>/dev/null; then exit 0; fi
python3 -m venv "$venv"
torch_site=$("$torch_venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
here_site=$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
echo "$torch_site" > "$here_site/torch-venv.pth"
# The PyTorch reader's path: hydra/omegaconf for the config, pandas/psutil/h5py/mpi4py imported at
# start-up (mpi4py builds against the system Open MPI), pydftracer (2.0.0's stand-in without it fails).
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps dlio-benchmark==2.0.0 hydra-core omegaconf \
  'antlr4-python3-runtime==4.9.3' PyYAML pandas python-dateutil pytz tzdata six psutil h5py packaging \
  pydftracer==1.0.2
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation mpi4py 2>/dev/null ||
  "$venv/bin/pip" install -q --disable-pip-version-check mpi4py
"$venv/bin/python" -c 'import dlio_benchmark, torch, mpi4py; print("dlio-venv: ready,", torch.__version__)'
