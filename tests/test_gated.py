"""The gated ops, x [..., 2d] -> [..., d] with a = x[..., :d], b = x[..., d:]:
relu_and_mul(x, threshold) = (a > threshold ? a : 0) * b and relu_squared_and_mul(x) =
(a > 0 ? a*a : 0) * b, computed in float32 (float64 for float64) in that order and rounded once.
Checked against this file's reference, which follows the same order in the compute type, on
fresh data with specials every run, on odd d, unaligned rows, non-contiguous batches and 3-D
inputs; against eager torch's ReGLU where they agree, and TransformerEngine's definitions."""

import pytest
import torch
import torch.nn.functional as F

from reference import FLOAT_DTYPES, assert_bitwise_equal, random_input

GATES = ["relu_and_mul", "relu_squared_and_mul"]
THRESHOLDS = [0.0, 0.5, -1.0]


def compute_type(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


def reference(x: torch.Tensor, gate: str, threshold: float = 0.0) -> torch.Tensor:
    c = compute_type(x.dtype)
    d = x.shape[-1] // 2
    a, b = x[..., :d].detach().cpu().to(c), x[..., d:].detach().cpu().to(c)
    t = torch.tensor(threshold, dtype=c)  # the threshold in the compute type
    if gate == "relu_and_mul":
        act = torch.where(a > t, a, torch.zeros_like(a))
    else:
        act = torch.where(a > 0, a * a, torch.zeros_like(a))
    return (act * b).to(x.dtype).to(x.device)


def reference_backward(grad: torch.Tensor, x: torch.Tensor, gate: str, threshold: float = 0.0) -> torch.Tensor:
    c = compute_type(x.dtype)
    d = x.shape[-1] // 2
    a, b = x[..., :d].detach().cpu().to(c), x[..., d:].detach().cpu().to(c)
    g = grad.detach().cpu().to(c)
    t = torch.tensor(threshold, dtype=c)
    zero = torch.zeros_like(a)
    if gate == "relu_and_mul":
        grad_a = torch.where(a > t, g * b, zero)
        grad_b = g * torch.where(a > t, a, zero)
    else:
        grad_a = torch.where(a > 0, ((2 * a) * b) * g, zero)
        grad_b = g * torch.where(a > 0, a * a, zero)
    return torch.cat([grad_a, grad_b], -1).to(x.dtype).to(x.device)


def assert_same(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Bit for bit; a NaN may carry any sign and payload (the semantics leave them open)."""
    both_nan = actual.detach().cpu().isnan() & expected.detach().cpu().isnan()
    assert_bitwise_equal(actual.detach().cpu().masked_fill(both_nan, 0), expected.detach().cpu().masked_fill(both_nan, 0))


def call(kernel, gate, x, out=None, threshold=0.0):
    if gate == "relu_and_mul":
        return kernel.relu_and_mul(x, out=out, threshold=threshold)
    return kernel.relu_squared_and_mul(x, out=out)


def backward_op(ops, gate, grad, x, threshold=0.0):
    if gate == "relu_and_mul":
        return ops.relu_and_mul_backward(grad, x, threshold)
    return ops.relu_squared_and_mul_backward(grad, x)


# x of shape [..., 2d] in many layouts, made from fresh random data: name -> fn(dtype, device).
def _wide(shape, dtype, device, extra=3):
    """A [..., 2d] view whose rows start `extra` elements into wider rows: unaligned halves."""
    base = random_input((*shape[:-1], shape[-1] + 2 * extra), dtype, device)
    return base[..., extra : extra + shape[-1]]


LAYOUTS = {
    "contiguous-odd-d": lambda dt, dev: random_input((37, 2 * 33), dt, dev),
    "1-D": lambda dt, dev: random_input((2 * 1001,), dt, dev),
    "3-D": lambda dt, dev: random_input((3, 5, 2 * 64), dt, dev),
    "unaligned-rows": lambda dt, dev: _wide((29, 2 * 515), dt, dev),
    "batch-stepped": lambda dt, dev: random_input((40, 2 * 17), dt, dev)[::3],
    "batch-transposed": lambda dt, dev: random_input((6, 7, 2 * 9), dt, dev).transpose(0, 1),
    "inner-stepped": lambda dt, dev: random_input((11, 4 * 13), dt, dev)[:, ::2],
    "large-rows": lambda dt, dev: _wide((9, 2 * 4099), dt, dev, extra=1),
    "one-element-halves": lambda dt, dev: random_input((50, 2), dt, dev),
    "empty": lambda dt, dev: random_input((0, 8), dt, dev),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("gate", GATES)
def test_forward_and_backward(kernel, ops, device, gate, layout, dtype):
    threshold = 0.5 if gate == "relu_and_mul" else 0.0
    x = LAYOUTS[layout](dtype, device)
    before = x.clone()
    y = call(kernel, gate, x, threshold=threshold)
    assert y.shape == (*x.shape[:-1], x.shape[-1] // 2)
    assert_same(y, reference(before, gate, threshold))
    assert_bitwise_equal(x, before)
    g = random_input(y.shape, dtype, device)
    grad_x = backward_op(ops, gate, g, x, threshold)
    assert grad_x.shape == x.shape
    assert_same(grad_x, reference_backward(g, before, gate, threshold))


@pytest.mark.parametrize("threshold", THRESHOLDS + [float("inf"), -float("inf")])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_thresholds(kernel, device, dtype, threshold):
    x = random_input((17, 2 * 31), dtype, device)
    assert_same(kernel.relu_and_mul(x, threshold=threshold), reference(x, "relu_and_mul", threshold))


@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_out(kernel, device, gate, dtype):
    x = random_input((13, 2 * 21), dtype, device)
    for out in (torch.full((13, 21), -7.0, dtype=dtype, device=device),
                torch.full((21, 13), -7.0, dtype=dtype, device=device).t(),  # non-contiguous
                torch.full((13, 43), -7.0, dtype=dtype, device=device)[:, 1:22]):  # unaligned rows
        assert call(kernel, gate, x, out=out) is out
        assert_same(out, reference(x, gate))


@pytest.mark.parametrize("gate", GATES)
def test_errors_before_any_write(kernel, device, gate):
    x = random_input((4, 10), torch.float32, device)
    cases = [
        (random_input((4, 9), torch.float32, device), None, ValueError, "x has shape \\[4, 9\\]; its last dimension must be even"),
        (random_input((), torch.float32, device), None, ValueError, "x has shape \\[\\]; its last dimension must be even"),
        (x, torch.full((4, 10), 7.0, device=device), ValueError, "out has shape \\[4, 10\\] but must have shape \\[4, 5\\]"),
        (x, torch.full((4, 5), 7.0, dtype=torch.float64, device=device), TypeError, "out has dtype float64"),
        (x, torch.full((1, 5), 7.0, device=device).expand(4, 5), ValueError, "out has elements that share memory"),
        (x.to(torch.int32), None, TypeError, "x has dtype int32; supported dtypes are float32, float16, bfloat16, float64$"),
    ]
    for xi, out, error, words in cases:
        before = None if out is None else out.clone()
        with pytest.raises(error, match=f"{gate}: {words}"):
            call(kernel, gate, xi, out=out)
        if out is not None:
            assert torch.equal(out, before)
    storage = random_input(40, torch.float32, device)
    saved = storage.clone()
    with pytest.raises(ValueError, match=f"{gate}: out overlaps x"):
        call(kernel, gate, storage.view(4, 10), out=storage[:20].view(4, 5))
    assert_bitwise_equal(storage, saved)
    with pytest.raises(RuntimeError, match="functions with out="):
        call(kernel, gate, x.clone().requires_grad_(), out=torch.empty(4, 5, device=device))


def test_backward_op_checks_grad(ops, device):
    x = random_input((4, 10), torch.float32, device)
    with pytest.raises(ValueError, match="relu_and_mul: grad_out has shape \\[4, 4\\] but must have shape \\[4, 5\\]"):
        ops.relu_and_mul_backward(torch.zeros(4, 4, device=device), x, 0.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_reglu_equals_eager_torch(kernel, device, dtype):
    """F.relu(a) * b and its autograd gradient, on inputs without NaN: the same values (the sign
    of a zero may differ: torch's CPU relu keeps -0.0, the gate gives +0)."""
    x = random_input((33, 2 * 40), dtype, device).nan_to_num(0.0, 1e3, -1e3).requires_grad_()
    y = kernel.relu_and_mul(x)
    g = random_input(y.shape, dtype, device).nan_to_num(0.0, 1.0, -1.0)
    y.backward(g)
    x_torch = x.detach().clone().requires_grad_()
    a, b = x_torch.chunk(2, dim=-1)
    y_torch = F.relu(a) * b
    y_torch.backward(g)
    torch.testing.assert_close(y, y_torch, rtol=0, atol=0)
    torch.testing.assert_close(x.grad, x_torch.grad, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_transformer_engine_definitions(kernel, device, dtype):
    """TE's reglu / sreglu (common/util/math.h, activation on the first half, float compute):
    relu(a) * b and srelu(a) * b with srelu(a) = a > 0 ? a*a : 0, equal where finite."""
    x = random_input((21, 2 * 47), dtype, device).nan_to_num(0.0, 1e3, -1e3)
    c = compute_type(dtype)
    a, b = x.to(c).chunk(2, dim=-1)
    reglu = (torch.clamp_min(a, 0) * b).to(dtype)
    sreglu = (torch.where(a > 0, a * a, 0) * b).to(dtype)
    torch.testing.assert_close(kernel.relu_and_mul(x), reglu, rtol=0, atol=0)
    torch.testing.assert_close(kernel.relu_squared_and_mul(x), sreglu, rtol=0, atol=0)


@pytest.mark.parametrize("gate", GATES)
def test_gradcheck_and_double_backward(kernel, device, gate):
    x = torch.randn(5, 2 * 7, dtype=torch.float64, device=device, requires_grad=True)
    fn = (lambda t: kernel.relu_and_mul(t, threshold=0.3)) if gate == "relu_and_mul" else kernel.relu_squared_and_mul
    assert torch.autograd.gradcheck(fn, (x,))
    assert torch.autograd.gradgradcheck(fn, (x,))


def test_layers(kernel, device):
    x = random_input((3, 2 * 8), torch.bfloat16, device)
    fat = kernel.layers.FatreluAndMul()
    assert_same(fat(x), reference(x, "relu_and_mul"))
    fat.threshold = 0.5  # the attribute vLLM's FatreluAndMul carries
    assert_same(fat(x), reference(x, "relu_and_mul", 0.5))
    assert_same(kernel.layers.ReGLU()(x), reference(x, "relu_and_mul"))
    assert_same(kernel.layers.SReGLU()(x), reference(x, "relu_squared_and_mul"))
    for layer in (kernel.layers.FatreluAndMul, kernel.layers.ReGLU, kernel.layers.SReGLU):
        assert layer.has_backward and layer.can_torch_compile


@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_compiled_is_decomposed_and_exact(kernel, ops, device, gate, dtype):
    from torch._dynamo.testing import AotEagerAndRecordGraphs

    torch._dynamo.reset()
    backend = AotEagerAndRecordGraphs()
    fn = torch.compile(lambda t: call(kernel, gate, t, threshold=0.25) * 3, backend=backend, fullgraph=True)
    x = random_input((9, 2 * 17), dtype, device).requires_grad_()
    y = fn(x)
    g = random_input(y.shape, dtype, device)
    y.backward(g)
    x_eager = x.detach().clone().requires_grad_()
    y_eager = call(kernel, gate, x_eager, threshold=0.25) * 3
    y_eager.backward(g)
    assert_same(y, y_eager)
    # Compiled, x's gradient is autograd's: the halves' gradients summed into zeros, so a zero
    # may come out +0 where the kernel writes -0. And autograd of (r * r) * b multiplies
    # grad * b first, the kernel (2a) * b first: two roundings of one exact product, which
    # agree for the 16-bit dtypes only.
    wide = dtype in (torch.float32, torch.float64)
    rtol = 2 * torch.finfo(dtype).eps if wide and gate == "relu_squared_and_mul" else 0
    atol = torch.finfo(dtype).tiny if wide else 0  # subnormal products round apart too
    torch.testing.assert_close(x.grad, x_eager.grad, rtol=rtol, atol=atol, equal_nan=True)
    graphs = backend.graphs + backend.fw_graphs + backend.bw_graphs
    assert graphs and not any(ops.name in str(node.target) for gm in graphs for node in gm.graph.nodes)
