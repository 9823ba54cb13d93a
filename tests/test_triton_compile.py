"""The torch-cuda variant's Triton kernel (float8) compiled ahead of time for the GPUs it will
meet, without one: triton.compile with a GPUTarget runs Triton's whole pipeline down to PTX and
cubin (the triton wheel brings ptxas). Catches what the interpreter (test_triton_interpret.py)
cannot: code Triton's compiler rejects, and a flat pass that lost its 16-byte accesses.
In a fresh process, as everything that imports triton in these tests."""

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

CHECK = textwrap.dedent(
    """
    import importlib.util, json, re, sys
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    spec = importlib.util.spec_from_file_location("kernels", {path!r})
    kernels = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernels)
    target = GPUTarget("cuda", {capability}, 32)
    aligned = [["tt.divisibility", 16]]  # what Triton specializes for 16-byte aligned pointers and sizes

    def accesses(fn, signature, constexprs, aligned_args):
        source = ASTSource(fn=fn, signature=signature, constexprs=constexprs,
                           attrs={{(i,): aligned for i in aligned_args}})
        ptx = triton.compile(source, target=target).asm["ptx"]
        return sorted(set(re.findall(r"(?:ld|st)\\.global[.\\w]*", ptx)))

    found = {{}}
    for name, limit in (("e4m3fn", 0x7E), ("e5m2", 0x7C), ("fnuz", 0x7F)):
        found[f"flat i8 {{name}}"] = accesses(
            kernels._relu_float8_kernel,
            {{"x_ptr": "*i8", "out_ptr": "*i8", "n": "i32", "LIMIT": "constexpr", "BLOCK": "constexpr",
              "WIDE_INDEX": "constexpr"}},
            {{"LIMIT": limit, "BLOCK": kernels.BLOCK, "WIDE_INDEX": False}}, (0, 1, 2))
    print(json.dumps(found))
    """
)


@pytest.mark.parametrize("capability", [80, 90, 100, 120])
def test_triton_kernel_compiles_with_16_byte_accesses(capability):
    script = CHECK.format(path=str(ROOT / "torch-ext" / "relu" / "_triton.py"), capability=capability)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    for name, accesses in found.items():
        assert any("v4.b32" in a for a in accesses if a.startswith("ld")), (name, accesses)
        assert any("v4.b32" in a for a in accesses if a.startswith("st")), (name, accesses)
