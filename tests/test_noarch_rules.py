"""The noarch variants' rule tables (_noarch.device_kernels) run directly, bit for bit against
the reference: each device's rules on its own tensors, and the XPU rules, which nothing here
can run on an Intel GPU, on every device there is (CPU tensors here, CUDA tensors on a GPU
machine): they are torch ops whose semantics follow from relu's definition on any device, so
passing on two devices is the evidence this package can give for a third. Every dtype, the
layouts of the views tests, out= forms, in place, interleaved and sharing views of one
buffer, the backward, and the errors. Also: register_ops(..., "xpu", ...) registers kernels
at the XPU key."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import ROOT
from reference import (
    BITS_ONLY_DTYPES,
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    assert_bitwise_equal,
    poisoned_like,
    random_input,
    reference_relu,
    reference_relu_backward,
)

DEVICES = ["cpu"] + ["cuda"] * torch.cuda.is_available()
# (rules, device): XPU's everywhere; CPU's and CUDA's on their own device (CUDA's fmax is not
# relu on the CPU, whose fmax keeps -0.0).
RUNS = [("xpu", d) for d in DEVICES] + [(d, d) for d in DEVICES]


@pytest.fixture(scope="module")
def noarch(tmp_path_factory):
    """_noarch of a torch-cpu variant staged here (Python only), loaded as kernels loads it."""
    from kernels import get_local_kernel

    build = tmp_path_factory.mktemp("noarch")
    staged = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_variant.py"), "--noarch", "--backend", "cpu",
                             "--build-dir", str(build)], check=True, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    kernel = get_local_kernel(Path(staged.stdout.strip().splitlines()[-1]), backend="cpu")
    return sys.modules[f"{kernel.__name__}._noarch"]


def layouts(dtype, device):
    base = random_input((6, 20, 34), dtype, device)
    yield "contiguous", random_input(4099, dtype, device)
    yield "offset", random_input(4100, dtype, device)[1:]
    yield "permuted-dense", base.permute(2, 0, 1)
    yield "step", base[:, :, ::2]
    yield "chunk", base[..., :17]
    yield "transposed-slice", base[:, 3:, :9].transpose(0, 2)
    yield "channels-last", random_input((2, 6, 5, 7), dtype, device).contiguous(memory_format=torch.channels_last)
    yield "five-dims", random_input((3, 4, 5, 6, 7), dtype, device)[::2, ::2, ::2, ::2, ::2]
    large = random_input((128, 1024), dtype, device)  # float8 from here on CUDA: the Triton pass
    yield "large", large
    yield "large-chunk", large[:, :640]
    yield "0-d", base[1, 2, 3]
    yield "empty", base[:, :0]


@pytest.mark.parametrize("rules, device", RUNS, ids=[f"{r}-rules-on-{d}" for r, d in RUNS])
@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES + BITS_ONLY_DTYPES, ids=str)
def test_rules_match_the_reference(noarch, rules, device, dtype):
    relu, relu_out, _ = noarch.device_kernels(rules)["relu"]
    for name, x in layouts(dtype, device):
        expected = reference_relu(x)
        result = relu(x)
        assert_bitwise_equal(result, expected)
        like = torch.empty_like(x)  # the binding's layout for a result
        significant = [d for d, n in enumerate(x.shape) if n > 1] if x.numel() else []
        assert [result.stride(d) for d in significant] == [like.stride(d) for d in significant], name
        for out in (poisoned_like(like), poisoned_like(expected.contiguous()),
                    poisoned_like(torch.empty(2 * x.numel(), dtype=dtype, device=device))[1::2].view(x.shape)):
            relu_out(out, x)
            assert_bitwise_equal(out, expected)
        in_place = x.clone()
        relu_out(in_place, in_place)
        assert_bitwise_equal(in_place, expected)
    buffer = random_input((8, 12), dtype, device)
    for x, out in ((buffer[:, 0::2], buffer[:, 1::2]),  # no element shared: not copied
                   (buffer.view(-1)[::3][:-1], buffer.view(-1)[::3][1:])):  # shared: x copied first
        expected = reference_relu(x)
        relu_out(out, x)
        assert_bitwise_equal(out, expected)


@pytest.mark.parametrize("rules, device", RUNS, ids=[f"{r}-rules-on-{d}" for r, d in RUNS])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_backward_rule_matches_the_reference(noarch, rules, device, dtype):
    _, _, relu_backward = noarch.device_kernels(rules)["relu"]
    for name, result in layouts(dtype, device):
        grad = random_input(result.shape, dtype, device)
        assert_bitwise_equal(relu_backward(grad, result), reference_relu_backward(grad, result))
        grad_t = random_input(tuple(reversed(result.shape)), dtype, device).permute(tuple(reversed(range(result.dim()))))
        assert_bitwise_equal(relu_backward(grad_t, result), reference_relu_backward(grad_t, result))


@pytest.mark.parametrize("rules, device", RUNS, ids=[f"{r}-rules-on-{d}" for r, d in RUNS])
def test_rules_raise_the_binding_errors_before_any_write(noarch, rules, device):
    relu, relu_out, relu_backward = noarch.device_kernels(rules)["relu"]
    x = random_input(64, torch.float32, device)
    with pytest.raises(ValueError, match="supported dtypes are"):
        relu(x > 0)
    out = poisoned_like(x)
    for bad, match in ((out.double(), "out has dtype"), (out[:8], "out has shape"),
                       (out[:1].expand(64), "share memory")):
        with pytest.raises(ValueError, match=match):
            relu_out(bad, x)
    buffer = random_input(100, torch.float32, device)
    before = buffer.clone()
    with pytest.raises(ValueError, match="partially overlaps"):
        relu_out(buffer[10:70], buffer[:60])
    assert_bitwise_equal(buffer, before)
    with pytest.raises(ValueError, match="grad_out has shape"):
        relu_backward(x[:8], x)


def test_xpu_backend_registers_xpu_kernels(noarch):
    namespace = "_relu_xpu_registration_test"
    ops = noarch.register_ops(namespace, "xpu", "float32=1")
    for op in ("relu", "relu_out", "relu_backward"):
        for key in ("CPU", "XPU"):
            assert torch._C._dispatch_has_kernel_for_dispatch_key(f"{namespace}::{op}", key), (op, key)
        assert not torch._C._dispatch_has_kernel_for_dispatch_key(f"{namespace}::{op}", "CUDA"), op
    assert ops.dtype_table() == "float32=1"
    x = random_input(300, torch.float32, "cpu")
    assert_bitwise_equal(ops.relu(x), reference_relu(x))
