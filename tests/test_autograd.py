"""Autograd of relu: the gradient is grad * (x > 0), checked bit for bit against the tests'
own reference; what autograd keeps (and does not keep) around a call; the errors torch
users expect; torch.library.opcheck of every op."""

import sys

import pytest
import torch

from reference import (
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    assert_bitwise_equal,
    poisoned_like,
    random_input,
    reference_relu,
    reference_relu_backward,
)

INTEGER_DTYPES = [d for d in SUPPORTED_DTYPES if d not in FLOAT_DTYPES]
SPECIALS = [float("nan"), -float("nan"), 0.0, -0.0, float("inf"), -float("inf"), 1e-40, -1e-40, 1.0, -1.0]


def layouts(dtype, device):
    """(name, x) pairs: the layouts a gradient must survive. Fresh random data each time."""
    base = random_input((6, 10, 5, 7), dtype, device)
    return [
        ("contiguous", random_input((37, 53), dtype, device)),
        ("odd-size", random_input(1001, dtype, device)),
        ("0-d", random_input((), dtype, device)),
        ("empty", random_input((0, 3), dtype, device)),
        ("transposed", random_input((40, 30), dtype, device).t()),
        ("strided", random_input((40, 64), dtype, device)[:, ::3]),
        ("unaligned", random_input(1003, dtype, device)[1:]),
        ("channels-last", base.contiguous(memory_format=torch.channels_last)),
        ("channels-last-sliced", base.contiguous(memory_format=torch.channels_last)[:, 1:]),
    ]


def leaf(x):
    return x.detach().clone().requires_grad_(True)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_gradient_matches_reference_in_every_layout(kernel, device, dtype):
    for name, x in layouts(dtype, device):
        x = leaf(x)
        y = kernel.relu(x)
        assert_bitwise_equal(y, reference_relu(x))
        # The incoming gradient has specials too, and a layout of its own: NaN where
        # x <= 0 must still give 0, NaN where x > 0 must pass through bit for bit.
        grad = random_input(tuple(y.shape), dtype, device)
        y.backward(grad)
        assert x.grad is not None, name
        assert_bitwise_equal(x.grad, reference_relu_backward(grad, x.detach()))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_gradient_is_zero_at_nan_zero_and_negative_zero(kernel, device, dtype):
    x = leaf(torch.tensor(SPECIALS, dtype=dtype, device=device))
    kernel.relu(x).backward(torch.full_like(x, 3.0))
    grads = dict(zip(["nan", "-nan", "0", "-0", "inf", "-inf"], x.grad.tolist()))
    assert grads == {"nan": 0.0, "-nan": 0.0, "0": 0.0, "-0": 0.0, "inf": 3.0, "-inf": 0.0}
    assert_bitwise_equal(x.grad, reference_relu_backward(torch.full_like(x, 3.0), x.detach()))


def test_gradcheck_float64(kernel, device):
    # Finite differences need the inputs away from the kink at 0.
    for name, x in layouts(torch.float64, device):
        if x.numel() > 2000:
            continue
        x = x.nan_to_num(0.0, 5.0, -5.0)
        x = leaf(torch.where(x.abs() < 0.1, x.sign() * 0.1 + (x == 0) * 0.2, x))
        assert torch.autograd.gradcheck(kernel.relu, (x,)), name


def test_second_derivative_like_torch(kernel, device):
    """Double backward (gradient penalties, Hessian-vector products): the gradient of the
    gradient with respect to the incoming gradient is the same mask, as for torch.relu."""
    x = leaf(torch.randn(9, 13, dtype=torch.float64, device=device) * 3)
    assert torch.autograd.gradgradcheck(kernel.relu, (x,))

    v = leaf(torch.randn_like(x))
    results = []
    for relu in (kernel.relu, torch.relu):
        (grad_x,) = torch.autograd.grad(relu(x), x, v, create_graph=True)
        (grad_v,) = torch.autograd.grad((grad_x**2).sum(), v)
        results.append(grad_v)
    assert_bitwise_equal(results[0], results[1])


def test_saves_only_the_output(kernel, device):
    packed = []

    def pack(t):
        packed.append(t)
        return t

    x = leaf(torch.randn(64, device=device))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = kernel.relu(x)
    assert len(packed) == 1
    assert packed[0].data_ptr() == y.data_ptr() and packed[0].shape == y.shape


def test_modifying_the_saved_output_in_place_is_caught(kernel, device):
    x = leaf(torch.randn(64, device=device))
    y = kernel.relu(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("context", [torch.no_grad, torch.inference_mode], ids=["no_grad", "inference_mode"])
def test_no_autograd_state_without_grad_mode(kernel, device, context):
    x = leaf(random_input(100, torch.float32, device))
    with context():
        y = kernel.relu(x)
        o = poisoned_like(x.detach())
        kernel.relu(x, out=o)  # out= is fine when no gradient is being recorded (as in torch)
    assert y.grad_fn is None and not y.requires_grad
    assert o.grad_fn is None and not o.requires_grad
    assert_bitwise_equal(y, reference_relu(x.detach()))
    assert_bitwise_equal(o, reference_relu(x.detach()))
    if context is torch.inference_mode:
        assert y.is_inference()


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")  # torch's forward_ad import
def test_forward_mode_ad_raises_rather_than_dropping_the_tangent(kernel, device):
    # relu's autograd.Function has no jvp (Dynamo cannot trace one that has); what matters
    # is that a tangent is never lost.
    import torch.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        x = fwAD.make_dual(torch.randn(16, device=device), torch.ones(16, device=device))
        with pytest.raises(RuntimeError, match="implement the jvp"):
            kernel.relu(x)


def test_raw_ops_are_not_differentiable_only_relu_is(ops, kernel, device):
    # The stable ABI has no C++ autograd: the gradient lives in relu() (functions.py). A
    # direct op call says so plainly (no grad_fn) rather than warning at backward time.
    x = leaf(random_input(64, torch.float32, device))
    assert not ops.relu(x).requires_grad
    assert kernel.relu(x).requires_grad


def torch_out_error(x, out):
    """torch's own message for an out= op under autograd, with relu's name in it."""
    with pytest.raises(RuntimeError) as raised:
        torch.clamp_min(x, 0, out=out)
    return str(raised.value).replace("clamp_min()", "relu()")


@pytest.mark.parametrize("grad_on", ["x", "out"])
def test_out_with_grad_raises_torch_error_before_writing(kernel, device, grad_on):
    x = random_input(100, torch.float32, device)
    out = poisoned_like(x)
    if grad_on == "x":
        x.requires_grad_(True)
    else:
        out.requires_grad_(True)
    expected = torch_out_error(x, out)
    assert "don't support automatic differentiation" in expected
    with pytest.raises(RuntimeError) as raised:
        kernel.relu(x, out=out)
    assert str(raised.value) == expected
    assert_bitwise_equal(out, poisoned_like(x))


def test_out_bumps_the_version_like_torch(kernel, device):
    """Writing into a tensor autograd saved must make backward fail, not go silently wrong."""
    for write in (lambda t: torch.clamp_min(t, 0, out=t), lambda t: kernel.relu(t, out=t)):
        x = leaf(torch.randn(32, device=device))
        saved = x.sigmoid()  # sigmoid saves its output for backward
        before = saved._version
        with torch.no_grad():
            write(saved)
        assert saved._version > before
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            saved.sum().backward()


@pytest.mark.parametrize("dtype", INTEGER_DTYPES, ids=str)
def test_integer_forward_has_no_gradient(kernel, device, dtype):
    x = random_input(257, dtype, device)
    with pytest.raises(RuntimeError, match="require gradients"):
        x.requires_grad_(True)
    y = kernel.relu(x)  # grad mode is on: integers still take the plain path
    assert not y.requires_grad and y.grad_fn is None
    assert_bitwise_equal(y, reference_relu(x))


# --- relu_backward, the op autograd calls, called directly -------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_backward_op_matches_reference_for_any_result(ops, device, dtype):
    # Any values as `result`, not only relu outputs: the mask is result > 0.
    for name, result in layouts(dtype, device):
        grad = random_input(tuple(result.shape), dtype, device)
        assert_bitwise_equal(ops.relu_backward(grad, result), reference_relu_backward(grad, result))
        reverse = tuple(reversed(range(result.dim())))
        grad_t = random_input(tuple(reversed(result.shape)), dtype, device).permute(reverse)
        assert_bitwise_equal(ops.relu_backward(grad_t, result), reference_relu_backward(grad_t, result))


def test_backward_op_rejects_bad_arguments(ops, device):
    # The raw ops raise ValueError for every bad argument (std::invalid_argument through
    # the stable ABI); only relu() names dtype mistakes TypeError.
    grad = torch.randn(8, 4, device=device)
    result = torch.randn(8, 4, device=device)
    with pytest.raises(ValueError, match="grad_out has dtype"):
        ops.relu_backward(grad.half(), result)
    with pytest.raises(ValueError, match="grad_out has dtype"):
        ops.relu_backward(grad, result.double())
    with pytest.raises(ValueError, match="grad_out has shape"):
        ops.relu_backward(grad[:4], result)
    with pytest.raises(ValueError, match="grad_out has shape"):
        ops.relu_backward(grad.t(), result)
    for dtype in INTEGER_DTYPES:
        with pytest.raises(ValueError, match="result has dtype"):
            ops.relu_backward(grad.to(dtype), result.to(dtype))
    if device != "cpu":
        with pytest.raises(ValueError, match="grad_out is on cpu"):
            ops.relu_backward(grad.cpu(), result)


# --- opcheck: schema, autograd registration, fake tensors, AOT dispatch ------------------


def opcheck_samples(dtype, device):
    # channels-last-sliced: not dense, so the gradient is contiguous, not channels-last.
    wanted = ("contiguous", "0-d", "transposed", "strided", "channels-last", "channels-last-sliced")
    return [x for name, x in layouts(dtype, device) if name in wanted]


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_opcheck_relu(ops, device, dtype):
    for x in opcheck_samples(dtype, device):
        if dtype.is_floating_point:
            x = leaf(x)  # so opcheck's autograd registration test runs
        torch.library.opcheck(ops.relu.default, (x,))


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_opcheck_relu_out(ops, device, dtype):
    for x in opcheck_samples(dtype, device):
        torch.library.opcheck(ops.relu_out.default, (poisoned_like(x), x))
        torch.library.opcheck(ops.relu_out.default, (x.clone(), x.clone()))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_opcheck_relu_backward(ops, device, dtype):
    for result in opcheck_samples(dtype, device):
        # No NaN in grad: opcheck compares outputs with NaN != NaN.
        grad = random_input(tuple(result.shape), dtype, device, specials=False)
        torch.library.opcheck(ops.relu_backward.default, (grad, result))
        torch.library.opcheck(ops.relu_backward.default, (leaf(grad), leaf(result)))


def test_no_grad_calls_never_enter_python_autograd(kernel, device, monkeypatch):
    # At small sizes the call path is the latency: a call that records nothing must go
    # straight to the op, never through the autograd.Function.
    def refuse(*args):
        raise AssertionError("a no-grad call entered the Python autograd path")

    op_call = sys.modules[kernel.relu.__module__.rpartition(".")[0] + "._op_call"]
    monkeypatch.setattr(op_call.OpFunction, "apply", refuse)
    x = random_input(100, torch.float32, device)
    assert_bitwise_equal(kernel.relu(x), reference_relu(x))
    assert_bitwise_equal(kernel.relu(x, out=poisoned_like(x)), reference_relu(x))
    with torch.no_grad():
        assert_bitwise_equal(kernel.relu(leaf(x)), reference_relu(x))
    with pytest.raises(AssertionError, match="entered the Python autograd"):
        kernel.relu(leaf(x))  # the guard itself works
