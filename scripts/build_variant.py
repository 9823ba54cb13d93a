"""Build this checkout's kernel for the running torch into build/<variant>/, the layout
kernel-builder produces (see docs/build.md), without Nix.

    python scripts/build_variant.py [--backend cpu|cuda] [--cuda-archs 9.0 ...]
                                    [--cuda-toolchain scripts/toolchains/cuda12.sh]
    python scripts/build_variant.py --target aarch64 [--backend cpu|cuda] ...   # cross-build
    python scripts/build_variant.py --noarch [--backend cpu|cuda|xpu]  (build/torch-<backend>)

What comes from where:
  - what to compile: build.toml, validated by kernels' own parser (kernels._rust.Build);
  - the variant name: kernels' own variant types, and kernels' resolver must accept it on
    the system it is built for (this torch, the variant's own backend: a cu124 variant built
    under a CUDA 13 torch is judged as on a CUDA 12.4 one; an aarch64 variant as on an
    aarch64 machine with the aarch64 torch it is built against), or the build stops;
  - the CUDA archs: kernel-builder's rule over build.toml's cuda-capabilities for the CUDA
    version of the nvcc that compiles (scripts/cuda_archs.py);
  - compiling and linking: torch.utils.cpp_extension (ninja; unchanged sources rebuild in
    seconds); for --target aarch64, the aarch64 toolchain of scripts/toolchains/aarch64.sh
    (aarch64-linux-gnu-g++ against aarch64 torch's headers and libraries, nvcc with that g++
    as host compiler), called directly;
  - the digest in metadata.json: kernels._rust.Digest.hash_variant.

--noarch stages kernel-builder's noarch variant of a backend instead (what a [torch-noarch]
project builds): the same Python package, no binary, and an _ops.py that registers the ops
from Python (torch-ext/relu/_noarch.py: Triton on CUDA tensors, torch ops on CPU tensors;
for xpu, torch ops).

Every compiled variant links scripts/toolchains/manylinux_2_28.cpp, so that a build on this
machine's glibc runs on glibc 2.28 (docs/build.md, "glibc"); metadata.json carries the
source commit and kernels-minver (docs/build.md, "metadata.json").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from cuda_archs import base_arch, gencode, variant_archs

ROOT = Path(__file__).resolve().parent.parent

# kernel-builder's registration.h: TORCH_LIBRARY under a macro name, and an empty Python
# module so that `from . import <id>` loads the library.
REGISTRATION_H = """\
#pragma once

#include <Python.h>

#define _CONCAT(A, B) A##B
#define CONCAT(A, B) _CONCAT(A, B)

#define _STRINGIFY(A) #A
#define STRINGIFY(A) _STRINGIFY(A)

#define TORCH_LIBRARY_EXPAND(NAME, MODULE) TORCH_LIBRARY(NAME, MODULE)

#define TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE) TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)

#define STABLE_TORCH_LIBRARY_EXPAND(NAME, MODULE) STABLE_TORCH_LIBRARY(NAME, MODULE)

#define STABLE_TORCH_LIBRARY_IMPL_EXPAND(NAME, DEVICE, MODULE) \
  STABLE_TORCH_LIBRARY_IMPL(NAME, DEVICE, MODULE)

#define REGISTER_EXTENSION(NAME)                                               \\
  PyMODINIT_FUNC CONCAT(PyInit_, NAME)() {                                     \\
    static struct PyModuleDef module = {PyModuleDef_HEAD_INIT,                 \\
                                        STRINGIFY(NAME), nullptr, 0, nullptr}; \\
    return PyModule_Create(&module);                                           \\
  }
"""

OPS_PY = '''\
import torch
from . import {id}
ops = torch.ops.{id}


def add_op_namespace_prefix(op_name: str) -> str:
    """Prefix op by namespace."""
    return f"{id}::{{op_name}}"
'''

# A noarch variant's _ops.py: the ops come from Python (_noarch.py), not from a library.
NOARCH_OPS_PY = '''\
import torch
from ._noarch import eager_kernels, register_ops
ops = register_ops("{id}", "{backend}", "{dtype_table}")
eager = eager_kernels(ops, "{backend}")


def add_op_namespace_prefix(op_name: str) -> str:
    """Prefix op by namespace."""
    return f"{id}::{{op_name}}"
'''

DTYPE_TABLE_HEADER = ROOT / "relu-common" / "relu_dtypes.h"
DTYPE_ROW = re.compile(r'^\s*ROW\((\w+), (\w+), "(\w+)"\)', re.MULTILINE)


def dtype_table_text() -> str:
    """The text of the binding's dtype_table op ("float32=1,...,int8=0,..."), rendered from the
    header's one table for a noarch variant, which has no binary to ask: names in the table's
    order, "=1" where relu has a gradient (the header's kHasGradient: IEEE floats of 2 bytes
    or more). tests/test_package.py holds it equal to the compiled op's text."""
    import torch

    table = DTYPE_TABLE_HEADER.read_text().split("#define RELU_DTYPE_TABLE(ROW)", 1)[1].split("\n\n", 1)[0]
    rows = []
    for _, _, name in DTYPE_ROW.findall(table):
        dtype = getattr(torch, name)
        rows.append(f"{name}={int(dtype.is_floating_point and dtype.itemsize >= 2)}")
    return ",".join(rows)


# The modules of the Python package that only noarch variants use (a compiled variant's ops
# come from its library), and the one only the CUDA one does.
NOARCH_MODULES = ("_noarch*.py", "_triton.py")
TRITON_MODULE = "_triton.py"

# The compat package build/<variant>/<name>/: `sys.path.insert(0, <variant dir>); import
# <name>` lands here and loads the variant directory itself as the package.
COMPAT_INIT_PY = '''\
import importlib.util
import sys
from pathlib import Path

_variant_dir = Path(__file__).resolve().parent.parent
_package_name = "{id}_package"
_package = sys.modules.get(_package_name)
if _package is None:
    _spec = importlib.util.spec_from_file_location(
        _package_name, _variant_dir / "__init__.py", submodule_search_locations=[str(_variant_dir)]
    )
    _package = importlib.util.module_from_spec(_spec)
    sys.modules[_package_name] = _package
    _spec.loader.exec_module(_package)

globals().update({{_name: getattr(_package, _name) for _name in _package.__all__}})
__all__ = list(_package.__all__)
'''

# Python limited API of the oldest Python kernels supports; the .so is then `.abi3.so`.
PY_LIMITED_API = "0x03090000"

# manylinux_2_28 (glibc >= 2.28, torch's own wheels' floor) for a build on a newer glibc: a
# compat object linked into every compiled variant, and the link flags it works with. See
# docs/build.md ("glibc") and the file itself for why each symbol is handled as it is.
GLIBC_COMPAT_SOURCE = ROOT / "scripts" / "toolchains" / "manylinux_2_28.cpp"
GLIBC_COMPAT_LDFLAGS = [
    # Calls of these go to the compat object's __wrap_*, which call the base-version symbol.
    "-Wl,--wrap=dlsym", "-Wl,--wrap=pthread_once",
    # Where the base versions live before glibc 2.34 (since then libc.so.6 holds them too and
    # these are empty stubs): needed whether or not this glibc resolves anything from them.
    "-Wl,--no-as-needed", "-l:libdl.so.2", "-l:libpthread.so.0", "-Wl,--as-needed",
]


def read_build_toml() -> dict:
    from kernels._rust import Build

    Build.open(ROOT)  # raises on anything kernel-builder would reject
    with open(ROOT / "build.toml", "rb") as f:
        return tomllib.load(f)


def default_backend() -> str:
    import torch

    return "cuda" if torch.version.cuda else "cpu"


def stable_abi_version(config: dict, backend: str) -> Version | None:
    """The torch stable-ABI version build.toml's [torch.stable-abi] gives this backend, if any."""
    version = config["torch"].get("stable-abi", {}).get(backend)
    return Version(version) if version else None


def cuda_toolkit_root() -> str:
    """The toolkit nvcc belongs to, as nvcc itself reports it. torch guesses it from nvcc's
    directory, which misses lib/ (libcudart) where nvcc is a wrapper outside the toolkit (the
    dev machine's /usr/local/bin/nvcc)."""
    dry_run = subprocess.run(["nvcc", "-dryrun", "-c", "-x", "cu", os.devnull, "-o", os.devnull],
                             capture_output=True, text=True).stderr
    top = re.search(r"^#\$ TOP=(.+)$", dry_run, re.MULTILINE)
    return str(Path(top.group(1)).resolve()) if top else str(Path(shutil.which("nvcc")).parent.parent)


@dataclass(frozen=True)
class CrossToolchain:
    """A build for another machine: what scripts/toolchains/aarch64.sh provides, read from the
    AARCH64_* variables of the env file it prints."""

    machine: str  # the target's platform.machine()
    cxx: str  # its g++, also nvcc's host compiler
    torch_site: Path  # the target's torch, installed with pip --target: headers, libraries
    cuda_top: Path  # a private nvcc TOP holding targets/<machine>-linux/{include,lib}
    python_include: Path  # the target's Python headers (only the limited API is used)
    sysroot_include: Path  # for the multiarch pyconfig.h those headers include

    @classmethod
    def from_env(cls, machine: str) -> "CrossToolchain":
        try:
            sysroot = Path(os.environ["AARCH64_SYSROOT"])
            return cls(machine=machine, cxx=os.environ["AARCH64_CXX"],
                       torch_site=Path(os.environ["AARCH64_TORCH_SITE"]),
                       cuda_top=Path(os.environ["AARCH64_CUDA_TOP"]),
                       python_include=next((sysroot / "usr" / "include").glob("python3.*")),
                       sysroot_include=sysroot / "usr" / "include")
        except (KeyError, StopIteration):
            sys.exit(f"--target {machine}: source the env file that scripts/toolchains/aarch64.sh prints")

    @property
    def torch_version(self) -> Version:
        version_py = (self.torch_site / "torch" / "version.py").read_text()
        return Version(re.search(r"^__version__ = '([^']+)'", version_py, re.MULTILINE).group(1))

    @property
    def nvcc(self) -> Path:
        return self.cuda_top / "bin" / "nvcc"


def nvcc_version(nvcc: Path | None = None) -> Version:
    """The CUDA version a CUDA variant is named by: that of the nvcc compiling it (a cu130
    variant loads on every CUDA 13.x torch), not torch.version.cuda."""
    if nvcc is None:
        from torch.utils.cpp_extension import CUDA_HOME

        if CUDA_HOME is None:
            sys.exit("no CUDA toolkit found (nvcc): cannot build the cuda backend")
        nvcc = Path(CUDA_HOME) / "bin" / "nvcc"
    banner = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True, check=True).stdout
    release = re.search(r"release (\d+)\.(\d+)", banner)
    return Version(f"{release.group(1)}.{release.group(2)}")


def variant_name(config: dict, backend_name: str, cross: CrossToolchain | None = None) -> str:
    """The variant directory name, from kernels' own types. kernels' resolver must accept it
    for the system it is built for: this machine's torch and CPU with the variant's backend.
    That is this machine itself for the CI build; for a release build for another CUDA (cu124
    compiled under a CUDA 13 torch) it is the CUDA 12.4 system the variant serves, never this
    machine's CUDA; a cross build is named for, and judged on, its target and its target's
    torch."""
    import torch
    from kernels.backends import CPU, CUDA
    from kernels.variants import (Arch, ArchVariant, Torch, TorchStableAbi, VariantAccepted,
                                  _resolve_variant_for_system, parse_variant)

    torch_version = cross.torch_version if cross else Version(torch.__version__)
    stable = stable_abi_version(config, backend_name)
    if cross and stable is None:
        sys.exit(f"--target {cross.machine} builds stable-ABI backends only")  # no cxx11 flag to read
    if stable is not None:
        if (torch_version.major, torch_version.minor) < (stable.major, stable.minor):
            sys.exit(f"the stable-ABI {stable} build of {backend_name} needs torch >= {stable}")
        framework = TorchStableAbi(version=stable)
    else:
        framework = Torch(version=Version(f"{torch_version.major}.{torch_version.minor}"),
                          cxx11_abi=torch.compiled_with_cxx11_abi())
    nvcc = cross.nvcc if cross else None
    system_backend = {"cpu": CPU, "cuda": lambda: CUDA(version=nvcc_version(nvcc))}[backend_name]()
    machine = cross.machine if cross else platform.machine()
    variant = ArchVariant(
        framework=framework,
        arch=Arch(backend=system_backend, platform=machine, os="linux" if cross else platform.system().lower()),
    )
    name = variant.variant_str
    if parse_variant(name) != variant:
        sys.exit(f"kernels does not read {name} back as the variant built")
    # resolve_variant detects the system and has no parameter for it; the function it calls
    # takes the system explicitly.
    _, trace = _resolve_variant_for_system(
        [variant], selected_backend=system_backend, cpu=variant.arch.platform, os=variant.arch.os,
        torch_version=Version(f"{torch_version.major}.{torch_version.minor}"),
        torch_cxx11_abi=torch.compiled_with_cxx11_abi(), tvm_ffi_version=None)
    if not isinstance(trace[0], VariantAccepted):
        sys.exit(f"kernels would not load {name} on a torch {torch_version} "
                 f"{system_backend.variant_str} system: {trace[0].reason}")
    return name


def noarch_variant_name(backend_name: str) -> str:
    """torch-<backend>, from kernels' own types; kernels' resolver must accept it here when
    this machine runs that backend (any torch version: noarch variants carry no ABI)."""
    import torch
    from kernels.variants import (Noarch, NoarchVariant, TorchNoarch, VariantAccepted, parse_variant,
                                  resolve_variant)

    variant = NoarchVariant(framework=TorchNoarch(), arch=Noarch(backend_name=backend_name))
    name = variant.variant_str
    if parse_variant(name) != variant:
        sys.exit(f"kernels does not read {name} back as the variant staged")
    if backend_name == "cpu" or (backend_name == "cuda" and torch.version.cuda is not None):
        _, trace = resolve_variant([variant], backend=backend_name)
    elif backend_name == "xpu":
        # No XPU torch here: judged as on one (kernels' own resolver, the system given).
        from kernels.backends import XPU
        from kernels.variants import _resolve_variant_for_system

        _, trace = _resolve_variant_for_system(
            [variant], selected_backend=XPU(version=Version("2026.1")), cpu=platform.machine(), os="linux",
            torch_version=Version(torch.__version__.split("+")[0]), torch_cxx11_abi=True, tvm_ffi_version=None)
    else:
        return name
    if not isinstance(trace[0], VariantAccepted):
        sys.exit(f"kernels would not load {name} on a {backend_name} torch: {trace[0].reason}")
    return name


# metadata.json's kernels-minver: the oldest kernels release that loads the variant and
# passes its contract tests, found by trying older releases from PyPI (scripts/
# kernels_minver.sh; docs/build.md, "metadata.json"). kernels 0.14.1 does not read the
# torch-stable-abi names (it takes a noarch variant instead); it passes the noarch ones.
# 0.13.0 loads a second variant of the package in one process without its _ops module.
KERNELS_MINVER_COMPILED = "0.15.1"
KERNELS_MINVER_NOARCH = "0.14.1"

# provenance.kernel-builder.version: kernels requires one. No kernel-builder built this: the
# build is this source's own script, so the kernel's commit below identifies it too.
BUILDER = "none: scripts/build_variant.py of the kernel source"


# The kernel's source, as git pathspecs: what a variant is built from (build.toml, the backend
# folders, the Python package, this script and its toolchains) and the benchmarks shipped
# beside it. A change there makes a build dirty; the scripts' outputs (results/, ignored build
# folders), docs and tests are not the kernel's source.
SOURCE_PATHSPECS = ("build.toml", "flake.nix", ":(glob)relu-*/**", "torch-ext", "scripts/build_variant.py",
                    "scripts/cuda_archs.py", "scripts/toolchains", ":(glob)benchmarks/benchmark*.py")


def source_provenance(root: Path = ROOT) -> dict | None:
    """metadata.json's provenance: the checkout's commit, and whether the kernel's source
    (SOURCE_PATHSPECS) had changes not committed (tracked or untracked files, ignored ones
    aside), for which kernels warns on load. None outside a git checkout (a copied tree):
    kernels then knows no commit, as for any build of unknown source."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        dirty = bool(git("status", "--porcelain", "--untracked-files=normal", "--", *SOURCE_PATHSPECS).strip())
    except (OSError, subprocess.CalledProcessError):
        return None
    return {"kernel-builder": {"version": BUILDER}, "kernel": {"commit": commit, "dirty": dirty}}


def python_package(config: dict) -> Path:
    return ROOT / "torch-ext" / config["general"]["name"].replace("-", "_")


def sources_for(config: dict, backend: str) -> list[Path]:
    files = list(config["torch"]["src"])
    for kernel in config.get("kernel", {}).values():
        if kernel["backend"] == backend:
            files += kernel["src"]
    return [ROOT / f for f in files]


def cuda_archs(config: dict, requested: list[str] | None, nvcc: Path | None = None) -> list[str]:
    """The archs to compile, as metadata.json's backend.archs lists them: kernel-builder's
    for this nvcc (scripts/cuda_archs.py), or `requested`, each of whose base archs must be
    among those (a quicker build for one GPU, with or without +PTX)."""
    listed = next(k["cuda-capabilities"] for k in config["kernel"].values() if k["backend"] == "cuda")
    cuda = nvcc_version(nvcc)
    archs = variant_archs(listed, cuda)
    if requested is None:
        return archs
    unknown = sorted({base_arch(a) for a in requested} - {base_arch(a) for a in archs})
    if unknown:
        sys.exit(f"--cuda-archs {unknown}: a CUDA {cuda} build of build.toml's "
                 f"cuda-capabilities holds {archs} only")
    return requested


def source_uid(paths: list[Path], flags: list[str]) -> str:
    """Short content hash of sources and flags: the same sources give the same op namespace
    (so ninja rebuilds nothing), changed ones a new namespace (so two builds can share a
    process, as kernel-builder's git-revision uid allows)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    digest.update("\0".join(flags).encode())
    return digest.hexdigest()[:7]


def target_version_define(stable: Version) -> str:
    """kernel-builder's TORCH_TARGET_VERSION for a stable-ABI build: the stable headers then
    hide everything newer than that torch (2.11 -> 0x020b000000000000)."""
    return f"-DTORCH_TARGET_VERSION=0x{(stable.major << 56) | (stable.minor << 48):016x}"


def write_registration_h(object_dir: Path) -> None:
    object_dir.mkdir(parents=True, exist_ok=True)
    registration = object_dir / "registration.h"
    if not registration.exists() or registration.read_text() != REGISTRATION_H:
        registration.write_text(REGISTRATION_H)  # a fresh mtime would recompile everything


def common_defines(backend: str, stable: Version | None) -> list[str]:
    """The flags of every translation unit, host and device, native or cross."""
    backend_define = {"cpu": "-DCPU_KERNEL", "cuda": "-DCUDA_KERNEL"}[backend]
    # cpp_extension defines TORCH_API_INCLUDE_EXTENSION_H, which drags pybind11 into torch
    # headers and breaks the limited API; kernel-builder never defines it.
    common = [backend_define, f"-DPy_LIMITED_API={PY_LIMITED_API}", "-UTORCH_API_INCLUDE_EXTENSION_H"]
    if stable is not None:
        common.append(target_version_define(stable))
    return common


def language_standard(torch_version: Version) -> str:
    """kernel-builder's language standard: C++20 from torch 2.12, C++17 before."""
    return "-std=c++20" if (torch_version.major, torch_version.minor) >= (2, 12) else "-std=c++17"


def load_toolkit_cuda_runtime() -> None:
    """cpp_extension.load imports what it built. A variant for another CUDA major than this
    torch's (cu124 under a CUDA 13 torch) needs that major's libcudart.so.N, which this
    process lacks: load the toolkit's first, as a cu12x torch's process would have it (from
    nvidia-cuda-runtime-cu12). For this torch's own major, its runtime is already here."""
    import ctypes

    import torch
    from torch.utils.cpp_extension import CUDA_HOME

    major = nvcc_version().major
    if torch.version.cuda is not None and Version(torch.version.cuda).major != major:
        ctypes.CDLL(str(Path(CUDA_HOME) / "lib64" / f"libcudart.so.{major}"), mode=ctypes.RTLD_GLOBAL)


def compile_extension(ext_id: str, backend: str, sources: list[Path], archs: list[str],
                      stable: Version | None, object_dir: Path) -> Path:
    import torch
    from torch.utils import cpp_extension

    object_dir.mkdir(parents=True, exist_ok=True)
    # torch's build baton: a build that died, and on torch 2.14.1 a build that succeeded,
    # leaves it behind, and the next build of this variant would wait on it forever. Builds
    # of one variant are never run concurrently here (conftest, release.sh and h200 scripts
    # build each variant once, in turn).
    (object_dir / "lock").unlink(missing_ok=True)
    write_registration_h(object_dir)
    common = common_defines(backend, stable)
    standard = language_standard(Version(torch.__version__))
    # Unlike kernel-builder, no -fno-gnu-unique. It was dropped while chasing a crash on the
    # H200 image (g++ 13.3 compiled libstdc++'s number formatting into the extension; printing
    # an integer there crashed, b31d803:results/h200/run3/crash_backtrace.txt). Dropping it did not
    # fix the crash; error messages made of strings only did (torch_binding.cpp). The H200
    # results in b31d803:results/h200/final were built with these flags, so they stay until a GPU
    # run checks the build with -fno-gnu-unique restored.
    cflags = ["-O3", standard, *common]
    cuda_cflags = ["-O3", standard, "--threads=0", *common]
    if backend == "cuda":
        os.environ["TORCH_CUDA_ARCH_LIST"] = ";".join(archs)
        load_toolkit_cuda_runtime()
    cpp_extension.load(
        name=ext_id,
        sources=[str(s) for s in sources if s.suffix in (".cpp", ".cu")],
        extra_include_paths=[str(ROOT), str(object_dir)],
        extra_cflags=cflags,
        extra_cuda_cflags=cuda_cflags,
        # Only libraries the extension uses end up needed (not libtorch_python).
        extra_ldflags=["-Wl,--as-needed", *GLIBC_COMPAT_LDFLAGS],
        build_directory=str(object_dir),
        with_cuda=backend == "cuda",
        is_python_module=False,
        verbose=False,
    )
    del torch
    return object_dir / f"{ext_id}.so"


def cross_compile_extension(ext_id: str, backend: str, sources: list[Path], archs: list[str],
                            stable: Version | None, object_dir: Path, cross: CrossToolchain) -> Path:
    """The extension for another machine, with the flags cpp_extension gives a native build:
    host code by the target's g++ against the target torch's headers; CUDA code by nvcc with
    that g++ as host compiler, whole-program (-c: no device link, as no aarch64 libcudadevrt
    is reachable, and none is needed without relocatable device code); linked by the target's
    g++ against the target torch's libraries and its libcudart.so.13. ext_id hashes sources
    and flags, so an existing library of that name is this build."""
    from torch.utils.cpp_extension import COMMON_NVCC_FLAGS

    library = object_dir / f"{ext_id}.so"
    if library.exists():
        return library
    write_registration_h(object_dir)
    torch_include = cross.torch_site / "torch" / "include"
    flags = [f"-DTORCH_EXTENSION_NAME={ext_id}", f"-I{ROOT}", f"-I{object_dir}",
             "-isystem", str(torch_include), "-isystem", str(torch_include / "torch" / "csrc" / "api" / "include"),
             "-O3", language_standard(cross.torch_version), *common_defines(backend, stable)]
    # Python.h, for registration.h's module init (host code only; nvcc knows no -idirafter).
    # -idirafter: after the cross compiler's own libc headers, only the multiarch pyconfig.h
    # is taken from the sysroot.
    python_flags = ["-isystem", str(cross.python_include), "-idirafter", str(cross.sysroot_include)]
    objects = []
    for source in sources:
        if source.suffix not in (".cpp", ".cu"):
            continue
        obj = object_dir / f"{source.stem}.o"
        if source.suffix == ".cpp":
            command = [cross.cxx, "-fPIC", *flags, *python_flags, "-c", str(source), "-o", str(obj)]
        else:
            command = [str(cross.nvcc), "-ccbin", cross.cxx, *COMMON_NVCC_FLAGS, "-Xcompiler", "-fPIC",
                       *flags, "--threads=0", *map(gencode, archs), "-c", str(source), "-o", str(obj)]
        subprocess.run(command, check=True)
        objects.append(str(obj))
    torch_lib = cross.torch_site / "torch" / "lib"
    # Only libraries the extension uses end up needed, as for the native build; -rpath-link
    # lets ld follow torch's own NEEDED entries to the nvidia-* wheels.
    link = [cross.cxx, "-shared", *objects, "-Wl,--as-needed", *GLIBC_COMPAT_LDFLAGS,
            f"-L{torch_lib}", "-lc10", "-ltorch_cpu", "-ltorch",
            *(f"-Wl,-rpath-link,{lib}" for lib in sorted((cross.torch_site / "nvidia").glob("*/lib")))]
    if backend == "cuda":
        link += [f"-L{cross.cuda_top / 'targets' / f'{cross.machine}-linux' / 'lib'}",
                 "-lc10_cuda", "-ltorch_cuda", "-lcudart"]
    subprocess.run([*link, "-o", str(library)], check=True)
    return library


def write_variant(config: dict, ext_id: str, backend: str, library: Path | None, archs: list[str],
                  variant_dir: Path) -> None:
    """build/<variant>: the Python package, the library (None: a noarch variant, whose ops
    _noarch.py registers), _ops.py, the compat package and metadata.json."""
    from kernels._rust import Digest, DigestAlgorithm, Metadata

    name = config["general"]["name"]
    if variant_dir.exists():
        shutil.rmtree(variant_dir)  # a stale .so of an older namespace must not linger
    if library is not None:
        skipped = NOARCH_MODULES
    else:
        skipped = (TRITON_MODULE,) if backend != "cuda" else ()
    skipped = ("__pycache__", "*.pyc", *skipped)
    shutil.copytree(python_package(config), variant_dir, ignore=shutil.ignore_patterns(*skipped))
    if library is not None:
        shutil.copy2(library, variant_dir / f"{ext_id}.abi3.so")
    ops_py = OPS_PY if library is not None else NOARCH_OPS_PY
    dtype_table = dtype_table_text() if library is None else ""
    (variant_dir / "_ops.py").write_text(ops_py.format(id=ext_id, backend=backend, dtype_table=dtype_table))
    compat = variant_dir / name.replace("-", "_")
    compat.mkdir()
    (compat / "__init__.py").write_text(COMPAT_INIT_PY.format(id=ext_id))

    backend_info = {"type": backend}
    # A noarch CUDA variant lists no archs: Triton compiles for the GPU it finds, and kernels'
    # arch check (kernels/archs.py) passes a variant whose backend.archs is empty.
    if backend == "cuda" and archs:
        backend_info["archs"] = archs
    digest = Digest.hash_variant(DigestAlgorithm.SHA256, variant_dir)
    metadata = {
        "name": name,
        "id": ext_id,
        "version": config["general"]["version"],
        "kernels-minver": KERNELS_MINVER_COMPILED if library is not None else KERNELS_MINVER_NOARCH,
        "license": config["general"]["license"],
        "upstream": config["general"].get("upstream"),
        "source": config["general"].get("source"),
        "python-depends": config["general"].get("python-depends", []),
        "kernel-depends": [],
        "backend": backend_info,
        "digest": {"algorithm": str(digest.algorithm), "files": digest.files},
        "provenance": source_provenance(),
    }
    metadata_path = variant_dir / "metadata.json"
    metadata_path.write_text(json.dumps({k: v for k, v in metadata.items() if v is not None}, indent=2) + "\n")
    Metadata.read_from_file(metadata_path)  # kernels must be able to read what we wrote


def stage_noarch(config: dict, backend: str, build_dir: Path) -> None:
    """build/torch-<backend>: nothing to compile; the op namespace hashes the Python package."""
    if backend not in config["general"]["backends"]:
        sys.exit(f"build.toml does not list backend {backend}")
    variant = noarch_variant_name(backend)
    sources = sorted(p for p in python_package(config).rglob("*.py") if "__pycache__" not in p.parts)
    uid = source_uid([*sources, DTYPE_TABLE_HEADER], ["noarch", backend])
    ext_id = f"_{config['general']['name'].replace('-', '_')}_{backend}_{uid}"
    variant_dir = build_dir / variant
    write_variant(config, ext_id, backend, None, [], variant_dir)
    print(variant_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["cpu", "cuda", "xpu"], default=None,
                        help="default: cuda when torch is a CUDA build, else cpu (xpu: --noarch only, "
                             "as no SYCL compiler is reachable)")
    parser.add_argument("--cuda-archs", nargs="+", default=None,
                        help="compile for these capabilities only, e.g. 9.0 or 7.0+PTX (default: "
                             "kernel-builder's archs for this nvcc from build.toml)")
    parser.add_argument("--cuda-toolchain", type=Path, default=None,
                        help="a script printing the CUDA_HOME to compile with, fetching that "
                             "toolkit first (scripts/toolchains/cuda12.sh; default: this "
                             "machine's nvcc)")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build",
                        help="where build/<variant> goes (default: this checkout's build/)")
    parser.add_argument("--target", choices=["aarch64"], default=None,
                        help="cross-build for this Linux machine (default: build for this one), with "
                             "the toolchain of scripts/toolchains/<target>.sh (source its env file)")
    parser.add_argument("--noarch", action="store_true",
                        help="stage the backend's noarch variant build/torch-<backend> (Python only)")
    args = parser.parse_args()

    config = read_build_toml()
    if args.noarch and args.target:
        parser.error("--noarch variants hold no binary: there is nothing to cross-build")
    cross = CrossToolchain.from_env(args.target) if args.target else None
    backend = args.backend or ("cpu" if cross else default_backend())
    if args.noarch:
        stage_noarch(config, backend, args.build_dir.resolve())
        return
    if backend == "xpu":
        parser.error("--backend xpu: only its noarch variant can be built here (--noarch)")
    if args.cuda_toolchain:  # before torch.utils.cpp_extension reads CUDA_HOME
        printed = subprocess.run([str(args.cuda_toolchain)], stdout=subprocess.PIPE, text=True, check=True)
        os.environ["CUDA_HOME"] = printed.stdout.strip().splitlines()[-1]
    if backend == "cuda" and cross is None and "CUDA_HOME" not in os.environ and shutil.which("nvcc"):
        os.environ["CUDA_HOME"] = cuda_toolkit_root()
    if backend not in config["general"]["backends"]:
        sys.exit(f"build.toml does not list backend {backend}")
    variant = variant_name(config, backend, cross)
    archs = cuda_archs(config, args.cuda_archs, cross.nvcc if cross else None) if backend == "cuda" else []
    # build.toml's lists, and the compat object this build (not kernel-builder's) links in.
    sources = [*sources_for(config, backend), GLIBC_COMPAT_SOURCE]
    stable = stable_abi_version(config, backend)
    uid = source_uid(sources, [backend, *archs, str(stable), *GLIBC_COMPAT_LDFLAGS] + ([cross.machine] if cross else []))
    ext_id = f"_{config['general']['name'].replace('-', '_')}_{backend}_{uid}"

    import torch

    # Objects per torch version and arch choice: builds against two torches (the test venv,
    # the release venv, a target's), or of all archs and of a --cuda-archs few, neither share
    # nor keep rebuilding each other's objects.
    arch_choice = "" if args.cuda_archs is None else "-sm" + "_".join(a.replace("+PTX", "ptx") for a in archs)
    if cross:
        object_dir = ROOT / ".cache" / "objects" / f"torch-{cross.torch_version}-{cross.machine}" / (variant + arch_choice)
        library = cross_compile_extension(ext_id, backend, sources, archs, stable, object_dir, cross)
    else:
        object_dir = ROOT / ".cache" / "objects" / f"torch-{torch.__version__}" / (variant + arch_choice)
        library = compile_extension(ext_id, backend, sources, archs, stable, object_dir)
    variant_dir = args.build_dir.resolve() / variant
    write_variant(config, ext_id, backend, library, archs, variant_dir)
    print(variant_dir)


if __name__ == "__main__":
    main()
