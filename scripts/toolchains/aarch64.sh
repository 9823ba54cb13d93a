#!/usr/bin/env bash
# Everything needed to cross-build the aarch64 variants on this x86_64 machine and to run
# them under emulation, fetched from package registries (Debian, PyPI) and cached in
# .cache/toolchains/aarch64/. Run it again: what is there is kept. Prints the env file to
# source (AARCH64_* variables, below).
#
#   scripts/toolchains/aarch64.sh     # prints .cache/toolchains/aarch64/env.sh
#
# What comes from where:
#   - aarch64-linux-gnu-g++: Debian's g++-aarch64-linux-gnu, installed with apt when missing
#     (needs root; CI installs it the same way);
#   - the arm64 sysroot (glibc, libstdc++, Python 3.11 to match the torch wheel's cp311 tag,
#     and its headers for the extension's limited-API module init):
#     Debian bookworm's arm64 packages, fetched by apt with a PRIVATE configuration and state
#     (APT_CONFIG below: this machine's sources, lists, caches and apt.conf.d stay untouched),
#     signatures checked against the Debian archive keyring, unpacked with dpkg -x;
#   - qemu-aarch64: trixie's qemu-user 10 (static-pie; bookworm's 7.2 segfaults in
#     `import torch`), unpacked with dpkg -x;
#   - aarch64 torch 2.13.0 (PyPI's only Linux aarch64 torch builds are CUDA 13 builds) and
#     the nvidia-* aarch64 libraries its libtorch_cuda.so links (a newer release of the same
#     major where PyPI lacks torch's exact pin for aarch64), installed with pip --target;
#   - libcupti.so.13: TEST SCAFFOLDING, never shipped. PyPI has no aarch64 CUPTI, which
#     libtorch_cpu.so links (kineto's profiler); a stand-in that exports the symbols torch
#     imports, each returning CUPTI_ERROR_UNKNOWN, lets `import torch` succeed. Nothing
#     here profiles;
#   - the aarch64 CUDA runtime for the cross-built CUDA variant: libcudart.so.13 from PyPI's
#     aarch64 nvidia-cuda-runtime wheel, under a private nvcc TOP (see cuda_top below).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
CACHE=$ROOT/.cache/toolchains/aarch64
mkdir -p "$CACHE"

TORCH_VERSION=2.13.0
PY_TAG=3.11                       # bookworm's python3.11; torch has cp311 aarch64 wheels
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MIRROR=http://deb.debian.org/debian
PIP_PLATFORM=(--platform manylinux_2_28_aarch64 --platform manylinux_2_27_aarch64
              --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64
              --python-version "$PY_TAG" --implementation cp --only-binary=:all:)
log() { echo "aarch64 toolchain: $*" >&2; }

# --- the cross compiler -----------------------------------------------------------------
if ! command -v aarch64-linux-gnu-g++ >/dev/null; then
  log "installing g++-aarch64-linux-gnu (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends g++-aarch64-linux-gnu >/dev/null
fi

# --- private apt: one root per (suite, architecture) -------------------------------------
# apt reads APT_CONFIG before anything else, so Dir::Etc::Parts there keeps the machine's
# apt.conf.d (and its post-invoke hooks on the machine's own caches) out.
apt_private() {  # apt_private <name> <suite> <arch> apt-get-args...
  local name=$1 suite=$2 arch=$3; shift 3
  local dir=$CACHE/apt/$name
  if [ ! -f "$dir/apt.conf" ]; then
    mkdir -p "$dir"/{etc/apt.conf.d,etc/sources.list.d,etc/preferences.d,etc/trusted.gpg.d,state/lists/partial,cache/archives/partial,log}
    : >"$dir/state/status"
    echo "deb [arch=$arch signed-by=$KEYRING] $MIRROR $suite main" >"$dir/etc/sources.list"
    cat >"$dir/apt.conf" <<EOF
Dir::Etc::main "/dev/null";
Dir::Etc::Parts "$dir/etc/apt.conf.d";
Dir::Etc::SourceList "$dir/etc/sources.list";
Dir::Etc::SourceParts "$dir/etc/sources.list.d";
Dir::Etc::Preferences "$dir/etc/preferences";
Dir::Etc::PreferencesParts "$dir/etc/preferences.d";
Dir::Etc::TrustedParts "$dir/etc/trusted.gpg.d";
Dir::State "$dir/state";
Dir::State::status "$dir/state/status";
Dir::Cache "$dir/cache";
Dir::Log "$dir/log";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
APT::Install-Recommends "false";
Acquire::Languages "none";
EOF
  fi
  APT_CONFIG=$dir/apt.conf apt-get -q -o APT::Architecture="$arch" -o APT::Architectures="$arch" "$@"
}

apt_fetch() {  # apt_fetch <name> <suite> <arch> <dest dir> packages...: download with dependencies, verified
  local name=$1 suite=$2 arch=$3 dest=$4; shift 4
  local dir=$CACHE/apt/$name
  apt_private "$name" "$suite" "$arch" update >/dev/null
  apt_private "$name" "$suite" "$arch" install --download-only -y "$@" >/dev/null
  mkdir -p "$dest"
  for deb in "$dir"/cache/archives/*.deb; do
    dpkg -x "$deb" "$dest"
  done
}

# --- the arm64 sysroot (glibc, libstdc++, Python) -----------------------------------------
SYSROOT=$CACHE/sysroot
# zlib1g: torch's bundled libgfortran links libz.
SYSROOT_PACKAGES="python$PY_TAG libpython$PY_TAG-dev libstdc++6 libgcc-s1 zlib1g"
if [ "$(cat "$SYSROOT/.done" 2>/dev/null)" != "$SYSROOT_PACKAGES" ]; then
  log "arm64 sysroot from Debian bookworm: $SYSROOT_PACKAGES"
  rm -rf "$SYSROOT"
  apt_fetch bookworm-arm64 bookworm arm64 "$SYSROOT" $SYSROOT_PACKAGES
  test -x "$SYSROOT/usr/bin/python$PY_TAG"
  test -f "$SYSROOT/usr/include/aarch64-linux-gnu/python$PY_TAG/pyconfig.h"
  echo "$SYSROOT_PACKAGES" >"$SYSROOT/.done"
fi

# --- qemu-user 10 from trixie --------------------------------------------------------------
QEMU=$CACHE/qemu/usr/bin/qemu-aarch64
if [ ! -x "$QEMU" ]; then
  log "qemu-user from Debian trixie"
  rm -rf "$CACHE/qemu" "$CACHE/apt/trixie-amd64/cache/archives"
  apt_private trixie-amd64 trixie amd64 update >/dev/null
  (cd "$CACHE" && mkdir -p qemu-deb && cd qemu-deb && rm -f ./*.deb &&
     APT_CONFIG=$CACHE/apt/trixie-amd64/apt.conf apt-get -q download qemu-user >/dev/null)
  dpkg -x "$CACHE"/qemu-deb/qemu-user_*.deb "$CACHE/qemu"
  "$QEMU" --version | head -1 >&2
fi

# --- aarch64 Python packages: torch, its CUDA libraries, the test tools -------------------
SITE=$CACHE/site
WHEELS=$CACHE/wheels
pip_nearest() {  # pip_nearest <name> <pin>: the pin, else the newest release of its major after it
  # Not an older one: nccl 2.27.7 (older than torch's 2.29.7) lacks ncclCommResume, which
  # libtorch_cuda.so links; a newer release of the same major keeps the symbols of the pin.
  local name=$1 pin=$2 major=${2%%.*}
  for spec in "$name==$pin" "$name>$pin,<$((major + 1))"; do
    if python3 -m pip download -q --no-deps "${PIP_PLATFORM[@]}" -d "$WHEELS" "$spec" 2>/dev/null; then
      [ "$spec" = "$name==$pin" ] || log "$name: no aarch64 wheel of $pin; took $spec"
      return 0
    fi
  done
  log "$name: no aarch64 wheel of $pin or newer in major $major"; return 1
}
# What the suite imports besides torch (pure Python or aarch64 wheels), resolved by pip.
TEST_PACKAGES="kernels==0.17.2 kernel-abi-check==0.14.1 numpy pytest filelock typing-extensions sympy networkx jinja2 fsspec setuptools"
if [ "$(cat "$SITE/.done" 2>/dev/null)" != "torch==$TORCH_VERSION $TEST_PACKAGES" ]; then
  rm -rf "$SITE"; mkdir -p "$WHEELS"  # pip download keeps what is already there
  log "aarch64 torch $TORCH_VERSION and the nvidia-* libraries it links (PyPI)"
  python3 -m pip download -q --no-deps "${PIP_PLATFORM[@]}" -d "$WHEELS" "torch==$TORCH_VERSION"
  # torch 2.13.0's pins (its Requires-Dist and cuda-toolkit 13.0.3's), for the libraries
  # libtorch_cuda.so and libtorch_python.so link (NEEDED). CUPTI: the stand-in below.
  while read -r name pin; do
    pip_nearest "$name" "$pin"
  done <<'EOF'
nvidia-cuda-runtime 13.0.96
nvidia-cublas 13.1.1.3
nvidia-cuda-nvrtc 13.0.88
nvidia-cufft 12.0.0.61
nvidia-cufile 1.15.1.6
nvidia-curand 10.4.0.35
nvidia-cusparse 12.6.3.3
nvidia-nvjitlink 13.0.88
nvidia-cudnn-cu13 9.20.0.48
nvidia-cusparselt-cu13 0.8.1
nvidia-nccl-cu13 2.29.7
nvidia-nvshmem-cu13 3.4.5
EOF
  # shellcheck disable=SC2086
  python3 -m pip download -q "${PIP_PLATFORM[@]}" -d "$WHEELS" $TEST_PACKAGES
  python3 -m pip install -q --no-deps --no-index "${PIP_PLATFORM[@]}" --target "$SITE" "$WHEELS"/*.whl
  rm -rf "$WHEELS"  # gigabytes, all unpacked in $SITE now
  echo "torch==$TORCH_VERSION $TEST_PACKAGES" >"$SITE/.done"
fi
TORCH_LIB=$SITE/torch/lib
NVIDIA_LIB=$SITE/nvidia/cu13/lib

# TEST SCAFFOLDING, never shipped: the stand-in libcupti.so.13 (see the top of this file).
CUPTI=$SITE/nvidia/cu13/lib/libcupti.so.13
if [ ! -f "$CUPTI" ]; then
  log "stand-in libcupti.so.13 (test scaffolding)"
  stub=$CACHE/cupti-stub; mkdir -p "$stub"
  symbols=$(aarch64-linux-gnu-readelf --dyn-syms -W "$TORCH_LIB/libtorch_cpu.so" |
            awk '$7 == "UND" && $8 ~ /@libcupti\.so\.13/ { sub(/@.*/, "", $8); print $8 }' | sort -u)
  test -n "$symbols"
  {
    echo "/* Generated by scripts/toolchains/aarch64.sh: test scaffolding, never shipped. */"
    for s in $symbols; do echo "int $s(void) { return 999; /* CUPTI_ERROR_UNKNOWN */ }"; done
  } >"$stub/cupti_stub.c"
  echo "libcupti.so.13 { global: *; };" >"$stub/cupti.map"
  aarch64-linux-gnu-gcc -shared -fPIC -O1 -Wl,-soname,libcupti.so.13 -Wl,--version-script="$stub/cupti.map" \
    "$stub/cupti_stub.c" -o "$CUPTI"
fi

# --- a private nvcc TOP for -ccbin aarch64-linux-gnu-g++ -----------------------------------
# nvcc cross-compiling for aarch64 looks for $TOP/targets/aarch64-linux/{include,lib}, TOP
# being the folder above the nvcc binary it runs from: a copy of bin/nvcc and nvcc.profile,
# the rest of bin/ as links. The headers are the machine's CUDA 13.0 ones (the same for
# every target); the library is the aarch64 libcudart.so.13 of nvidia-cuda-runtime. No
# aarch64 libcudadevrt is reachable, so device code is compiled with -c (whole-program) and
# linked by the aarch64 g++.
NVCC=$(command -v nvcc)
CUDA_REAL_TOP=$(nvcc -dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -1)
CUDA_REAL_TOP=$(cd "$CUDA_REAL_TOP" && pwd -P)
CUDA_TOP=$CACHE/cuda-top
if [ ! -x "$CUDA_TOP/bin/nvcc" ] || [ "$(cat "$CUDA_TOP/.from" 2>/dev/null)" != "$CUDA_REAL_TOP" ]; then
  log "private nvcc TOP over $CUDA_REAL_TOP"
  rm -rf "$CUDA_TOP"; mkdir -p "$CUDA_TOP/bin" "$CUDA_TOP/targets/aarch64-linux/lib"
  for f in "$CUDA_REAL_TOP"/bin/*; do ln -s "$f" "$CUDA_TOP/bin/"; done
  rm "$CUDA_TOP/bin/nvcc" "$CUDA_TOP/bin/nvcc.profile"
  cp "$CUDA_REAL_TOP/bin/nvcc" "$CUDA_REAL_TOP/bin/nvcc.profile" "$CUDA_TOP/bin/"
  for d in nvvm include; do [ -e "$CUDA_REAL_TOP/$d" ] && ln -s "$CUDA_REAL_TOP/$d" "$CUDA_TOP/$d"; done
  ln -s "$CUDA_REAL_TOP/targets/x86_64-linux/include" "$CUDA_TOP/targets/aarch64-linux/include"
  ln -s "$NVIDIA_LIB/libcudart.so.13" "$CUDA_TOP/targets/aarch64-linux/lib/libcudart.so.13"
  ln -s libcudart.so.13 "$CUDA_TOP/targets/aarch64-linux/lib/libcudart.so"
  echo "$CUDA_REAL_TOP" >"$CUDA_TOP/.from"
fi

# --- cuobjdump (x86_64), to read which cubins and PTX a built CUDA variant holds -----------
# The machine's CUDA 13.0 has no cuobjdump; PyPI's nvidia-cuda-cuobjdump has.
CUOBJDUMP=$CACHE/cuobjdump/nvidia/cu13/bin/cuobjdump
if [ ! -x "$CUOBJDUMP" ]; then
  python3 -m pip install -q --no-deps --only-binary=:all: --target "$CACHE/cuobjdump" "nvidia-cuda-cuobjdump>=13,<14"
  chmod +x "$CUOBJDUMP"  # a wheel keeps no file modes
fi

# --- the env file -------------------------------------------------------------------------
ENV_FILE=$CACHE/env.sh
cat >"$ENV_FILE" <<EOF
# Written by scripts/toolchains/aarch64.sh.
export AARCH64_CXX=aarch64-linux-gnu-g++
export AARCH64_TORCH_SITE=$SITE
export AARCH64_CUDA_TOP=$CUDA_TOP
export AARCH64_SYSROOT=$SYSROOT
export AARCH64_QEMU=$QEMU
export AARCH64_PYTHON=$CACHE/bin/python
export PATH=$(dirname "$CUOBJDUMP"):\$PATH  # tests/test_cuda_archs.py finds it there
EOF
# The emulated Python. binfmt_misc is not available here, so every aarch64 program is
  # started through qemu explicitly; sys.executable is this wrapper, so a subprocess that
  # runs sys.executable is emulated too. -cpu max: torch >= 2.10 on aarch64 needs LSE atomics.
  mkdir -p "$CACHE/bin" "$CACHE/emulation"
  cat >"$CACHE/bin/python" <<EOF
#!/bin/sh
# Written by scripts/toolchains/aarch64.sh: aarch64 Python $PY_TAG under qemu-user.
export AARCH64_PYTHON="\$0"
export PYTHONPATH="$CACHE/emulation:$SITE\${PYTHONPATH:+:\$PYTHONPATH}"
exec "$QEMU" -cpu max -L "$SYSROOT" "$SYSROOT/usr/bin/python$PY_TAG" "\$@"
EOF
  # The emulated sys.executable is the aarch64 binary, which this x86_64 kernel cannot
  # exec: point it at the wrapper, so that subprocesses are emulated too.
  cat >"$CACHE/emulation/sitecustomize.py" <<'EOF'
import os
import sys

sys.executable = os.environ.get("AARCH64_PYTHON", sys.executable)
EOF
chmod +x "$CACHE/bin/python"
echo "$ENV_FILE"
