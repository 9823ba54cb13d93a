"""torch.compile of code that calls relu: one graph (fullgraph=True: a graph break raises),
no recompilation across calls of the same shape, forward and backward equal to eager.

Most tests use the aot_eager backend: it runs dynamo and AOTAutograd (the fake kernels,
the joint forward/backward graph, functionalization of relu_out) in about a second.
One test runs inductor, which on CPU compiles C++: 10 s with a cold cache on the 2-core
dev machine (TORCHINDUCTOR_CACHE_DIR=<empty dir> pytest tests/test_compile.py -k inductor)."""

import copy

import pytest
import torch
from torch import nn
from torch._dynamo.testing import CompileCounterWithBackend

from reference import assert_bitwise_equal, random_input, reference_relu, reference_relu_backward


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
