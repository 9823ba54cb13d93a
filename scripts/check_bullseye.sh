#!/usr/bin/env bash
# manylinux_2_28 at load time, not only in the symbol tables: the x86_64 compiled variants of a
# staged snapshot in a Debian 11 (bullseye) root, glibc 2.31, the oldest glibc Debian's
# registry still serves (buster's 2.28 is gone from it; 2.28 itself is checked statically
# only, tests/test_package.py). Logs in results/portability/bullseye/.
#
#   scripts/check_bullseye.sh SNAPSHOT     # e.g. relu-build/ from scripts/release.sh
#
# Everything runs inside the root (chroot: needs root, as debootstrap does):
#   1. `ldd -r` on each x86_64 compiled variant's binary, with torch's libraries on the
#      library path: every library and every symbol version must be found and every symbol
#      bound, but the Python C API's (the interpreter provides those). cu124 gets its
#      libcudart.so.12 from scripts/toolchains/cuda12.sh, as on a CUDA 12 torch.
#   2. the suite's contract, package and release tests on the snapshot (RELU_TEST_PREBUILT)
#      under a Python 3.11 built in the root by bullseye's gcc 10 (bullseye's own Python is
#      3.9, which torch >= 2.11 no longer supports), with the release venv's packages (torch
#      2.14.1+cu130, kernels, pytest: manylinux wheels, cp311) on PYTHONPATH: the cpu and cu130
#      variants on CPU tensors, then cu124 as a CUDA 12 torch picks it and torch-xpu as an XPU
#      torch does (tests/kernels_sees_cuda), as scripts/release.sh runs them.
#
# What comes from where, fetched on first use and cached in .cache/toolchains/bullseye/:
#   - the root: `debootstrap --variant=minbase bullseye` (Debian's registry; Release
#     signature checked against the machine's Debian archive keyring), debootstrap installed
#     with apt when missing; then bullseye's gcc, make and the -dev packages CPython's build
#     needs, with apt inside the root;
#   - CPython 3.11: the source of Debian bookworm's python3.11 (`apt-get source`, its hashes
#     checked against bookworm's signed Sources index), upstream's tarball without Debian's
#     packaging, built with ./configure && make (no PGO: minutes, not an hour);
#   - torch and the rest: the release venv's site-packages ($RELU_BULLSEYE_VENV, default
#     .venv-release), hard-linked into the root (no copy of its gigabytes).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
SNAPSHOT=$(cd "$1" && pwd)
VENV=${RELU_BULLSEYE_VENV:-.venv-release}
SITE=$(cd "$VENV" && "$PWD/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
CACHE=$PWD/.cache/toolchains/bullseye
ROOTFS=$CACHE/root
RESULTS=${RELU_BULLSEYE_RESULTS:-results/portability/bullseye}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MIRROR=http://deb.debian.org/debian
PY_VERSION=3.11                      # the release venv's: its cp311 wheels
log() { echo "check_bullseye: $*" >&2; }
in_root() { chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
mkdir -p "$CACHE" "$RESULTS"

# --- the root --------------------------------------------------------------------------------
if [ ! -f "$ROOTFS/.done" ]; then
  command -v debootstrap >/dev/null || {
    log "installing debootstrap (Debian)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  log "debootstrap bullseye into $ROOTFS"
  rm -rf "$ROOTFS"
  debootstrap --variant=minbase --keyring="$KEYRING" bullseye "$ROOTFS" "$MIRROR" >"$CACHE/debootstrap.log"
  touch "$ROOTFS/.done"
fi
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"  # apt inside the root reaches the registry by name
# torch reads /proc (CPU count, its own maps); unmounted on the way out.
if ! mountpoint -q "$ROOTFS/proc"; then
  mount -t proc proc "$ROOTFS/proc"
  trap 'umount "$ROOTFS/proc"' EXIT
fi

# --- CPython 3.11, built in the root ------------------------------------------------------
PYTHON=/opt/python$PY_VERSION/bin/python$PY_VERSION
if [ ! -x "$ROOTFS$PYTHON" ]; then
  log "CPython $PY_VERSION from Debian bookworm's source package, built by bullseye's gcc"
  echo "deb-src $MIRROR bookworm main" >"$ROOTFS/etc/apt/sources.list.d/bookworm-src.list"
  in_root apt-get -q update >/dev/null
  in_root env DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends \
    gcc make libc6-dev libffi-dev zlib1g-dev libbz2-dev liblzma-dev libssl-dev uuid-dev xz-utils >/dev/null
  in_root sh -c "rm -rf /opt/src && mkdir -p /opt/src && cd /opt/src &&
    apt-get -q source --download-only python$PY_VERSION >/dev/null && tar -xf python${PY_VERSION}_*.orig.tar.*"
  in_root sh -c "cd /opt/src/Python-$PY_VERSION.* && ./configure -q --prefix=/opt/python$PY_VERSION --without-ensurepip &&
    make -s -j$(nproc) >/dev/null 2>&1 && make -s install >/dev/null 2>&1"
  rm -rf "$ROOTFS/opt/src"
  in_root "$PYTHON" -c "import ctypes, zlib, bz2, lzma, ssl, sqlite3" 2>/dev/null ||
    in_root "$PYTHON" -c "import ctypes, zlib, bz2, lzma, ssl"
fi

# --- what runs there: the release venv's packages, the CUDA 12 runtime, this tree, the snapshot
rm -rf "$ROOTFS/opt/site" "$ROOTFS/opt/cuda12" "$ROOTFS/opt/relu"
mkdir -p "$ROOTFS/opt/site" "$ROOTFS/opt/cuda12" "$ROOTFS/opt/relu"
cp -al "$SITE"/. "$ROOTFS/opt/site/" 2>/dev/null || cp -a "$SITE"/. "$ROOTFS/opt/site/"
cp -a "$(scripts/toolchains/cuda12.sh)"/lib64/libcudart.so.12* "$ROOTFS/opt/cuda12/"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$ROOTFS/opt/relu"
cp -a "$SNAPSHOT" "$ROOTFS/opt/relu/relu-build"
TORCH_LIBS=/opt/site/torch/lib:$(cd "$ROOTFS" && ls -d opt/site/nvidia/*/lib | sed 's#^#/#' | paste -sd:)

# --- 1. ldd -r ------------------------------------------------------------------------------
status=0
{ echo "# $(date -u +%FT%TZ) Debian $(cat "$ROOTFS/etc/debian_version") root, $(in_root ldd --version | head -1)"
  echo "# torch's libraries: $VENV's ($(in_root env PYTHONPATH=/opt/site "$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo 'torch not importable'))"
} >"$RESULTS/ldd.log"
for variant in "$SNAPSHOT"/build/*-x86_64-linux; do
  so=$(cd "$variant" && ls ./*.abi3.so); so=/opt/relu/relu-build/build/$(basename "$variant")/${so#./}
  libs=$TORCH_LIBS
  [[ $variant == *-cu12* ]] && libs=/opt/cuda12:$libs
  out=$(in_root env LD_LIBRARY_PATH="$libs" ldd -r "$so" 2>&1) || true
  # The Python C API is the interpreter's: undefined in any extension until Python loads it.
  problems=$(grep -E "not found|undefined symbol|error" <<<"$out" | grep -vE "undefined symbol: _?Py[A-Za-z0-9_]*\b" || true)
  verdict=$([ -z "$problems" ] && echo "ok: every library, version and symbol resolved" || echo "FAILED")
  { echo; echo "## $(basename "$variant"): $verdict"; echo "\$ LD_LIBRARY_PATH=$libs ldd -r $so"; echo "$out"; } >>"$RESULTS/ldd.log"
  echo "$(basename "$variant"): $verdict"
  [ -z "$problems" ] || { echo "$problems" >&2; status=1; }
done

# --- 2. the tests under Python 3.11 in the root ---------------------------------------------
TESTS=(tests/test_contract.py tests/test_package.py tests/test_release.py)
run_tests() {  # run_tests <log> <env...> -- <pytest args>
  local log=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  { echo "# $(date -u +%FT%TZ) in the bullseye root: ${envs[*]} python$PY_VERSION -m pytest $*"; } >"$log"
  in_root env PYTHONPATH=/opt/site HF_HUB_OFFLINE=1 RELU_TEST_PREBUILT=/opt/relu/relu-build "${envs[@]}" \
    sh -c 'cd /opt/relu && exec "$0" -m pytest -p no:cacheprovider "$@"' "$PYTHON" "$@" >>"$log" 2>&1
}
for pass in main cu124 xpu; do
  case $pass in
    main) args=(-- -q "${TESTS[@]}") ;;
    cu124) args=(PYTHONPATH=/opt/relu/tests/kernels_sees_cuda:/opt/site RELU_TEST_KERNELS_CUDA=12.4
                 LD_LIBRARY_PATH=/opt/cuda12 -- -q tests/test_package.py tests/test_release.py) ;;
    xpu) args=(PYTHONPATH=/opt/relu/tests/kernels_sees_cuda:/opt/site RELU_TEST_KERNELS_XPU=2026.1
               -- -q -k xpu-variant-on-cpu "${TESTS[@]}") ;;
  esac
  pass_status=0
  run_tests "$RESULTS/tests-$pass.log" "${args[@]}" || pass_status=$?
  echo "exit $pass_status" >>"$RESULTS/tests-$pass.log"
  echo "tests ($pass): $(tail -2 "$RESULTS/tests-$pass.log" | head -1)"
  [ "$pass_status" -eq 0 ] || status=1
done
exit "$status"
