#!/usr/bin/env bash
# A CUDA 12.4 toolkit for building the cu124 variant on a machine without one, fetched from
# Debian 13 (trixie), whose non-free section carries NVIDIA's CUDA 12.4.131 (PyPI's CUDA 12
# wheels have ptxas and libnvvm but no nvcc). Prints the toolkit's root, to be CUDA_HOME:
#
#   CUDA_HOME=$(scripts/toolchains/cuda12.sh) python scripts/build_variant.py --backend cuda
#
# The machine's apt setup is never read or written: packages are fetched with
# `apt-get download` against a private sources list, state and cache under
# .cache/toolchains/apt-trixie/, and unpacked with dpkg-deb into .cache/toolchains/cuda-12.4/
# (nothing is installed, no root needed). apt checks the archive's InRelease signature with
# the machine's Debian archive keyring (signed-by, never trusted=yes) and every .deb against
# the hashes of the signed package lists; an unsigned or tampered archive stops the script.
# A second run finds the finished toolkit and prints its root at once.
#
# Host compiler: the machine's gcc/g++ (12 here; CUDA 12.4 supports gcc up to 13). Debian's
# bin/gcc and bin/g++ wrappers, which insist on g++-13, are left out so nvcc finds PATH's.
set -euo pipefail
cd "$(dirname "$0")/../.."
CUDA_RELEASE=12.4
TOOLCHAINS=$PWD/.cache/toolchains
PREFIX=$TOOLCHAINS/cuda-$CUDA_RELEASE
APT_DIR=$TOOLCHAINS/apt-trixie
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# nvcc, cicc, ptxas, fatbinary, nvlink, cudafe++ (toolkit); headers, libcudart.so and
# libcudadevrt.a (dev); libcudart.so.12 (runtime); the CCCL headers (cuda/std, cub, thrust)
# that torch's and cuda_runtime's headers include. libnvvm4 is not needed: cicc carries NVVM.
PACKAGES=(nvidia-cuda-toolkit nvidia-cuda-dev libcudart12 libcu++-dev libcub-dev libthrust-dev)

if [ -x "$PREFIX/bin/nvcc" ] && [ -f "$PREFIX/MANIFEST" ]; then
  echo "$PREFIX"
  exit 0
fi
[ -r "$KEYRING" ] || { echo "cuda12.sh: no Debian archive keyring at $KEYRING (package debian-archive-keyring)" >&2; exit 1; }
for tool in apt-get dpkg-deb; do
  command -v $tool > /dev/null || { echo "cuda12.sh: needs $tool (a Debian or Ubuntu machine)" >&2; exit 1; }
done

mkdir -p "$APT_DIR"/{etc/empty,state/lists/partial,cache/archives/partial,debs}
cat > "$APT_DIR/etc/sources.list" <<SOURCES
deb [arch=amd64 signed-by=$KEYRING] http://deb.debian.org/debian trixie main non-free
SOURCES
: > "$APT_DIR/state/status"  # no installed packages: dependencies are not resolved here
apt_options=(
  -o Dir::Etc::SourceList="$APT_DIR/etc/sources.list" -o Dir::Etc::SourceParts="$APT_DIR/etc/empty"
  -o Dir::Etc::Preferences="$APT_DIR/etc/empty/none" -o Dir::Etc::PreferencesParts="$APT_DIR/etc/empty"
  -o Dir::State="$APT_DIR/state" -o Dir::State::status="$APT_DIR/state/status"
  -o Dir::Cache="$APT_DIR/cache" -o APT::Architecture=amd64 -o APT::Architectures=amd64
  -o Acquire::AllowInsecureRepositories=false -o Acquire::AllowDowngradeToInsecureRepositories=false
  # The private directories belong to the caller; apt's _apt sandbox user may not reach them.
  -o APT::Sandbox::User="$(id -un)"
)
echo "cuda12.sh: fetching the signed package lists of Debian trixie" >&2
apt-get "${apt_options[@]}" -q update >&2
(cd "$APT_DIR/debs" && rm -f ./*.deb && apt-get "${apt_options[@]}" -q download "${PACKAGES[@]}" >&2)

staging=$PREFIX.partial
rm -rf "$staging" && mkdir -p "$staging/root"
for deb in "$APT_DIR"/debs/*.deb; do
  case $(basename "$deb") in
    # 2.5 GB unpacked, nearly all static libraries of cuBLAS, cuFFT, NPP...: keep the headers,
    # the CUDA runtime and the device runtime.
    nvidia-cuda-dev_*)
      dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$staging/root" --wildcards \
        './usr/include/*' './usr/lib/x86_64-linux-gnu/libcudart*' \
        './usr/lib/x86_64-linux-gnu/libcudadevrt.a' './usr/lib/x86_64-linux-gnu/libculibos.a' ;;
    *) dpkg-deb -x "$deb" "$staging/root" ;;
  esac
done

# The layout torch.utils.cpp_extension and nvcc expect of a CUDA_HOME: bin/, include/,
# lib64/, nvvm/libdevice/.
root=$staging/root
mkdir -p "$staging/bin" "$staging/lib64" "$staging/nvvm"
mv "$root"/usr/lib/nvidia-cuda-toolkit/bin/{nvcc,cicc,crt} "$staging/bin/"
for tool in ptxas fatbinary nvlink cudafe++ bin2c cuobjdump nvdisasm nvprune cu++filt; do
  mv "$root/usr/bin/$tool" "$staging/bin/"
done
mv "$root/usr/include" "$staging/include"
mv "$root"/usr/lib/x86_64-linux-gnu/libcud* "$staging/lib64/"
mv "$root/usr/lib/nvidia-cuda-toolkit/libdevice" "$staging/nvvm/libdevice"
# NVIDIA's own profile shape, relative to the nvcc binary (_HERE_): the toolkit can move.
cat > "$staging/bin/nvcc.profile" <<'PROFILE'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
PATH            += $(TOP)/bin:
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
PROFILE
rm -rf "$root"

release=$("$staging/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\.[0-9]*\).*/\1/p')
[ "$release" = "$CUDA_RELEASE" ] || { echo "cuda12.sh: trixie's nvcc is CUDA $release, not $CUDA_RELEASE" >&2; exit 1; }
{ echo "CUDA $CUDA_RELEASE from Debian trixie, fetched $(date -u +%Y-%m-%dT%H:%MZ)"
  for deb in "$APT_DIR"/debs/*.deb; do
    echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) sha256:$(sha256sum "$deb" | cut -d' ' -f1)"
  done
} > "$staging/MANIFEST"
rm -f "$APT_DIR"/debs/*.deb  # 1 GB; the manifest keeps their versions and hashes
rm -rf "$PREFIX" && mv "$staging" "$PREFIX"
echo "$PREFIX"
