"""The CUDA kernels each op compiles to: relu-cuda/relu_cuda.cu as an sm_90 cubin, its kernels
grouped by the op they run (the first template argument of each kernel), held to
docs/architecture.md's "Kernel budget" table: the kernel count per op exactly, the code bytes
per op at most 5% above the table. Grouped per op, so a new op adds its own rows and cannot
change another op's."""

import re
import shutil
import subprocess
import sys
import sysconfig
from collections import defaultdict
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from check_cuda_compile import COMMON_FLAGS, NVCC_FLAGS, find_nvcc, torch_cuda_headers  # noqa: E402

DOC = ROOT / "docs" / "architecture.md"
SIZE_SLACK = 1.05

# The op of a kernel: its op functor's name (and the gated ops' gate and pass).
OP_OF_FUNCTOR = {
    "ForwardOp": "relu forward", "LanesOp": "relu forward", "CopyOp": "copy",
    "BackwardOp": "relu backward", "LanesBackwardOp": "relu backward",
    "ReluSquaredOp": "relu_squared forward", "ReluSquaredBackwardOp": "relu_squared backward",
}
GATES = {"0": "relu_and_mul", "1": "relu_squared_and_mul"}
GATED_PASSES = {"0": "forward", "1": "grad_a", "2": "grad_b"}


def op_of(kernel: str) -> str:
    functor = re.match(r"void relu_kernel::\w+<relu_kernel::(\w+)<?", kernel)
    assert functor, f"a kernel whose first template argument is not an op: {kernel[:200]}"
    gated = re.search(r"GatedPassOp<\(relu_kernel::Gate\)(\d), \(relu_kernel::GatedPassKind\)(\d)", kernel)
    if functor.group(1) == "GatedPassOp" and gated:
        return f"{GATES[gated.group(1)]} {GATED_PASSES[gated.group(2)]}"
    assert functor.group(1) in OP_OF_FUNCTOR, f"an op the budget does not know: {functor.group(1)}"
    return OP_OF_FUNCTOR[functor.group(1)]


def budget_table() -> dict[str, tuple[int, int]]:
    """docs/architecture.md's "Kernel budget": {op: (kernels per arch, sm_90 code bytes)}."""
    text = DOC.read_text()
    heading = re.search(r"^#+ Kernel budget\s*$", text, flags=re.M)
    assert heading, f"{DOC.relative_to(ROOT)} has no 'Kernel budget' section"
    rows = {}
    for line in text[heading.end():].splitlines():
        if rows and not line.startswith("|"):
            break
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].replace(",", "").isdigit():
            rows[cells[0]] = (int(cells[1].replace(",", "")), int(cells[2].replace(",", "")))
    assert rows, "the 'Kernel budget' section has no table of op | kernels per arch | sm_90 code bytes"
    return rows


def compiled_kernels(work: Path) -> dict[str, tuple[int, int]]:
    """{op: (kernels, code bytes)} of relu_cuda.cu's sm_90 cubin."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from build_variant import REGISTRATION_H

    (work / "registration.h").write_text(REGISTRATION_H)
    include = torch_cuda_headers()
    cubin = work / "relu_cuda.cubin"
    subprocess.run([find_nvcc(), "-cubin", "-arch=sm_90", str(ROOT / "relu-cuda" / "relu_cuda.cu"), "-o", str(cubin),
                    *COMMON_FLAGS, *NVCC_FLAGS, "-diag-suppress=3189", f"-I{ROOT}", f"-I{work}", f"-I{include}",
                    f"-I{include / 'torch' / 'csrc' / 'api' / 'include'}", f"-I{sysconfig.get_paths()['include']}"],
                   check=True, capture_output=True, text=True, timeout=900)
    sections = subprocess.run(["readelf", "-S", "-W", str(cubin)], check=True, capture_output=True,
                              text=True).stdout
    sizes = {m.group(1): int(m.group(2), 16)
             for m in re.finditer(r"\] \.text\.(\S+)\s+PROGBITS\s+\S+\s+\S+\s+(\S+)", sections)}
    names = subprocess.run(["c++filt"], input="\n".join(sizes), check=True, capture_output=True,
                           text=True).stdout.splitlines()
    per_op: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for demangled, size in zip(names, sizes.values()):
        row = per_op[op_of(demangled)]
        row[0] += 1
        row[1] += size
    return {op: (count, size) for op, (count, size) in per_op.items()}


@pytest.mark.slow
@pytest.mark.skipif(find_nvcc() is None, reason="no nvcc on this machine")
@pytest.mark.skipif(shutil.which("readelf") is None or shutil.which("c++filt") is None,
                    reason="no readelf or c++filt on this machine")
@pytest.mark.skipif(torch.version.cuda is not None, reason="CUDA torch: no CUDA torch headers fetched here")
def test_kernels_per_op_within_budget(tmp_path):
    budget = budget_table()
    compiled = compiled_kernels(tmp_path)
    table = "\n".join(f"| {op} | {count} | {size} |" for op, (count, size) in sorted(compiled.items()))
    assert set(compiled) == set(budget), f"ops compiled and ops budgeted differ; compiled:\n{table}"
    for op, (count, size) in compiled.items():
        assert count == budget[op][0], f"{op}: {count} kernels, budget {budget[op][0]}; compiled:\n{table}"
        assert size <= budget[op][1] * SIZE_SLACK, f"{op}: {size} bytes, budget {budget[op][1]}; compiled:\n{table}"
