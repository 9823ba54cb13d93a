"""Each [kernel.*] of build.toml builds from exactly its own src list (issue 28: the XPU list
left out relu-cpu/relu_cpu.cpp, which every build's binding calls, so kernel-builder's XPU
build could not have linked).

- cpu: the suite's own build is this list (scripts/build_variant.py compiles [torch] src plus
  the backend's [kernel.*] src, links and loads it: conftest); cuda: the same on a CUDA
  machine, and scripts/check_cuda_compile.py compiles its .cu files here. Held below: the
  build step takes those lists and nothing else.
- xpu: no SYCL compiler here to link it. Every backend entry point
  (relu-common/backend_entry_points.h) that the binding's objects reference must be defined
  by an object of [kernel.relu_xpu] src, all compiled by g++ (relu_xpu.cpp as the host half
  of a SYCL build against the SYCL headers, as tests/test_xpu_source.py does)."""

import re
import subprocess
import sys
import sysconfig
import tomllib

import pytest

from test_xpu_source import ROOT, compile_host, relu_xpu_host_flags, torch_include_flags

CONFIG = tomllib.loads((ROOT / "build.toml").read_text())
# Backend<Device>'s members and the free functions the header declares.
ENTRY_POINTS = set(re.findall(r"^\s*(?:static\s+)?(?:void|std::string)\s+(\w+)\(",
                              (ROOT / "relu-common" / "backend_entry_points.h").read_text(), re.MULTILINE))


def entry_point_name(line: str) -> str:
    """forward of "Backend<(Device)2>::forward(...)", relu_cpu_isa of "relu_cpu_isa[abi:cxx11]()"."""
    return re.sub(r"^Backend<.*?>::", "", line).split("(")[0].split("[")[0]


def kernel_sources(backend: str) -> list[str]:
    return [s for k in CONFIG["kernel"].values() if k["backend"] == backend for s in k["src"]]


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_build_step_compiles_exactly_the_lists(backend):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from build_variant import ROOT as BUILD_ROOT, sources_for
    finally:
        sys.path.pop(0)
    assert BUILD_ROOT == ROOT
    expected = [ROOT / s for s in CONFIG["torch"]["src"] + kernel_sources(backend)]
    assert sources_for(CONFIG, backend) == expected


def test_xpu_list_defines_every_entry_point_the_binding_calls(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from build_variant import PY_LIMITED_API, REGISTRATION_H
    finally:
        sys.path.pop(0)
    (tmp_path / "registration.h").write_text(REGISTRATION_H)
    binding_flags = ["-std=c++20", "-O1", "-fPIC", "-c", "-DXPU_KERNEL", "-DTORCH_EXTENSION_NAME=_relu_xpu_check",
                     f"-DPy_LIMITED_API={PY_LIMITED_API}", f"-I{tmp_path}", "-isystem", sysconfig.get_paths()["include"],
                     *torch_include_flags()]
    binding = [compile_host(ROOT / s, tmp_path / (s.replace("/", "_") + ".o"), binding_flags, warnings=())
               for s in CONFIG["torch"]["src"] if s.endswith(".cpp")]
    listed_flags = [*relu_xpu_host_flags("per-torch-build"), "-O1", "-fPIC", "-c"]
    listed = [compile_host(ROOT / s, tmp_path / (s.replace("/", "_") + ".o"), listed_flags, warnings=())
              for s in kernel_sources("xpu") if s.endswith(".cpp")]
    # nm -C prints a function's signature, with its spaces: compare whole names.
    called_lines = {line for obj in binding for line in nm_lines(obj, "-u") if entry_point_name(line) in ENTRY_POINTS}
    defined_lines = {line for obj in listed for line in nm_lines(obj, "--defined-only")}
    assert called_lines, "the binding references no backend entry point: the check sees nothing"
    assert sorted(called_lines - defined_lines) == [], "add their sources to [kernel.relu_xpu] src"


def nm_lines(obj, *flags) -> set[str]:
    """The demangled names nm lists (signatures included), without address and type."""
    listed = subprocess.run(["nm", "-C", *flags, str(obj)], capture_output=True, text=True, check=True).stdout
    return {re.sub(r"^\s*(?:[0-9a-f]+\s+)?[A-Za-z]\s+", "", line) for line in listed.splitlines() if line.strip()}
