"""What can be checked of the XPU backend here, with no SYCL compiler, Intel GPU or XPU torch:

- the work-item code of the kernels (relu-xpu/relu_xpu_items.h), relu, relu_squared and the
  gated ops, compiled with g++ and run on the CPU one work-item at a time, against the tests'
  reference (tests/xpu_items_check.cpp);
- build.toml's [kernel.relu_xpu] accepted by kernels' own parser, and listing every file of
  this repository that the XPU sources include (kernel-builder copies only listed files);
- relu-xpu/relu_xpu.cpp reaching no header of torch's C++ API (ATen, c10, torch/all.h,
  torch/library.h): torch's header-only headers and one AOTI shim function only, declared
  with the signature torch's own shim_xpu.h gives it;
- relu-xpu/relu_xpu.cpp compiled by g++ as the host half of a SYCL build, against the SYCL
  2020 headers of Intel's intel-sycl-rt wheel and torch's header-only headers, every kernel
  body type-checked (tests/xpu_host_compile.cpp);
- the binding's sources (build.toml's [torch] src .cpp files) compiled with -DXPU_KERNEL (its
  XPU registration) against torch's stable-ABI headers.

Not checked: device code generation, the launch on a queue, that the AOTI shim returns a
sycl::queue* at run time (read from torch's source only), anything at run time on a GPU
(relu-xpu/README.md)."""

import os
import re
import secrets
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import tomllib
import torch.utils.cpp_extension

ROOT = Path(__file__).resolve().parent.parent

# Intel's SYCL runtime wheel: its data/include holds the DPC++ SYCL 2020 headers
# (sycl/sycl.hpp). Pinned so that a header change upstream cannot turn the suite red; bump
# it on purpose. Only data/include is kept (7.5 MiB of the 170 MiB wheel).
SYCL_WHEEL = "intel-sycl-rt==2026.2.0"
SYCL_HEADERS = ROOT / ".cache" / "sycl-headers" / SYCL_WHEEL.replace("==", "-")


STRICT_WARNINGS = ("-Wall", "-Wextra", "-Werror")


def compile_host(source: Path, out: Path, flags: list[str], warnings=STRICT_WARNINGS) -> Path:
    compiler = shutil.which("g++")
    assert compiler, "g++ is needed (it also builds the CPU kernel)"
    command = [compiler, *flags, *warnings, f"-I{ROOT}", str(source), "-o", str(out)]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, f"{' '.join(command)}\n{built.stderr[-6000:]}"
    return out


@pytest.fixture(scope="module")
def items_checker(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("xpu_items") / "check"
    # torch's header-only dtype enum: relu_xpu_items.h maps activations through activations.h
    return compile_host(ROOT / "tests" / "xpu_items_check.cpp", out,
                        ["-std=c++20", "-O2", *torch_include_flags()])


def run_checker(checker: Path, *args: str) -> str:
    seed = str(secrets.randbits(63))  # fresh data every run; the seed is in the output
    run = subprocess.run([str(checker), seed, *args], capture_output=True, text=True)
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout[-6000:]}{run.stderr[-2000:]}"
    assert run.stdout.strip().splitlines()[-1].endswith(" checks, 0 failures"), run.stdout
    return run.stdout


def test_work_items_match_reference(items_checker):
    """relu on every dtype, relu_squared and the gated ops on their four, forward and backward
    (the gated ops' two passes): every offset of each array within 16 bytes, in place, sizes
    around each head/vector/tail boundary, the real launch size and looping work-items, guard
    bytes."""
    run_checker(items_checker)


@pytest.mark.slow
def test_work_items_index_past_2_31(items_checker):
    """2^31 + 4099 int8 elements in place (2 GiB), fewer work-items than vectors."""
    run_checker(items_checker, "--large")


def sycl_headers() -> Path:
    """include/ of the intel-sycl-rt wheel, fetched once into .cache/ (gitignored)."""
    include = SYCL_HEADERS / "include"
    if (include / "sycl" / "sycl.hpp").is_file():
        return include
    download = SYCL_HEADERS / "download"
    shutil.rmtree(download, ignore_errors=True)
    fetched = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
         "--dest", str(download), SYCL_WHEEL],
        capture_output=True, text=True,
    )
    if fetched.returncode != 0:
        pytest.skip(f"could not fetch the SYCL headers ({SYCL_WHEEL}; needs PyPI): {fetched.stderr[-500:]}")
    (wheel,) = download.glob("*.whl")
    staging = SYCL_HEADERS / "staging"
    shutil.rmtree(staging, ignore_errors=True)
    with zipfile.ZipFile(wheel) as archive:
        prefix = next(n for n in archive.namelist() if n.endswith("/include/sycl/sycl.hpp"))
        prefix = prefix[: -len("sycl/sycl.hpp")]
        for name in archive.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                target = staging / name[len(prefix):]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(name))
    shutil.rmtree(download)
    os.replace(staging, include)  # atomic: a half-extracted tree is never taken for done
    return include


def torch_include_flags() -> list[str]:
    return [arg for path in torch.utils.cpp_extension.include_paths() for arg in ("-isystem", path)]


# How the XPU code is compiled: kernel-builder builds the XPU variant per torch version
# (build.toml names no stable ABI for it, because its queue comes from an AOTI shim outside the
# stable set), i.e. with no TORCH_TARGET_VERSION; the code is nonetheless written against the
# stable-ABI 2.11 surface that the CPU and CUDA variants target, which the define enforces
# (the stable headers then hide everything newer than torch 2.11).
TORCH_TARGETS = {
    "per-torch-build": [],
    "stable-abi-2.11": ["-DTORCH_TARGET_VERSION=0x020b000000000000"],
}


def relu_xpu_host_flags(target: str) -> list[str]:
    return [
        "-std=c++20",  # what kernel-builder uses for torch >= 2.12
        "-DXPU_KERNEL",
        "-DSYCL_DISABLE_FSYCL_SYCLHPP_WARNING",  # "no -fsycl": right, this is the host half
        *TORCH_TARGETS[target],
        "-isystem", str(sycl_headers()),
        *torch_include_flags(),
    ]


@pytest.mark.parametrize("target", TORCH_TARGETS)
def test_relu_xpu_compiles_against_sycl_headers(tmp_path, target):
    """Both ways the code can be built (TORCH_TARGETS), every kernel functor instantiated."""
    flags = ["-fsyntax-only", *relu_xpu_host_flags(target)]
    compile_host(ROOT / "tests" / "xpu_host_compile.cpp", tmp_path / "unused", flags)


# torch's C++ API, which ties a binary to one torch build; relu_xpu.cpp must reach none of it.
TORCH_CPP_API_INCLUDE = re.compile(
    r'^\s*#\s*include\s*[<"](ATen/|c10/|torch/all\.h|torch/library\.h)', re.MULTILINE)


def test_relu_xpu_includes_no_torch_cpp_api():
    """relu_xpu.cpp and the repository headers it includes name no ATen/, c10/, torch/all.h
    or torch/library.h header (the SYCL headers are not needed for this one)."""
    sources = ["relu-xpu/relu_xpu.cpp", *sorted(repo_includes(ROOT / "relu-xpu" / "relu_xpu.cpp"))]
    found = {name: TORCH_CPP_API_INCLUDE.findall((ROOT / name).read_text()) for name in sources}
    assert {name: hits for name, hits in found.items() if hits} == {}


# What of torch's headers relu_xpu.cpp may reach: the header-only and stable-ABI headers, and
# the AOTI C shim declarations those stand on. All C or header-only: nothing there ties the
# code to one torch build's C++ ABI.
TORCH_HEADERS_ALLOWED = (
    "torch/headeronly/",
    "torch/csrc/stable/",
    "torch/csrc/inductor/aoti_torch/c/",
    "torch/csrc/inductor/aoti_torch/generated/c_shim_",
)


def test_relu_xpu_reaches_only_header_only_torch():
    """Through every header it includes, transitively (g++ -M), relu_xpu.cpp reaches no torch
    header outside TORCH_HEADERS_ALLOWED."""
    compiler = shutil.which("g++")
    assert compiler, "g++ is needed (it also builds the CPU kernel)"
    command = [compiler, "-M", *relu_xpu_host_flags("per-torch-build"), f"-I{ROOT}",
               str(ROOT / "relu-xpu" / "relu_xpu.cpp")]
    listed = subprocess.run(command, capture_output=True, text=True)
    assert listed.returncode == 0, f"{' '.join(command)}\n{listed.stderr[-6000:]}"
    headers = listed.stdout.replace("\\\n", " ").split()[1:]  # after "relu_xpu.o:"
    torch_roots = [Path(path).resolve() for path in torch.utils.cpp_extension.include_paths()]
    reached = set()
    for header in headers:
        resolved = Path(header).resolve()
        for root in torch_roots:
            if resolved.is_relative_to(root):
                reached.add(resolved.relative_to(root).as_posix())
    assert reached, "expected torch's header-only dtype enum (relu-common/relu_dtypes.h)"
    assert sorted(h for h in reached if not h.startswith(TORCH_HEADERS_ALLOWED)) == []


def test_shim_declaration_matches_torch(tmp_path):
    """relu_xpu.cpp declares aoti_torch_get_current_xpu_stream itself (torch's shim_xpu.h
    declares it only under USE_XPU). With torch's declaration made visible first, a C function
    declared with another signature is a hard error: so ours is the one libtorch exports."""
    both = tmp_path / "shim_and_relu_xpu.cpp"
    both.write_text("#include <torch/csrc/inductor/aoti_torch/c/shim_xpu.h>\n"
                    '#include "relu-xpu/relu_xpu.cpp"\n')
    flags = ["-fsyntax-only", "-DUSE_XPU", *relu_xpu_host_flags("per-torch-build")]
    compile_host(both, tmp_path / "unused", flags)


@pytest.mark.parametrize("target", TORCH_TARGETS)
def test_binding_compiles_for_xpu(tmp_path, target):
    """The XPU branch of the op registration, with the registration.h the build step writes
    (it defines STABLE_TORCH_LIBRARY_EXPAND and STABLE_TORCH_LIBRARY_IMPL_EXPAND). Warnings
    are not errors here: that generated header is not this test's concern."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from build_variant import PY_LIMITED_API, REGISTRATION_H
    finally:
        sys.path.pop(0)
    (tmp_path / "registration.h").write_text(REGISTRATION_H)
    flags = [
        "-std=c++20",
        "-fsyntax-only",
        "-DXPU_KERNEL",
        *TORCH_TARGETS[target],
        "-DTORCH_EXTENSION_NAME=_relu_xpu_check",
        f"-DPy_LIMITED_API={PY_LIMITED_API}",
        f"-I{tmp_path}",
        "-isystem", sysconfig.get_paths()["include"],
        *torch_include_flags(),
    ]
    config = tomllib.loads((ROOT / "build.toml").read_text())
    binding_sources = [source for source in config["torch"]["src"] if source.endswith(".cpp")]
    assert "torch-ext/torch_binding.cpp" in binding_sources
    for source in binding_sources:
        compile_host(ROOT / source, tmp_path / "unused", flags, warnings=())


def repo_includes(path: Path) -> set[str]:
    """Files of this repository that `path` includes, directly or through them."""
    found: set[str] = set()
    pending = [path]
    while pending:
        source = pending.pop()
        for name in re.findall(r'^#include "([^"]+)"', source.read_text(), re.MULTILINE):
            if (ROOT / name).is_file() and name not in found:
                found.add(name)
                pending.append(ROOT / name)
    return found


def test_build_toml_xpu_section():
    from kernels._rust import Build

    Build.open(ROOT)  # raises on anything kernel-builder would reject
    config = tomllib.loads((ROOT / "build.toml").read_text())
    assert "xpu" in config["general"]["backends"]
    (section,) = [k for k in config["kernel"].values() if k["backend"] == "xpu"]
    torch_src = set(config["torch"]["src"])
    listed = set(section["src"]) | torch_src
    for source in section["src"]:
        assert (ROOT / source).is_file(), source
    needed = repo_includes(ROOT / "relu-xpu" / "relu_xpu.cpp")
    assert needed - listed == set(), "include these in [kernel.relu_xpu] src"
