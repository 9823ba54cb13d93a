"""The CPU backend under clang (issue 28): icpx, the XPU build's compiler, is clang-based, and
clang drops a whole target attribute over a tuning option it does not take (GCC's
prefer-vector-width), which left the AVX-512 loops as SSE2 while cpu_isa() said avx512.
relu-cpu/relu_cpu.cpp compiled by Debian's clang++ with the build's flags: no attribute
ignored, and in the disassembly every AVX-512 loop holds AVX-512 instructions (EVEX-only
registers: zmm, k masks, xmm/ymm16-31), every AVX2 loop 256-bit ones and no AVX-512, every
portable loop neither. Needs clang++ (`apt-get install -y clang`; CI's install line has it)."""

import re
import shutil
import subprocess
import sys

import pytest
import torch.utils.cpp_extension
from packaging.version import Version

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from build_variant import common_defines, language_standard, read_build_toml, stable_abi_version  # noqa: E402

CLANG = shutil.which("clang++")
EVEX_ONLY = re.compile(r"%zmm|%k[1-7]\b|%[xy]mm(1[6-9]|2\d|3[01])\b")
# Each loop's three compilations: Compiled<Loop, Signature>::avx512, ::avx2, ::portable.
LOOP = re.compile(r"\bCompiled<.*>::(avx512|avx2|portable)\(")
# Unsigned dtypes are copies (relu is the identity): no arithmetic for AVX-512 to add, and
# clang's copy loop may use plain 16-byte moves.
COPY_FORMAT = "(relu_kernel::LaneKind)1"


@pytest.fixture(scope="module")
def disassembly(tmp_path_factory) -> dict[str, str]:
    if CLANG is None:
        pytest.skip("clang++ not found: apt-get install -y clang (Debian's clang, as CI installs it)")
    import torch

    obj = tmp_path_factory.mktemp("clang") / "relu_cpu.o"
    flags = ["-O3", "-fPIC", language_standard(Version(torch.__version__)),
             *common_defines("cpu", stable_abi_version(read_build_toml(), "cpu")), f"-I{ROOT}",
             *(arg for path in torch.utils.cpp_extension.include_paths() for arg in ("-isystem", path))]
    built = subprocess.run([CLANG, *flags, "-c", str(ROOT / "relu-cpu" / "relu_cpu.cpp"), "-o", str(obj)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-4000:]
    assert "attribute ignored" not in built.stderr, built.stderr[-4000:]
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", str(obj)], capture_output=True, text=True,
                             check=True).stdout
    functions = {}
    for chunk in re.split(r"\n(?=[0-9a-f]{16} <)", listing):
        header = re.match(r"[0-9a-f]{16} <(.*)>:\n", chunk)
        if header and LOOP.search(header.group(1)):
            functions[header.group(1)] = chunk[header.end():]
    return functions


def loops(disassembly, isa):
    found = {name: body for name, body in disassembly.items() if LOOP.search(name).group(1) == isa}
    assert len(found) >= 20, f"{isa}: only {len(found)} loops found"
    return found


def test_avx512_loops_hold_avx512_instructions(disassembly):
    missing = [name for name, body in loops(disassembly, "avx512").items()
               if not EVEX_ONLY.search(body) and not (COPY_FORMAT in name and "%xmm" in body)]
    assert missing == []


def test_avx2_loops_hold_256_bit_and_no_avx512(disassembly):
    found = loops(disassembly, "avx2")
    assert [name for name, body in found.items() if EVEX_ONLY.search(body)] == []
    assert [name for name, body in found.items() if "%ymm" not in body] == []


def test_portable_loops_hold_neither(disassembly):
    found = loops(disassembly, "portable")
    assert [name for name, body in found.items() if "%ymm" in body or EVEX_ONLY.search(body)] == []
