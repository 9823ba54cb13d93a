"""The CPU kernel on aarch64: relu-cpu/relu_cpu.cpp cross-compiled with Debian's
g++-aarch64-linux-gnu, as kernel-builder would compile it for an ARM variant (-DCPU_KERNEL,
-O3, C++20, torch's headers), and every portable loop, which is what runs on ARM, holds
16-byte NEON loads, stores and vector operations. Compiled only: the aarch64 variants run
under emulation in scripts/test_aarch64.sh, which also points RELU_ARM_BINARY at each built
aarch64 variant's library, so that the same checks read the binary that ran."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import torch.utils.cpp_extension

ROOT = Path(__file__).resolve().parent.parent
CROSS_CXX = "aarch64-linux-gnu-g++"
CROSS_OBJDUMP = "aarch64-linux-gnu-objdump"
INSTALL = "apt-get install -y --no-install-recommends g++-aarch64-linux-gnu"

# How each dtype's Format shows in a demangled name (relu-common/relu_element.h).
FORMAT_NAMES = {
    "float32": "Format<float,",
    "float16": "Format<unsigned short, (relu_kernel::LaneKind)2, 31744ul>",
    "bfloat16": "Format<unsigned short, (relu_kernel::LaneKind)2, 32640ul>",
    "float64": "Format<double,",
    "int8": "Format<signed char,",
    "int16": "Format<short,",
    "int32": "Format<int,",
    "int64": "Format<long,",
    # uint8 and the float8 formats share the storage type: the lane kind and NaN bound tell them apart.
    "uint8": "Format<unsigned char, (relu_kernel::LaneKind)1, 0ul>",
    "float8_e5m2": "Format<unsigned char, (relu_kernel::LaneKind)2, 124ul>",
    "float8_e4m3fn": "Format<unsigned char, (relu_kernel::LaneKind)2, 126ul>",
    "float8_fnuz": "Format<unsigned char, (relu_kernel::LaneKind)2, 127ul>",
}

Q_LOAD = re.compile(r"^(ldr\s+q\d+|ldp\s+q\d+|ld1\s+\{v)")
Q_STORE = re.compile(r"^(str\s+q\d+|stp\s+q\d+|st1\s+\{v)")
VECTOR_OP = re.compile(r"^(?!ld|st)\S+\s.*\bv\d+\.(16b|8h|4s|2d)\b")


def objdump(path: Path) -> str:
    dump = subprocess.run([CROSS_OBJDUMP, "-d", "-C", "--no-show-raw-insn", str(path)],
                          capture_output=True, text=True, check=True)
    assert "file format elf64-littleaarch64" in dump.stdout
    return dump.stdout


@pytest.fixture(scope="module")
def disassembly(tmp_path_factory) -> str:
    if not (shutil.which(CROSS_CXX) and shutil.which(CROSS_OBJDUMP)):
        pytest.skip(f"no aarch64 cross compiler; install it with: {INSTALL}")
    if os.environ.get("RELU_ARM_BINARY"):
        return objdump(Path(os.environ["RELU_ARM_BINARY"]))
    obj = tmp_path_factory.mktemp("arm") / "relu_cpu.o"
    includes = [arg for path in torch.utils.cpp_extension.include_paths() for arg in ("-isystem", path)]
    command = [CROSS_CXX, "-std=c++20", "-O3", "-fPIC", "-DCPU_KERNEL", "-Wall", "-Werror",
               # torch's SmallVector, inlined into TensorIterator loops: a false positive at -O3.
               "-Wno-maybe-uninitialized",
               f"-I{ROOT}", *includes, "-c", str(ROOT / "relu-cpu" / "relu_cpu.cpp"), "-o", str(obj)]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, f"{' '.join(command)}\n{built.stderr[-6000:]}"
    return objdump(obj)


def functions(disassembly: str) -> dict[str, list[str]]:
    """Demangled function name -> its instructions."""
    found: dict[str, list[str]] = {}
    current = None
    for line in disassembly.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if header:
            current = found.setdefault(header.group(1), [])
        elif current is not None and "\t" in line:
            current.append(line.split("\t", 1)[1].strip())
    return found


# Backward loops exist for the dtypes relu has a gradient for (Format::kHasGradient) only, and
# relu_squared's loops, both ways, for those dtypes alone. The activation is the op's first
# template argument (relu-common/activations.h); the portable dense pass is
# Compiled<DensePass<ForwardOp<activation, Format>, ...>, ...>::portable.
GRADIENT_DTYPES = {"float32", "float16", "bfloat16", "float64"}
ACTIVATIONS = {"relu": "(relu_kernel::Activation)0", "relu_squared": "(relu_kernel::Activation)1"}
LOOPS = [("relu", dtype, direction) for dtype in FORMAT_NAMES for direction in ("forward", "backward")
         if direction == "forward" or dtype in GRADIENT_DTYPES]
LOOPS += [("relu_squared", dtype, direction) for dtype in FORMAT_NAMES if dtype in GRADIENT_DTYPES
          for direction in ("forward", "backward")]


@pytest.mark.parametrize(("activation", "dtype", "direction"), LOOPS, ids=[f"{a}-{d}-{w}" for a, d, w in LOOPS])
def test_portable_loop_uses_neon(disassembly, activation, direction, dtype):
    op = f"{direction.capitalize()}Op<{ACTIVATIONS[activation]}, relu_kernel::{FORMAT_NAMES[dtype]}"
    prefix = f"Compiled<(anonymous namespace)::DensePass<(anonymous namespace)::{op}"
    matches = [body for name, body in functions(disassembly).items() if prefix in name and ">::portable(" in name]
    assert len(matches) == 1, f"{activation} {direction} portable dense pass for {dtype}: {len(matches)} functions"
    body = matches[0]
    assert any(Q_LOAD.match(i) for i in body), f"no 16-byte load in {activation} {direction} {dtype}"
    assert any(Q_STORE.match(i) for i in body), f"no 16-byte store in {activation} {direction} {dtype}"
    if not (activation == "relu" and dtype == "uint8" and direction == "forward"):  # a plain copy
        assert any(VECTOR_OP.match(i) for i in body), f"no NEON operation in {activation} {direction} {dtype}"
