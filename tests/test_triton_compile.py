"""The torch-cuda variant's Triton kernels compiled ahead of time for the GPUs they will meet,
without one: triton.compile with a GPUTarget runs Triton's whole pipeline down to PTX and
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
    for bits, mode, limit in (("i8", 0, 0), ("i8", 2, 0x7E), ("i16", 2, 0x7F80), ("i32", 1, 0),
                              ("i64", 2, 0x7FF0000000000000)):
        found[f"flat {{bits}} mode {{mode}}"] = accesses(
            kernels._relu_flat_kernel,
            {{"x_ptr": f"*{{bits}}", "out_ptr": f"*{{bits}}", "n": "i32", "BLOCK": "constexpr",
              "WIDE_INDEX": "constexpr", "MODE": "constexpr", "LIMIT": "constexpr"}},
            {{"BLOCK": kernels.BLOCK, "WIDE_INDEX": bits == "i64", "MODE": mode, "LIMIT": limit}}, (0, 1, 2))
    found["backward flat i16"] = accesses(
        kernels._relu_backward_flat_kernel,
        {{"grad_ptr": "*i16", "result_ptr": "*i16", "grad_in_ptr": "*i16", "n": "i32", "BLOCK": "constexpr",
          "WIDE_INDEX": "constexpr", "LIMIT": "constexpr"}},
        {{"BLOCK": kernels.BLOCK, "WIDE_INDEX": False, "LIMIT": 0x7F80}}, (0, 1, 2, 3))
    # A chunk x[:, :half] of a row-major bfloat16 matrix: rows of unit stride, aligned row starts.
    walk = {{"x_ptr": "*i16", "out_ptr": "*i16", **{{f"size{{d}}": "i64" for d in range(4)}},
             "o0": "constexpr", **{{f"o{{d}}": "i64" for d in (1, 2, 3)}},
             "x0": "constexpr", **{{f"x{{d}}": "i64" for d in (1, 2, 3)}},
             "ROW_BLOCK": "constexpr", "ROWS": "constexpr", "MODE": "constexpr", "LIMIT": "constexpr"}}
    found["walk i16 chunk"] = accesses(
        kernels._relu_strided_kernel, walk,
        {{"o0": 1, "x0": 1, "ROW_BLOCK": kernels.MAX_ROW_BLOCK, "ROWS": kernels.BLOCK // kernels.MAX_ROW_BLOCK,
          "MODE": 2, "LIMIT": 0x7F80}}, (0, 1, 2, 3, 7, 8, 9, 11, 12, 13))
    walk_back = {{"grad_ptr": "*i32", "result_ptr": "*i32", "grad_in_ptr": "*i32",
                  **{{f"size{{d}}": "i64" for d in range(4)}}, **{{f"i_{{d}}": "i64" for d in range(4)}},
                  **{{f"g{{d}}": "i64" for d in range(4)}}, **{{f"r{{d}}": "i64" for d in range(4)}},
                  "ROW_BLOCK": "constexpr", "ROWS": "constexpr", "LIMIT": "constexpr"}}
    found["backward walk i32"] = accesses(kernels._relu_backward_strided_kernel, walk_back,
                                          {{"ROW_BLOCK": 64, "ROWS": 64, "LIMIT": 0x7F800000}}, ())
    print(json.dumps(found))
    """
)


@pytest.mark.parametrize("capability", [80, 90, 100, 120])
def test_triton_kernels_compile_with_16_byte_accesses(capability):
    script = CHECK.format(path=str(ROOT / "torch-ext" / "relu" / "_triton.py"), capability=capability)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    for name, accesses in found.items():
        if name.startswith(("flat", "backward flat", "walk")):
            wide = "v2.b64" if "i64" in name else "v4.b32"
            assert any(wide in a for a in accesses if a.startswith("ld")), (name, accesses)
            assert any(wide in a for a in accesses if a.startswith("st")), (name, accesses)
        assert accesses, name
