# Sourced by the scripts: sets PYTHON to an interpreter that has torch, kernels and the
# build and test tools. That is python3 itself where it has them (the H200 image, with
# kernels carried as wheels), else ./.venv, created and filled on first use.
_relu_env_ready() {
  "$1" -c 'import torch, kernels, pytest, numpy, triton; import torch.utils.cpp_extension as c; c.verify_ninja_availability()' 2>/dev/null
}
if _relu_env_ready python3; then
  PYTHON=python3
else
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  if ! _relu_env_ready .venv/bin/python; then
    scripts/pip_install.sh .venv/bin/python --upgrade pip
    scripts/pip_install.sh .venv/bin/python -r requirements-dev.txt
  fi
  PYTHON=$PWD/.venv/bin/python
fi
export PYTHON
# Loading kernels from local checkouts needs no network; never let a test reach for it.
export HF_HUB_OFFLINE=1
