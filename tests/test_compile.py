"""torch.compile of code that calls relu: one graph (fullgraph=True: a graph break raises),
no recompilation across calls of the same shape, forward and backward equal to eager.

Under torch.compile relu() hands Dynamo relu's definition in aten ops (where(x > 0, x, 0), a
copy for unsigned dtypes) instead of the op, which Inductor cannot fuse (issue 12); float8
keeps the op. The tests below the first block hold that path to the eager op bit for bit,
show the op is absent from the compiled graphs and still called in eager mode.

Most tests use the aot_eager backend: it runs dynamo and AOTAutograd (the joint
forward/backward graph, functionalization of out=) in about a second. The inductor ones
compile C++ on the CPU: 30 s in all with a cold cache on the 2-core dev machine
(TORCHINDUCTOR_CACHE_DIR=<empty dir> pytest tests/test_compile.py -k inductor). On a GPU
the same tests run Triton, and the CUDA graph test runs."""

import copy
import re

import pytest
import torch
from torch import nn
from torch._dynamo.testing import AotEagerAndRecordGraphs, CompileCounterWithBackend
from torch._inductor.utils import run_and_get_code
from torch.utils._python_dispatch import TorchDispatchMode

from reference import (
    BITS_ONLY_DTYPES,
    FLOAT8_DTYPES,
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    assert_bitwise_equal,
    random_input,
    reference_relu,
    reference_relu_backward,
)
from test_autograd import layouts as gradient_layouts


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def compile_counted(fn, backend):
    counter = CompileCounterWithBackend(backend)
    return torch.compile(fn, backend=counter, fullgraph=True), counter


def same_shape_calls(compiled_fn, make_args, calls=3):
    """Calls compiled_fn on fresh arguments of one shape; a call after the first that would
    recompile raises (fail_on_recompile). Returns (arguments before the call, arguments,
    result) per call: out= calls change their arguments."""
    results = []
    for i in range(calls):
        args = make_args()
        before = [a.detach().clone() for a in args]
        with torch.compiler.set_stance("fail_on_recompile" if i > 0 else "default"):
            results.append((before, args, compiled_fn(*args)))
    return results


def layouts(device):
    return {
        "contiguous": lambda: random_input((33, 65), torch.float32, device),
        "transposed": lambda: random_input((65, 33), torch.float32, device).t(),
        "channels-last": lambda: random_input((2, 6, 5, 7), torch.float32, device).contiguous(
            memory_format=torch.channels_last
        ),
        "bfloat16": lambda: random_input((33, 65), torch.bfloat16, device),
    }


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "channels-last", "bfloat16"])
def test_compiled_function_forward_and_backward(kernel, device, layout):
    make_x = layouts(device)[layout]

    def fn(x):
        return kernel.relu(x * 2)

    compiled, counter = compile_counted(fn, "aot_eager")

    def make_args():
        return (make_x().requires_grad_(True),)

    for _, (x,), y in same_shape_calls(compiled, make_args):
        doubled = x.detach() * 2
        assert_bitwise_equal(y, reference_relu(doubled))
        assert y.stride() == fn(x.detach()).stride()
        grad = random_input(tuple(y.shape), y.dtype, device)
        y.backward(grad)
        assert_bitwise_equal(x.grad, reference_relu_backward(grad, doubled) * 2)
    assert counter.frame_count == 1


def test_compiled_function_without_grad(kernel, device):
    compiled, counter = compile_counted(lambda x: kernel.relu(x) + 1, "aot_eager")
    with torch.no_grad():
        for _, (x,), y in same_shape_calls(compiled, lambda: (random_input(1000, torch.float32, device),)):
            assert_bitwise_equal(y, reference_relu(x) + 1)
    assert counter.frame_count == 1


def test_compiled_out_and_in_place(kernel, device):
    def fn(x, out):
        kernel.relu(x, out=out)  # functionalized: out is written back after the graph
        kernel.relu(x, out=x)  # in place
        return out + x

    compiled, counter = compile_counted(fn, "aot_eager")

    def make_args():
        x = random_input(513, torch.float32, device)
        return x, torch.full_like(x, -1)

    for (x_before, _), (x, out), y in same_shape_calls(compiled, make_args):
        expected = reference_relu(x_before)
        assert_bitwise_equal(out, expected)
        assert_bitwise_equal(x, expected)
        assert_bitwise_equal(y, expected * 2)
    assert counter.frame_count == 1


class Block(nn.Module):
    """Linear -> relu -> Linear, the MLP block of a transformer, relu from the kernel."""

    def __init__(self, kernel, width=48, hidden=96):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.act = kernel.layers.ReLU()
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


def train_step(forward, optimizer, x):
    optimizer.zero_grad()
    loss = forward(x).square().mean()
    loss.backward()
    optimizer.step()
    return loss.detach()


@pytest.mark.parametrize("compile_backend", ["aot_eager", pytest.param("inductor", marks=pytest.mark.slow)])
def test_compiled_model_training_matches_eager(kernel, device, compile_backend):
    torch.manual_seed(0)
    eager_model = Block(kernel).to(device)
    compiled_model = copy.deepcopy(eager_model)
    inputs = [torch.randn(16, 48, device=device) for _ in range(3)]

    eager_optimizer = torch.optim.SGD(eager_model.parameters(), lr=0.05)
    eager_losses = [train_step(eager_model, eager_optimizer, x) for x in inputs]
    eager_grads = [p.grad for p in eager_model.parameters()]

    forward, counter = compile_counted(compiled_model, compile_backend)
    optimizer = torch.optim.SGD(compiled_model.parameters(), lr=0.05)
    losses = [train_step(forward, optimizer, inputs[0])]
    with torch.compiler.set_stance("fail_on_recompile"):
        losses += [train_step(forward, optimizer, x) for x in inputs[1:]]
    grads = [p.grad for p in compiled_model.parameters()]

    assert counter.frame_count == 1
    if compile_backend == "aot_eager":  # the same aten calls: bit for bit
        for a, b in zip(losses + grads, eager_losses + eager_grads):
            assert_bitwise_equal(a, b)
    else:  # inductor may fuse and reorder the reductions of the bias gradients
        for a, b in zip(losses + grads, eager_losses + eager_grads):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


# --- relu's definition, not the op, under torch.compile ---------------------------------------

EVERY_DTYPE = SUPPORTED_DTYPES + BITS_ONLY_DTYPES
COMPILE_BACKENDS = ["aot_eager", pytest.param("inductor", marks=pytest.mark.slow)]
NAN, INF = float("nan"), float("inf")
SPECIALS = [NAN, -NAN, INF, -INF, 0.0, -0.0, 1e-40, -1e-40, 2.5, -2.5]


def leaf(x):
    return x.detach().clone().requires_grad_(True)


def with_specials(dtype, device, numel=1000):
    """random_input plus every special value of the dtype, so each compiled graph meets them."""
    if dtype in FLOAT8_DTYPES:  # every bit pattern
        return torch.arange(256, dtype=torch.int32).to(torch.uint8).view(dtype).to(device)
    if dtype in BITS_ONLY_DTYPES:  # wide unsigned: random bytes; relu is a copy there
        return random_input(numel, dtype, device)
    if dtype.is_floating_point:
        specials = torch.tensor(SPECIALS, dtype=torch.float64).to(dtype)
    else:
        info = torch.iinfo(dtype)
        specials = torch.tensor([info.min, info.min + 1, 0, 1, info.max], dtype=torch.int64).to(dtype)
    return torch.cat([random_input(numel, dtype, device), specials.to(device)])


def op_namespaces(graphs) -> set[str]:
    """The namespaces of the operators FX graphs call: "aten", or the kernel's."""
    return {
        node.target.namespace
        for graph in graphs
        for node in graph.graph.nodes
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
    }


@pytest.mark.parametrize("compile_backend", COMPILE_BACKENDS)
def test_compiled_relu_equals_eager_op_for_every_dtype(kernel, device, compile_backend):
    xs = [with_specials(dtype, device) for dtype in EVERY_DTYPE]
    compiled, counter = compile_counted(lambda *xs: [kernel.relu(x) for x in xs], compile_backend)
    for x, y in zip(xs, compiled(*xs)):
        assert_bitwise_equal(y, kernel.relu(x))  # eager: the op
    assert counter.frame_count == 1


@pytest.mark.parametrize("compile_backend", COMPILE_BACKENDS)
def test_compiled_gradient_equals_eager_op(kernel, device, compile_backend):
    """Every special x against every special incoming gradient: NaN in grad must vanish where
    x <= 0 and pass where x > 0, -0.0 must pass as -0.0, as relu_backward does."""
    grid = torch.tensor(SPECIALS, dtype=torch.float64)
    xs = [leaf(grid.repeat_interleave(grid.numel()).to(dtype).to(device)) for dtype in FLOAT_DTYPES]
    grads = [grid.repeat(grid.numel()).to(dtype).to(device) for dtype in FLOAT_DTYPES]
    compiled, counter = compile_counted(lambda *xs: [kernel.relu(x) for x in xs], compile_backend)
    ys = compiled(*xs)
    torch.autograd.backward(ys, grads)
    for x, y, grad in zip(xs, ys, grads):
        eager_x = leaf(x)
        eager_y = kernel.relu(eager_x)
        eager_y.backward(grad)
        assert_bitwise_equal(y, eager_y)
        assert_bitwise_equal(x.grad, eager_x.grad)
        assert_bitwise_equal(x.grad, reference_relu_backward(grad, x.detach()))
    assert counter.frame_count == 1


@pytest.mark.parametrize("compile_backend", COMPILE_BACKENDS)
def test_compiled_training_saves_what_torch_relu_saves(kernel, device, compile_backend):
    """The backward takes relu's result, as torch.relu's does, and the next Linear keeps the
    result anyway: no mask x > 0 (a byte per element) kept besides it, which autograd of a
    bare where(x > 0, x, 0) would keep."""
    torch.manual_seed(0)
    block = Block(kernel).to(device)

    def saved_by(relu):
        torch._dynamo.reset()
        saved = []

        def pack(t):
            saved.append((t.dtype, tuple(t.shape)))
            return t

        forward = torch.compile(lambda x: block.down(relu(block.up(x))), backend=compile_backend, fullgraph=True)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            forward(torch.randn(16, 48, device=device, requires_grad=True)).sum().backward()
        return sorted(saved, key=str)

    assert saved_by(kernel.relu) == saved_by(torch.relu)


def test_compiled_relu_keeps_every_layout(kernel, device):
    for name, x in gradient_layouts(torch.float32, device):
        torch._dynamo.reset()
        x, eager_x = leaf(x), leaf(x)
        y = torch.compile(lambda x: kernel.relu(x), backend="aot_eager", fullgraph=True)(x)
        eager_y = kernel.relu(eager_x)
        assert_bitwise_equal(y, eager_y)
        assert y.stride() == eager_y.stride(), name
        grad = random_input(tuple(y.shape), torch.float32, device)
        y.backward(grad)
        eager_y.backward(grad)
        assert_bitwise_equal(x.grad, eager_x.grad)


def out_and_in_place(relu, x, out):
    relu(x, out=out)
    return relu(out, out=out)


# route -> (function of relu, arguments on a device, backward?): each way compiled code
# reaches relu. "layer" is relu's layers.ReLU, what kernelize puts in a model.
ROUTES = {
    "function": (lambda k: lambda x: k.relu(x).square(), lambda d: (random_input(100, torch.float32, d),), False),
    "function-grad": (lambda k: lambda x: k.relu(x * 2), lambda d: (leaf(random_input(100, torch.float32, d)),), True),
    "layer": (lambda k: k.layers.ReLU(), lambda d: (leaf(random_input(100, torch.bfloat16, d)),), True),
    "out": (
        lambda k: lambda x, out: out_and_in_place(k.relu, x, out),
        lambda d: (random_input(100, torch.int8, d), torch.empty(100, dtype=torch.int8, device=d)),
        False,
    ),
    "uint8": (lambda k: lambda x: k.relu(x) + 1, lambda d: (random_input(100, torch.uint8, d),), False),
}


@pytest.mark.parametrize("route", ROUTES)
def test_compiled_graphs_call_no_kernel_op(kernel, ops, device, route):
    make_fn, make_args, backward = ROUTES[route]
    recorder = AotEagerAndRecordGraphs()
    result = torch.compile(make_fn(kernel), backend=recorder, fullgraph=True)(*make_args(device))
    if backward:
        result.sum().backward()
    assert len(recorder.graphs) == 1 and len(recorder.bw_graphs) == backward
    aot_graphs = recorder.fw_graphs + recorder.bw_graphs
    assert op_namespaces(aot_graphs) == {"aten"}, [g.code for g in aot_graphs]
    assert ops.name not in recorder.graphs[0].code  # Dynamo's graph holds no call either


class RecordOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.called = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.called.append(func)
        return func(*args, **(kwargs or {}))


def test_eager_calls_the_op(kernel, ops, device, noarch):
    if noarch:
        pytest.skip("a noarch variant's eager calls run its Python kernels directly (test_eager_path.py)")
    x = leaf(random_input(100, torch.float32, device))
    out = torch.empty(100, device=device)
    with RecordOps() as recorded:
        kernel.relu(x).backward(torch.ones_like(x))
        kernel.relu(x.detach(), out=out)
        kernel.relu(x.detach())
        kernel.layers.ReLU()(x.detach())
    assert [f for f in recorded.called if f.namespace == ops.name] == [
        ops.relu.default, ops.relu_backward.default, ops.relu_out.default, ops.relu.default, ops.relu.default,
    ]
    assert torch.ops.aten.where.self not in recorded.called


@pytest.mark.parametrize("dtype", EVERY_DTYPE, ids=str)
def test_compiled_graph_keeps_the_op_for_float8_only(kernel, ops, device, dtype):
    """float8 has no aten comparison on the CPU, and Inductor cannot promote it in where."""
    recorder = AotEagerAndRecordGraphs()
    torch.compile(lambda x: kernel.relu(x), backend=recorder, fullgraph=True)(with_specials(dtype, device))
    assert op_namespaces(recorder.fw_graphs) == ({ops.name} if dtype in FLOAT8_DTYPES else {"aten"})


def test_compiled_with_dynamic_shapes_compiles_once(kernel, device):
    def fn(x, out):
        kernel.relu(x.detach(), out=out)
        return kernel.relu(x * 2)

    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(fn, backend=counter, fullgraph=True, dynamic=True)
    for i, shape in enumerate([(5, 7), (17, 3), (2, 64)]):
        x = leaf(random_input(shape, torch.float32, device))
        out = torch.empty(shape, device=device)
        with torch.compiler.set_stance("fail_on_recompile" if i > 0 else "default"):
            y = compiled(x, out)
        assert_bitwise_equal(out, reference_relu(x.detach()))
        assert_bitwise_equal(y, reference_relu(x.detach() * 2))
        grad = random_input(shape, torch.float32, device)
        y.backward(grad)
        assert_bitwise_equal(x.grad, reference_relu_backward(grad, x.detach() * 2) * 2)
    assert counter.frame_count == 1


# case -> (x, out) from a float32 x: every argument the binding rejects that a compiled
# out.copy_ would not (it casts, broadcasts and writes through stride 0), and the others.
BAD_ARGUMENTS = {
    "out-dtype": lambda x: (x, torch.zeros(x.shape, dtype=torch.float64, device=x.device)),
    "out-shape": lambda x: (x, torch.zeros(x.numel() + 1, device=x.device)),
    "out-broadcast-shape": lambda x: (x, torch.zeros((2, x.numel()), device=x.device)),
    "out-expanded": lambda x: (x, torch.zeros(1, device=x.device).expand(x.shape)),
    "x-dtype": lambda x: (x > 0, torch.zeros(x.shape, dtype=torch.bool, device=x.device)),
    "x-requires-grad": lambda x: (leaf(x), torch.zeros_like(x)),
    "out-device": lambda x: (x, torch.zeros(x.shape)),  # on a GPU only
}


def raised_by(fn, *args) -> Exception:
    with pytest.raises(Exception) as raised:
        fn(*args)
    return raised.value


@pytest.mark.parametrize("fullgraph", [True, False], ids=["fullgraph", "graph-breaks-allowed"])
@pytest.mark.parametrize("case", BAD_ARGUMENTS)
def test_compiled_out_rejects_what_eager_rejects_before_writing(kernel, device, case, fullgraph):
    """Compiled relu checks at trace time. With fullgraph=True Dynamo reports the error as
    Unsupported with relu's message in it; else it runs the frame eagerly, so the error is
    eager's, type and words."""
    if case == "out-device" and device != "cuda":
        pytest.skip("needs a tensor on a GPU")
    x, out = BAD_ARGUMENTS[case](random_input(8, torch.float32, device))
    before = out.detach().clone()
    eager_error = raised_by(lambda: kernel.relu(x, out=out))
    assert_bitwise_equal(out, before)
    compiled = torch.compile(lambda x, out: kernel.relu(x, out=out), backend="aot_eager", fullgraph=fullgraph)
    error = raised_by(compiled, x, out)
    assert_bitwise_equal(out, before)
    if fullgraph:
        assert isinstance(error, (torch._dynamo.exc.Unsupported, type(eager_error))), repr(error)
        assert str(eager_error).split(";")[0] in str(error), (str(eager_error), str(error))
    else:
        assert (type(error), str(error)) == (type(eager_error), str(eager_error))


def test_compiled_out_partially_overlapping_x_reads_x_first(kernel, device):
    """The one check compiled relu cannot make: Dynamo does not compare addresses. Eager
    rejects out partially overlapping x; compiled, the graph reads all of x before it
    writes out, so out gets relu of x's values before the call."""
    base = random_input(40, torch.float32, device)
    expected = reference_relu(base[:32])
    with pytest.raises(ValueError, match="partially overlaps"):
        kernel.relu(base[:32], out=base[8:])
    torch.compile(lambda x, out: kernel.relu(x, out=out), backend="aot_eager", fullgraph=True)(base[:32], base[8:])
    assert_bitwise_equal(base[8:], expected)


def generated_kernels(codes) -> int:
    """Kernels in Inductor's output code: C++ on the CPU, Triton on a GPU."""
    return len(re.findall(r"= async_compile\.(?!wait)\w+\(", "\n".join(codes)))


FUSED_BLOCKS = {
    "square": lambda relu: lambda x, s: relu(x).square(),
    "scale-shift": lambda relu: lambda x, s: relu(x) * s + 1.0,
}


@pytest.mark.slow
@pytest.mark.parametrize("block", FUSED_BLOCKS)
def test_inductor_fuses_relu_as_it_fuses_torch_relu(kernel, ops, device, block):
    """Issue 12: the op cost Inductor its fusion. Now one kernel, as with torch.relu."""
    x = with_specials(torch.float32, device).reshape(-1, 10)
    s = random_input(10, torch.float32, device, specials=False)
    y, codes = run_and_get_code(torch.compile(FUSED_BLOCKS[block](kernel.relu), fullgraph=True), x, s)
    torch._dynamo.reset()
    _, torch_codes = run_and_get_code(torch.compile(FUSED_BLOCKS[block](torch.relu), fullgraph=True), x, s)
    assert ops.name not in "\n".join(codes)
    assert generated_kernels(codes) == generated_kernels(torch_codes) == 1
    # Inductor may contract a * s + 1 into one rounding: close, not bitwise, for that block.
    torch.testing.assert_close(y, FUSED_BLOCKS[block](kernel.relu)(x, s), rtol=1e-6, atol=1e-6)


def test_cuda_graphs_reduce_overhead(kernel, device):
    """mode="reduce-overhead": Inductor with CUDA graphs, forward and backward, no skipped
    graph, no recompilation."""
    if device != "cuda":
        pytest.skip("CUDA graphs need a GPU")
    from torch._dynamo.utils import counters

    counters.clear()
    compiled = torch.compile(lambda x: kernel.relu(x * 2).square(), mode="reduce-overhead", fullgraph=True)
    for i in range(4):
        torch.compiler.cudagraph_mark_step_begin()
        x = leaf(random_input((64, 33), torch.float32, device, specials=False))
        grad = random_input((64, 33), torch.float32, device, specials=False)
        with torch.compiler.set_stance("fail_on_recompile" if i > 0 else "default"):
            y = compiled(x)
        y.backward(grad)
        eager_x = leaf(x)
        eager_y = kernel.relu(eager_x * 2).square()
        eager_y.backward(grad)
        torch.testing.assert_close(y, eager_y)
        torch.testing.assert_close(x.grad, eager_x.grad)
    assert counters["inductor"]["cudagraph_skips"] == 0
