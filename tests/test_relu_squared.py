"""relu_squared(x, out=None): x > 0 ? x*x : 0 computed in float32 (float64 for float64) and
rounded once; its gradient x > 0 ? (2x)*g : 0, a select. Checked against this file's own
reference (float64 arithmetic, exact for these products, rounded once to the dtype), against
torch's F.relu(x).square() and its autograd where they agree, and against TransformerEngine's
srelu/dsrelu definitions; on every layout the relu suite covers, on fresh data every run."""

import pytest
import torch
import torch.nn.functional as F

from reference import FLOAT_DTYPES, assert_bitwise_equal, poisoned_like, random_input
from test_views import OUT_CASES, VIEW_CASES, View, describe, is_dense, poisoned_storage, random_view, view_for
from test_views import case  # noqa: F401  (fixture: a fresh seed per test)

OTHER_DTYPES = [torch.int8, torch.int32, torch.uint8, torch.bool, torch.float8_e4m3fn, torch.complex64]


def _rounded(value64: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A float64 result rounded once to `dtype`. Every product here is exact in float32 for the
    16-bit dtypes, so float64 -> float32 is exact and float32 -> dtype the one rounding."""
    return value64 if dtype == torch.float64 else value64.float().to(dtype)


def reference_relu_squared(x: torch.Tensor) -> torch.Tensor:
    x64 = x.detach().cpu().double()
    y = torch.zeros_like(x64)  # +0 where x <= 0 or NaN
    positive = x64 > 0
    y[positive] = x64[positive] * x64[positive]
    if x.dtype == torch.float32:
        # x*x in float64 is exact (48 bits); the one rounding is to float32, past its range inf.
        y = y.float().double()
    return _rounded(y, x.dtype).to(x.device)


def reference_relu_squared_backward(grad: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    # 2x in the compute type: it overflows to inf there (float32 for the 16-bit dtypes too).
    compute = torch.float64 if x.dtype == torch.float64 else torch.float32
    two_x = (2 * x.detach().cpu().to(compute)).double()
    g64 = grad.detach().cpu().double()
    dx = torch.zeros_like(g64)
    positive = x.detach().cpu().double() > 0
    dx[positive] = two_x[positive] * g64[positive]  # exact in float64 for every dtype but float64
    return _rounded(dx, x.dtype).to(x.device)


def assert_same_gradient(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Bit for bit, except that a NaN gradient (inf * 0, or a NaN grad where x > 0) may carry
    any sign and payload: the element header leaves them unspecified."""
    both_nan = actual.detach().cpu().isnan() & expected.detach().cpu().isnan()
    assert_bitwise_equal(actual.detach().cpu().masked_fill(both_nan, 0), expected.detach().cpu().masked_fill(both_nan, 0))


def overflowing_input(shape, dtype, device) -> torch.Tensor:
    """random_input with values whose square overflows the dtype planted (float16 above 255.9)."""
    x = random_input(shape, dtype, device)
    big = {torch.float16: 300.0, torch.bfloat16: 2e19, torch.float32: 2e19, torch.float64: 2e154}[dtype]
    flat = x.view(-1)
    if flat.numel() >= 4:
        flat[:: max(1, flat.numel() // 4)] = big
    return x


# ---- forward, dense ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("n", [0, 1, 7, 8, 15, 17, 255, 4097, 65536 + 3, 300_001])
def test_forward_matches_reference(kernel, device, dtype, n):
    x = overflowing_input(n, dtype, device)
    before = x.clone()
    y = kernel.relu_squared(x)
    assert_bitwise_equal(y, reference_relu_squared(before))
    assert_bitwise_equal(x, before)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_every_16_bit_pattern(kernel, device, dtype):
    """All 65536 inputs, forward, and backward against a fresh random gradient."""
    x = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(dtype).to(device)
    assert_bitwise_equal(kernel.relu_squared(x), reference_relu_squared(x))
    g = random_input(x.numel(), dtype, device)
    assert_same_gradient(kernel._ops.ops.relu_squared_backward(g, x), reference_relu_squared_backward(g, x))


def test_special_values(kernel, device):
    specials = [float("nan"), -float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-45, -1e-45, 3.0, 1e20]
    x = torch.tensor(specials, dtype=torch.float32, device=device)
    y = kernel.relu_squared(x).cpu()
    want = torch.tensor([0.0, 0.0, float("inf"), 0.0, 0.0, 0.0, 0.0, 0.0, 9.0, float("inf")])
    assert_bitwise_equal(y, want)  # +0, never -0; 1e-45 squared underflows to +0
    sub = torch.tensor([1e-20], dtype=torch.float32, device=device)  # a square that is subnormal
    assert kernel.relu_squared(sub).item() == pytest.approx(1e-40, rel=1e-6) and kernel.relu_squared(sub).item() > 0
    h = torch.tensor([255.9, 256.0, 255.875], dtype=torch.float16, device=device)
    assert kernel.relu_squared(h).cpu().tolist() == [65472.0, float("inf"), 65472.0]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_equals_torch_where_defined(kernel, device, dtype):
    """F.relu(x).square() and its autograd gradient on inputs without NaN where 2x does not
    overflow: the same bits (torch keeps NaN, where this op gives +0)."""
    x = random_input(4099, dtype, device)
    x = torch.where(x.isnan(), torch.zeros_like(x), x).requires_grad_()
    g = random_input(4099, dtype, device).nan_to_num(0.0, 1.0, -1.0)
    ours = kernel.relu_squared(x)
    ours.backward(g)
    x_torch = x.detach().clone().requires_grad_()
    theirs = F.relu(x_torch).square()
    theirs.backward(g)
    assert_bitwise_equal(ours, theirs)
    finite = x.detach().isfinite()
    assert_bitwise_equal(x.grad[finite], x_torch.grad[finite])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_equals_transformer_engine_definitions(kernel, device, dtype):
    """TE's srelu (x > 0 ? x*x : 0) and dsrelu (fmaxf(2x, 0) * g), in float32 as TE computes,
    on the same inputs: equal values. They differ only where x <= 0 and g is NaN or inf
    (TE: 0 * g = NaN; here 0), and in the sign of a zero gradient (TE: 0 * g < 0 = -0.0)."""
    x = random_input(4099, dtype, device)
    g = random_input(4099, dtype, device).nan_to_num(0.0, 1e3, -1e3)
    compute = torch.float64 if dtype == torch.float64 else torch.float32
    xc, gc = x.to(compute), g.to(compute)
    srelu = torch.where(xc > 0, xc * xc, 0).to(dtype)
    dsrelu = (torch.fmax(2 * xc, torch.zeros_like(xc)) * gc).to(dtype)
    assert_bitwise_equal(kernel.relu_squared(x), srelu)
    ours = kernel._ops.ops.relu_squared_backward(g, x)
    torch.testing.assert_close(ours, dsrelu, rtol=0, atol=0, equal_nan=True)  # +0.0 equals -0.0


def test_gradient_is_a_select(kernel, device):
    """NaN or inf gradients where x <= 0 (or x is NaN) give +0, as torch's threshold_backward."""
    x = torch.tensor([-1.0, 0.0, -0.0, float("nan"), -float("inf"), 2.0], device=device)
    g = torch.tensor([float("nan"), float("inf"), -float("inf"), float("nan"), 5.0, 3.0], device=device)
    dx = kernel._ops.ops.relu_squared_backward(g, x).cpu()
    assert_bitwise_equal(dx, torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 12.0]))


# ---- layouts -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("view_case", VIEW_CASES)
def test_views_allocating(kernel, device, case, view_case, dtype):
    view = view_for(view_case, case.rng)
    x = view.over(random_input(view.storage_numel, dtype, device))
    before = x.clone()
    y = kernel.relu_squared(x)
    case.equal(y, reference_relu_squared(before), f"relu_squared(x) [{view.name}] {describe(x)}")
    assert is_dense(y), describe(y)
    like = torch.empty_like(x)
    significant = [d for d in range(x.dim()) if x.shape[d] > 1]
    assert [y.stride(d) for d in significant] == [like.stride(d) for d in significant], describe(y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize(("view_case", "out_form"), OUT_CASES, ids=[f"{c}-out-{f}" for c, f in OUT_CASES])
def test_views_out(kernel, device, case, view_case, out_form, dtype):
    view = view_for(view_case, case.rng, writable=out_form in ("like-x", "in-place"))
    x_storage = random_input(view.storage_numel, dtype, device)
    x = view.over(x_storage)
    expected = reference_relu_squared(x)
    if out_form == "in-place":
        out_storage, out_view = x_storage, view
    elif out_form == "like-x":
        out_storage, out_view = poisoned_storage(view.storage_numel, dtype, device), view
    elif out_form == "strided":
        out_view = random_view(case.rng, shape=tuple(x.shape), expand=False)
        out_storage = poisoned_storage(out_view.storage_numel, dtype, device)
    else:
        out_view = View("contiguous", x.numel(), lambda s: s.view(x.shape))
        out_storage = poisoned_storage(x.numel(), dtype, device)
    out = out_view.over(out_storage)
    before = out_storage.clone()
    what = f"relu_squared(x, out=o) [{out_form}] x {view.name} {describe(x)}; o {describe(out)}"
    assert kernel.relu_squared(x, out=out) is out
    case.equal(out, expected, what)
    case.untouched(out_storage, before, out_view.covered(device), what)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_zero_dim_empty_channels_last_unaligned(kernel, device, dtype):
    for x in (random_input((), dtype, device), random_input((0, 5), dtype, device),
              random_input((2, 3, 9, 7), dtype, device).to(memory_format=torch.channels_last),
              random_input(1001, dtype, device)[1:], random_input(1001, dtype, device)[3:-2]):
        y = kernel.relu_squared(x)
        assert y.shape == x.shape and y.stride() == torch.empty_like(x).stride(), describe(x)
        assert_bitwise_equal(y, reference_relu_squared(x))
    # A misaligned pair: x at an odd element offset, out fresh.
    base = random_input(4099, dtype, device)
    out = poisoned_like(base[:4098].clone())
    kernel.relu_squared(base[1:], out=out)
    assert_bitwise_equal(out, reference_relu_squared(base[1:]))


# ---- errors: raised before any write, naming the argument ---------------------------------------


@pytest.mark.parametrize("dtype", OTHER_DTYPES, ids=str)
def test_other_dtypes_raise_type_error(kernel, device, dtype):
    x = torch.zeros(4, dtype=dtype, device=device)
    with pytest.raises(TypeError, match=r"relu_squared: x has dtype \w+; supported dtypes are "
                                        r"float32, float16, bfloat16, float64$"):
        kernel.relu_squared(x)


def test_out_errors_before_any_write(kernel, device):
    x = random_input(64, torch.float32, device)
    cases = [
        (torch.full((65,), 7.0, device=device), ValueError, "out has shape"),
        (torch.full((64,), 7.0, dtype=torch.float64, device=device), TypeError, "out has dtype float64"),
        (torch.full((1,), 7.0, device=device).expand(64), ValueError, "out has elements that share memory"),
    ]
    for out, error, words in cases:
        before = out.clone()
        with pytest.raises(error, match=f"relu_squared: {words}"):
            kernel.relu_squared(x, out=out)
        assert torch.equal(out, before)
    storage = random_input(128, torch.float32, device)
    before = storage.clone()
    with pytest.raises(ValueError, match="relu_squared: out partially overlaps x"):
        kernel.relu_squared(storage[:64], out=storage[1:65])
    assert_bitwise_equal(storage, before)
    with pytest.raises(RuntimeError, match="relu_squared\\(\\): functions with out="):
        kernel.relu_squared(x.clone().requires_grad_(), out=torch.empty_like(x))


def test_backward_op_errors(ops, device):
    x = random_input(8, torch.float32, device)
    with pytest.raises(ValueError, match="relu_squared_backward: grad_out has shape \\[9\\] but x has shape \\[8\\]"):
        ops.relu_squared_backward(torch.zeros(9, device=device), x)
    with pytest.raises(ValueError, match="relu_squared_backward: x has dtype int8"):
        ops.relu_squared_backward(torch.zeros(8, dtype=torch.int8, device=device), x.to(torch.int8))


# ---- autograd ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped", "unaligned"])
def test_gradient_matches_reference(kernel, device, dtype, layout):
    base = random_input((66, 130), dtype, device)
    x = {"contiguous": base, "transposed": base.t(), "stepped": base[:, ::3], "unaligned": base.view(-1)[1:]}[layout]
    x = x.detach().requires_grad_()
    y = kernel.relu_squared(x)
    g = random_input(y.shape, dtype, device)
    if layout == "transposed":
        g = g.t().contiguous().t()
    y.backward(g)
    assert_bitwise_equal(y, reference_relu_squared(x))
    assert_same_gradient(x.grad, reference_relu_squared_backward(g, x))


def test_gradcheck_and_double_backward(kernel, device):
    x = torch.randn(7, 9, dtype=torch.float64, device=device, requires_grad=True)
    assert torch.autograd.gradcheck(kernel.relu_squared, (x,))
    assert torch.autograd.gradgradcheck(kernel.relu_squared, (x,))


def test_saves_no_more_than_eager_torch(kernel, device):
    """One tensor of x's bytes, as F.relu(x).square() keeps (relu's result, shared by both)."""

    def saved_bytes(fn, x):
        seen = {}

        def pack(t):
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            fn(x)
        return sum(seen.values())

    x = torch.randn(256, 64, device=device, requires_grad=True)
    assert saved_bytes(kernel.relu_squared, x) <= saved_bytes(lambda t: F.relu(t).square(), x)


def test_layer(kernel, device):
    layer = kernel.layers.ReLUSquared()
    assert layer.has_backward and layer.can_torch_compile
    x = random_input((5, 17), torch.bfloat16, device)
    assert_bitwise_equal(layer(x), reference_relu_squared(x))
    assert "relu_squared" in kernel.__all__


# ---- torch.compile ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_compiled_is_decomposed_and_exact(kernel, ops, device, dtype):
    """Under torch.compile the graph holds torch ops Inductor fuses, never the opaque op, and the
    results, forward and backward, equal eager's bit for bit."""
    from torch._dynamo.testing import AotEagerAndRecordGraphs

    torch._dynamo.reset()
    backend = AotEagerAndRecordGraphs()
    fn = torch.compile(lambda t: kernel.relu_squared(t) * 3, backend=backend, fullgraph=True)
    x = random_input((33, 65), dtype, device).requires_grad_()
    y = fn(x)
    g = random_input(y.shape, dtype, device)
    y.backward(g)
    x_eager = x.detach().clone().requires_grad_()
    y_eager = kernel.relu_squared(x_eager) * 3
    y_eager.backward(g)
    assert_bitwise_equal(y, y_eager)
    # Compiled, the gradient is autograd's of r * r: (grad * x) doubled, where the kernel rounds
    # (2x) * grad once. Equal but where grad * x is subnormal in float32 or float64.
    atol = torch.finfo(dtype).tiny if dtype in (torch.float32, torch.float64) else 0
    torch.testing.assert_close(x.grad, x_eager.grad, rtol=0, atol=atol, equal_nan=True)
    graphs = backend.graphs + backend.fw_graphs + backend.bw_graphs
    assert graphs
    assert not any(ops.name in str(node.target) for gm in graphs for node in gm.graph.nodes)
    out = torch.empty_like(x.detach())
    torch.compile(lambda t, o: kernel.relu_squared(t, out=o), backend="aot_eager", fullgraph=True)(x.detach(), out)
    assert_bitwise_equal(out, reference_relu_squared(x))
