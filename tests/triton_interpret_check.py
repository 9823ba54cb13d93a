"""The torch-cuda variant's Triton kernel (float8) on CPU tensors, under Triton's interpreter.

    TRITON_INTERPRET=1 python tests/triton_interpret_check.py <build/torch-cuda>

Run by tests/test_triton_interpret.py in a fresh process: TRITON_INTERPRET must be set before
triton is first imported. Loads the variant as a user of the sys.path route does and runs its
CUDA rules for float8 (_noarch.device_kernels("cuda")) on CPU tensors of every size, so that
each call takes the Triton path: dense tensors one flat pass, in place, other layouts through
a contiguous copy. Prints one line per failure and exits 1 if any."""

import os
import sys
from pathlib import Path

assert os.environ.get("TRITON_INTERPRET") == "1", "set TRITON_INTERPRET=1 before triton is imported"

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import FLOAT8_DTYPES, assert_bitwise_equal, poisoned_like, random_input, reference_relu  # noqa: E402

sys.path.insert(0, str(Path(sys.argv[1]).resolve()))
import relu  # noqa: E402,F401  (the compat package: loads the variant as <id>_package)

noarch = next(module for name, module in sys.modules.items() if name.endswith("_package._noarch"))
next(module for name, module in sys.modules.items()
     if name.endswith("_package._noarch_rules")).TRITON_MIN_BYTES = 0  # every call on Triton, whatever its size
relu_cuda, relu_out_cuda, _ = noarch.device_kernels("cuda")["relu"]
failures = []


def check(label, actual, expected):
    try:
        assert_bitwise_equal(actual, expected)
    except AssertionError as error:
        failures.append(f"{label}: {error}")


for dtype in FLOAT8_DTYPES:
    base = random_input((6, 20, 34), dtype, "cpu")
    for label, x in [("contiguous", random_input(4099, dtype, "cpu")), ("offset", random_input(4100, dtype, "cpu")[1:]),
                     ("permuted-dense", base.permute(2, 0, 1)), ("step", base[:, :, ::2]),
                     ("transposed-slice", base[:, 3:, :9].transpose(0, 2)), ("0-d", base[1, 2, 3]),
                     ("empty", base[:, :0])]:
        expected = reference_relu(x)
        check(f"{dtype} {label} allocating", relu_cuda(x), expected)
        for form, out in (("layout-of-x", poisoned_like(torch.empty_like(x))),
                          ("contiguous", poisoned_like(expected.contiguous()))):
            relu_out_cuda(out, x)
            check(f"{dtype} {label} out= {form}", out, expected)
        copy = x.clone()
        relu_out_cuda(copy, copy)
        check(f"{dtype} {label} in place", copy, expected)
    buffer = random_input((8, 10), dtype, "cpu")
    x, out = buffer[:, 0::2], buffer[:, 1::2]
    expected = reference_relu(x)
    relu_out_cuda(out, x)
    check(f"{dtype} interleaved", out, expected)
if not any(name.endswith("_package._triton") for name in sys.modules):
    failures.append("the Triton kernel did not load: the calls above took torch ops")

for failure in failures:
    print(failure)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
