"""The torch-cuda variant's Triton kernels on CPU tensors, under Triton's interpreter.

    TRITON_INTERPRET=1 python tests/triton_interpret_check.py <build/torch-cuda>

Run by tests/test_triton_interpret.py in a fresh process: TRITON_INTERPRET must be set before
triton is first imported. Loads the variant as a user of the sys.path route does, then calls
its Triton path (_noarch.py's _triton_relu_into / _triton_relu_backward: layouts, flat pass,
walk, dense-copy fallback) directly, since CPU tensors would otherwise take the torch path.
Prints one line per failure and exits 1 if any."""

import os
import sys
from pathlib import Path

assert os.environ.get("TRITON_INTERPRET") == "1", "set TRITON_INTERPRET=1 before triton is imported"

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference import (  # noqa: E402
    BITS_ONLY_DTYPES,
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    assert_bitwise_equal,
    poisoned_like,
    random_input,
    reference_relu,
    reference_relu_backward,
)

variant_dir = Path(sys.argv[1]).resolve()
sys.path.insert(0, str(variant_dir))
import relu  # noqa: E402,F401  (the compat package: loads the variant as <id>_package)

noarch = next(module for name, module in sys.modules.items() if name.endswith("_package._noarch"))
kernels = noarch._triton_kernels()
assert noarch._strided_layout([torch.empty(3, 4, 5, 6, 7)[::2, ::2, ::2, ::2, ::2]] * 2, kernels.MAX_DIMS) is None, \
    "five_dims must exceed the walk"

failures = []


def check(label, actual, expected):
    try:
        assert_bitwise_equal(actual, expected)
    except AssertionError as error:
        failures.append(f"{label}: {error}")


def forward(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    dense = noarch._check_relu_args(out, x)
    noarch._triton_relu_into(out, x, dense)
    return out


def views(dtype):
    """The layouts each reaches: flat (contiguous, offset, permuted-dense), walks of 1-4
    dimensions, and a 5-dimension view beyond the walk (dense copy)."""
    base = random_input((6, 20, 34), dtype, "cpu")
    yield "contiguous", random_input(4099, dtype, "cpu")
    yield "offset", random_input(4100, dtype, "cpu")[1:]
    yield "permuted_dense", base.permute(2, 0, 1)
    yield "step", base[:, :, ::2]
    yield "chunk", base[..., :17]
    yield "transposed_slice", base[:, 3:, :9].transpose(0, 2)
    yield "one_element_view", base[2:3, 4:5, 6:7]
    yield "zero_dim", base[1, 2, 3]
    yield "empty", base[:, :0]
    # No two neighbours merge: five dimensions.
    yield "five_dims", random_input((3, 4, 5, 6, 7), dtype, "cpu")[::2, ::2, ::2, ::2, ::2]


for dtype in SUPPORTED_DTYPES + BITS_ONLY_DTYPES:
    for label, x in views(dtype):
        expected = reference_relu(x)
        check(f"{dtype} {label} allocating-layout out", forward(x, poisoned_like(torch.empty_like(x))), expected)
        check(f"{dtype} {label} contiguous out", forward(x, poisoned_like(expected.contiguous())), expected)
        if x.numel() > 1:
            copy = x.clone()
            forward(copy, copy)
            check(f"{dtype} {label} in place", copy, expected)
    # Interleaved views of one buffer: x is read into a temporary first.
    buffer = random_input((8, 10), dtype, "cpu")
    x, out = buffer[:, 0::2], buffer[:, 1::2]
    expected = reference_relu(x)
    check(f"{dtype} interleaved", forward(x, out), expected)

for dtype in FLOAT_DTYPES:
    for label, result in views(dtype):
        grad = random_input(result.shape, dtype, "cpu", specials=False)
        check(f"{dtype} {label} backward", noarch._triton_relu_backward(grad, result),
              reference_relu_backward(grad, result))
        if result.dim() == 3:
            check(f"{dtype} {label} backward, transposed grad",
                  noarch._triton_relu_backward(grad.transpose(0, 2).contiguous().transpose(0, 2), result),
                  reference_relu_backward(grad, result))

for failure in failures:
    print(failure)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
