"""Compiles the CUDA build's translation units without a GPU, so a CUDA compile error cannot
land on a machine that never runs CUDA (CI):

  - every .cu file of build.toml's CUDA kernels, with nvcc, for every arch kernel-builder
    builds from its `cuda-capabilities` with that nvcc (scripts/cuda_archs.py), as
    torch.utils.cpp_extension would (its nvcc flags, C++20);
  - torch-ext's .cpp files with -DCUDA_KERNEL (the binding's CUDA branch), with the host
    compiler;
  - then reads the sm_90 PTX that nvcc kept and requires 16-byte global loads and stores
    (ld.global*.v4 / st.global*.v4, or .v2 of 64-bit words) in every vector kernel (the dense
    one and the strided row kernel for rows of unit stride);
  - and the objects' undefined symbols: no cudaSetDevice (which creates a primary context on
    the device it restores), the device changed only through torch's guard
    (aoti_torch_create_device_guard: c10::DeviceGuard, which restores with MaybeSetDevice).

Against the headers of a CUDA torch wheel (the CPU wheel lacks c10/cuda's generated
cuda_cmake_macros.h): `pip download torch==<TORCH_HEADERS_VERSION> --no-deps`, of which only
torch/include is unpacked, once, into .torch-cuda-headers/ (ignored by git).

    python scripts/check_cuda_compile.py        exit 0: all compiled; 1: an error (printed);
                                                77: no nvcc on this machine (nothing checked)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
import zipfile
from pathlib import Path

from packaging.version import Version

from cuda_archs import gencode, variant_archs

ROOT = Path(__file__).resolve().parent.parent
TORCH_HEADERS_VERSION = "2.14.1"  # a CUDA 13.0 build on PyPI, as nvcc 13.0 here
HEADERS_DIR = ROOT / ".torch-cuda-headers"
WORK_DIR = ROOT / ".cache" / "cuda-compile"
EXIT_NO_NVCC = 77

# torch.utils.cpp_extension's COMMON_NVCC_FLAGS (torch 2.13), written out so the check does
# not depend on which torch is installed here.
NVCC_FLAGS = [
    "-D__CUDA_NO_HALF_OPERATORS__",
    "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__",
    "--expt-relaxed-constexpr",
]
COMMON_FLAGS = ["-DCUDA_KERNEL", "-DPy_LIMITED_API=0x03090000", "-D_GLIBCXX_USE_CXX11_ABI=1",
                "-DTORCH_EXTENSION_NAME=_relu_cuda_compile_check", "-std=c++20", "-O3"]


def find_nvcc() -> str | None:
    for candidate in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if candidate and (Path(candidate) / "bin" / "nvcc").exists():
            return str(Path(candidate) / "bin" / "nvcc")
    return shutil.which("nvcc")


def torch_cuda_headers() -> Path:
    include = HEADERS_DIR / "torch" / "include"
    stamp = HEADERS_DIR / f"complete-{TORCH_HEADERS_VERSION}"
    if stamp.exists():
        return include
    shutil.rmtree(HEADERS_DIR, ignore_errors=True)
    with tempfile.TemporaryDirectory() as download:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "-d", download, f"torch=={TORCH_HEADERS_VERSION}"], check=True)
        wheel = next(Path(download).glob("torch-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.namelist() if m.startswith("torch/include/")]
            archive.extractall(HEADERS_DIR, members)
    if not (include / "c10" / "cuda" / "impl" / "cuda_cmake_macros.h").exists():
        sys.exit(f"torch=={TORCH_HEADERS_VERSION} from pip is not a CUDA build (no cuda_cmake_macros.h)")
    stamp.write_text("")
    return include


def nvcc_version(nvcc: str) -> Version:
    banner = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
    return Version(re.search(r"release (\d+\.\d+)", banner).group(1))


def cuda_kernels(config: dict, cuda: Version) -> tuple[list[str], list[Path]]:
    archs, sources = [], []
    for kernel in config["kernel"].values():
        if kernel["backend"] == "cuda":
            archs += [a for a in variant_archs(kernel["cuda-capabilities"], cuda) if a not in archs]
            sources += [ROOT / s for s in kernel["src"] if s.endswith(".cu")]
    return archs, sources


def run(command: list[str], what: str) -> bool:
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # torch's own headers trip nvcc warning 3189 ("module" parsed as an identifier): noise.
    output = "\n".join(line for line in done.stdout.splitlines() if line.strip())
    if done.returncode != 0:
        print(f"FAILED: {what}\n{' '.join(command)}\n{output}")
        return False
    print(f"ok: {what}")
    return True


def is_vector_kernel(mangled: str) -> bool:
    """elementwise_vector16, and strided_rows for rows of unit stride (its bool template
    argument kUnitStrides = true mangles as Lb1E)."""
    return "elementwise_vector16" in mangled or ("strided_rows" in mangled and "Lb1E" in mangled)


def check_vector_accesses(ptx_dir: Path) -> bool:
    """Every vector kernel must move 16 bytes per global access."""
    ok = True
    entries = 0
    for ptx in sorted(ptx_dir.glob("*.ptx")):
        if "sm_90" not in ptx.name and "compute_90" not in ptx.name:
            continue
        text = ptx.read_text()
        # An entry runs to the next one: inline asm (cuda_fp16.h's __hmax2) puts lone "}" lines
        # inside a body, so its closing brace cannot end it.
        for match in re.finditer(r"\.entry\s+(\S+)\(.*?(?=\.entry\s|\Z)", text, flags=re.S):
            name, body = match.group(1), match.group(0)
            if not is_vector_kernel(name):
                continue
            entries += 1
            wide = r"\.(v4\.[bsuf]32|v2\.[bsuf]64)"
            if not re.search(r"ld\.global[.\w]*" + wide, body) or not re.search(r"st\.global[.\w]*" + wide, body):
                print(f"FAILED: {name} has no 16-byte global load or store in its sm_90 PTX")
                ok = False
    if entries == 0:
        print("FAILED: no vector kernel found in the sm_90 PTX")
        return False
    if ok:
        print(f"ok: 16-byte ld.global/st.global in all {entries} vector kernels (sm_90 PTX)")
        kernels = sum(len(re.findall(r"^\.visible \.entry ", p.read_text(), flags=re.M))
                      for p in ptx_dir.glob("*.ptx") if "sm_90" in p.name or "compute_90" in p.name)
        print(f"   {kernels} __global__ kernels per arch (sm_90 PTX)")
    return ok


def check_device_changes(objects: list[Path]) -> bool:
    """The CUDA objects change the current device only through torch's stable DeviceGuard."""
    undefined: set[str] = set()
    for obj in objects:
        listed = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True, check=True).stdout
        undefined |= {line.split()[-1] for line in listed.splitlines() if line.strip()}
    if "cudaSetDevice" in undefined:
        print("FAILED: the CUDA objects call cudaSetDevice, which creates a primary context on the "
              "device it sets: change devices through torch's DeviceGuard")
        return False
    if "aoti_torch_create_device_guard" not in undefined:
        print("FAILED: the CUDA objects do not use torch's DeviceGuard (aoti_torch_create_device_guard)")
        return False
    print("ok: the device is changed only through torch's DeviceGuard (no cudaSetDevice)")
    return True


def main() -> int:
    nvcc = find_nvcc()
    if nvcc is None:
        print("no nvcc on this machine: CUDA compile check not run")
        return EXIT_NO_NVCC
    with open(ROOT / "build.toml", "rb") as f:
        config = tomllib.load(f)
    archs, cu_sources = cuda_kernels(config, nvcc_version(nvcc))
    include = torch_cuda_headers()
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "scripts"))
    from build_variant import REGISTRATION_H  # the header the real build generates

    (WORK_DIR / "registration.h").write_text(REGISTRATION_H)
    includes = [f"-I{ROOT}", f"-I{WORK_DIR}", f"-I{include}", f"-I{include / 'torch' / 'csrc' / 'api' / 'include'}",
                f"-I{sysconfig.get_paths()['include']}"]
    gencodes = [gencode(a) for a in archs]
    ok = True
    for source in cu_sources:
        keep = WORK_DIR / f"{source.stem}-intermediates"
        shutil.rmtree(keep, ignore_errors=True)
        keep.mkdir()
        ok &= run([nvcc, "-c", str(source), "-o", str(WORK_DIR / f"{source.stem}.o"), *COMMON_FLAGS, *NVCC_FLAGS,
                   "-Xcompiler", "-fPIC", "-diag-suppress=3189", f"--threads={os.cpu_count() or 1}",
                   "-keep", f"-keep-dir={keep}", *gencodes, *includes],
                  f"nvcc {source.relative_to(ROOT)} for sm {', '.join(archs)}")
        if ok:
            ok &= check_vector_accesses(keep)
    if ok:
        ok &= check_device_changes([WORK_DIR / f"{source.stem}.o" for source in cu_sources])
    host_cxx = os.environ.get("CXX", "c++")
    for source in config["torch"]["src"]:
        if source.endswith(".cpp"):
            ok &= run([host_cxx, "-c", str(ROOT / source), "-o", str(WORK_DIR / (Path(source).stem + ".o")),
                       *COMMON_FLAGS, "-fPIC", "-fno-gnu-unique", *includes],
                      f"{host_cxx} -DCUDA_KERNEL {source}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
