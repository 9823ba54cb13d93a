"""Every SIMD variant of the CPU kernel gives the reference's bits. The variant is chosen
once per process (RELU_CPU_ISA caps it), so each runs in a subprocess."""

import os
import subprocess
import sys
import textwrap

import pytest

from conftest import KERNEL_ROOT, REPO_ID, ROOT, VARIANT_DIRS, is_noarch

CHECK = textwrap.dedent(
    """
    import sys, torch
    sys.path.insert(0, {tests!r})
    from kernels import get_kernel
    from reference import SUPPORTED_DTYPES, assert_bitwise_equal, random_input, reference_relu, reference_relu_backward, FLOAT_DTYPES
    kernel = get_kernel({repo!r}, version=3, backend="cpu")
    print(kernel._ops.ops.cpu_isa())
    for dtype in SUPPORTED_DTYPES:
        for n in (0, 1, 15, 16, 17, 63, 64, 65, 255, 4097, 70001):
            x = random_input(n, dtype, "cpu")
            assert_bitwise_equal(kernel.relu(x), reference_relu(x))
            assert_bitwise_equal(kernel.relu(x[1:]), reference_relu(x[1:]))
            if dtype in FLOAT_DTYPES:
                grad = random_input(n, dtype, "cpu", specials=False)
                result = kernel.relu(x)
                assert_bitwise_equal(kernel._ops.ops.relu_backward(grad, result), reference_relu_backward(grad, x))
            # Rows read every step-th element: a vector loop for steps 2-4, an element loop
            # for 5; into a fresh result, and into an out= of the same layout as x.
            for step in (2, 3, 4, 5):
                x = random_input(n * step + 1, dtype, "cpu")[1::step]
                assert_bitwise_equal(kernel.relu(x), reference_relu(x))
                strided_out = x.new_empty(n * step + 1)[1::step]
                assert_bitwise_equal(kernel.relu(x, out=strided_out), reference_relu(x))
        # Short rows (37 elements) of a permuted 3-D slice, walked row by row; the larger one
        # is split into tasks that start and end inside rows.
        for outer in (5, 300):
            x = random_input((outer, 64, 40), dtype, "cpu")[:, 1:, :37].permute(2, 0, 1)
            result = kernel.relu(x)
            assert_bitwise_equal(result, reference_relu(x))
            if dtype in FLOAT_DTYPES:
                grad = random_input((outer, 64, 40), dtype, "cpu", specials=False)[:, 1:, :37].permute(2, 0, 1)
                assert_bitwise_equal(kernel._ops.ops.relu_backward(grad, result), reference_relu_backward(grad, x))
    """
)


def cpu_supports(flag: str) -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return f" {flag}" in f.read()
    except OSError:
        return False


def run_check(isa: str, check: str) -> subprocess.CompletedProcess:
    """Runs `check` (a script with {tests} and {repo} to fill) in a fresh interpreter whose
    CPU kernel is capped at `isa` (RELU_CPU_ISA), loading this build through LOCAL_KERNELS.
    Skips when the CPU lacks `isa`; fails when the script does."""
    if is_noarch(VARIANT_DIRS["cpu"]):
        pytest.skip("the noarch torch-cpu variant runs torch's own ops: no ISA variants of its own")
    needed = {"portable": None, "avx2": "avx2", "avx512": "avx512bw"}.get(isa)
    if needed and not cpu_supports(needed):
        pytest.skip(f"this CPU lacks {needed}")
    env = dict(os.environ, RELU_CPU_ISA=isa, LOCAL_KERNELS=f"{REPO_ID}={KERNEL_ROOT}", HF_HUB_OFFLINE="1")
    script = check.format(tests=str(ROOT / "tests"), repo=REPO_ID)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.parametrize("isa", ["portable", "avx2", "avx512"])
def test_isa_variant_matches_reference(isa):
    assert run_check(isa, CHECK).stdout.splitlines()[0] == isa


def test_unknown_isa_request_warns_and_runs_the_best():
    assert "ignoring RELU_CPU_ISA=sse9" in run_check("sse9", CHECK).stderr
