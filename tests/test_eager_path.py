"""The eager path: a compiled variant's eager relu() calls its op once, through the dispatcher,
so a dispatch mode or a functorch transform sees it; a noarch variant's calls its Python kernels
directly (no torch.library round trip), so those see the kernels' torch ops. A tensor subclass
gets the op on every variant. Results are checked bit for bit against the reference."""

import importlib

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from reference import assert_bitwise_equal, poisoned_like, random_input, reference_relu, reference_relu_backward
from test_architecture import allowed_private_names


class OpLog(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def op_names(kernel, op: str) -> str:
    return kernel._ops.add_op_namespace_prefix(op).replace("::", ".")


def test_eager_calls_run_the_op_once(kernel, device, noarch):
    if noarch:
        pytest.skip("a noarch variant's eager calls run its Python kernels directly")
    x = random_input(4096, torch.float32, device)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        y = kernel.relu(x)
        o = kernel.relu(x, out=poisoned_like(x))
    namespace = kernel._ops.ops.name + "::"
    assert [e.name for e in profile.events() if e.name.startswith(namespace)] == [
        namespace + "relu", namespace + "relu_out"]
    assert_bitwise_equal(y, reference_relu(x))
    assert_bitwise_equal(o, reference_relu(x))


@pytest.mark.parametrize("op", ["relu", "relu_squared", "relu_and_mul", "relu_squared_and_mul"])
def test_noarch_eager_calls_skip_torch_library(kernel, device, noarch, op):
    if not noarch:
        pytest.skip("a compiled variant's eager calls are its ops")
    x = random_input((8, 64), torch.float32, device)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        y = getattr(kernel, op)(x)
        getattr(kernel, op)(x, out=poisoned_like(y))
    namespace = kernel._ops.ops.name + "::"
    assert not [e.name for e in profile.events() if e.name.startswith(namespace)]


class Wrapped(torch.Tensor):
    """A subclass that may handle an op itself: the package hands it the op."""


def test_a_tensor_subclass_gets_the_op(kernel, device):
    x = random_input(256, torch.float32, device)
    with OpLog() as log:
        y = kernel.relu(x.as_subclass(Wrapped))
    assert f"{op_names(kernel, 'relu')}.default" in log.ops
    assert_bitwise_equal(y.as_subclass(torch.Tensor), reference_relu(x))


def test_a_dispatch_mode_sees_the_op(kernel, device, noarch):
    x = random_input(256, torch.float32, device)
    out = poisoned_like(x)
    with OpLog() as log:
        y = kernel.relu(x)
        kernel.relu(x, out=out)
    if not noarch:  # a noarch variant's kernels are torch ops: the mode sees those
        assert f"{op_names(kernel, 'relu')}.default" in log.ops
        assert f"{op_names(kernel, 'relu_out')}.default" in log.ops
    assert log.ops
    assert_bitwise_equal(y, reference_relu(x))
    assert_bitwise_equal(out, reference_relu(x))


def test_a_dispatch_mode_sees_the_backward_op(kernel, device, noarch):
    x = random_input(256, torch.float32, device).requires_grad_(True)
    grad = random_input(256, torch.float32, device, specials=False)
    y = kernel.relu(x)
    with OpLog() as log:
        y.backward(grad)
    if not noarch:
        assert f"{op_names(kernel, 'relu_backward')}.default" in log.ops
    assert log.ops
    assert_bitwise_equal(x.grad, reference_relu_backward(grad, reference_relu(x.detach())))


def test_vmap(kernel, device):
    x = random_input((4, 64), torch.float32, device)
    assert_bitwise_equal(torch.vmap(kernel.relu)(x), reference_relu(x))


def test_allowed_private_names_exist_in_this_torch():
    # The suite runs under torch 2.13, the noarch suite under 2.9.1 (scripts/test_noarch.sh).
    for full in allowed_private_names():
        parts = full.split(".")
        for split in range(len(parts) - 1, 0, -1):
            try:
                found = importlib.import_module(".".join(parts[:split]))
                break
            except ImportError:
                continue
        for attribute in parts[split:]:
            assert hasattr(found, attribute), f"{full}: torch {torch.__version__} has no {attribute}"
            found = getattr(found, attribute)
