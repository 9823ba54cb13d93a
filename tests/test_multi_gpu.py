"""Two GPUs (issue 30): relu on cuda:1 while cuda:0 is current, no CUDA context on a GPU the
process never used, out= on the other GPU, a CUDA graph and a backward on cuda:1, and one
process per GPU. Every CUDA variant of the release (tests/cuda_variants.py: cu130, cu124,
torch-cuda with RELU_TEST_PREBUILT; this checkout's build and its torch-cuda without), each
case in fresh processes, so that contexts and the current device start as a user's do.

Contexts are read from the driver (cuDevicePrimaryCtxGetState through ctypes on libcuda).
torch itself may open contexts in some paths (autograd's device threads, Inductor): where a
case goes beyond relu's own calls it compares with the same script on torch.relu, and relu
may open no context torch's does not.

With one GPU, the cases run on cuda:0 alone where that still means something (the data on
the current device, the context probe seeing the context relu's device gets, one worker);
the others skip."""

import json
import subprocess
import sys

import pytest
import torch

from conftest import ROOT
from cuda_variants import cuda_variant_dirs, run_child

GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
pytestmark = [pytest.mark.cuda, pytest.mark.skipif(GPUS == 0, reason="needs a CUDA device")]
VARIANTS = cuda_variant_dirs() if GPUS else []
# (data, current): cuda:1 while cuda:0 is current; one GPU: both cuda:0.
DATA, CURRENT = (1, 0) if GPUS >= 2 else (0, 0)
two_gpus = pytest.mark.skipif(GPUS < 2, reason="needs two CUDA devices")

COMMON = r"""
import ctypes, json, sys
from pathlib import Path
import torch
from reference import assert_bitwise_equal, poisoned_like, random_input, reference_relu, reference_relu_backward

_cuda = ctypes.CDLL("libcuda.so.1")
assert _cuda.cuInit(0) == 0

def context_active(ordinal):
    device, flags, active = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
    assert _cuda.cuDeviceGet(ctypes.byref(device), ordinal) == 0
    assert _cuda.cuDevicePrimaryCtxGetState(device, ctypes.byref(flags), ctypes.byref(active)) == 0
    return bool(active.value)

def contexts():
    return [d for d in range(torch.cuda.device_count()) if context_active(d)]

if sys.argv[1] == "torch":  # the control: torch's own relu, same calls
    class kernel:
        @staticmethod
        def relu(x, out=None):
            return torch.relu(x) if out is None else torch.clamp_min(x, 0, out=out)
else:
    from kernels import get_local_kernel
    kernel = get_local_kernel(Path(sys.argv[1]))
"""

# x on `data` while `current` is current: allocating, out=, in place, a strided view; the
# result on data's device, bit-exact; on data's current stream (a side stream there, behind a
# long kernel); the current device unchanged.
ON_OTHER_DEVICE = COMMON + r"""
data, current = int(sys.argv[2]), int(sys.argv[3])
dev = torch.device("cuda", data)
torch.cuda.set_device(current)
base = random_input((64, 4098), torch.bfloat16, dev)
for x in (base, base[:, ::2], base[1:, 3:]):
    expected = reference_relu(x)
    result = kernel.relu(x)
    assert result.device == dev, result.device
    assert_bitwise_equal(result, expected)
    out = poisoned_like(x)
    kernel.relu(x, out=out)
    assert_bitwise_equal(out, expected)
    in_place = x.clone()
    kernel.relu(in_place, out=in_place)
    assert_bitwise_equal(in_place, expected)
    assert torch.cuda.current_device() == current
side = torch.cuda.Stream(device=dev)
torch.cuda.synchronize(dev)
torch.cuda.set_stream(side)  # side becomes data's current stream (and data current) ...
torch.cuda.set_device(current)  # ... then current is made current again
assert torch.cuda.current_stream(dev) == side
x = random_input(1 << 22, torch.float32, dev)
out = poisoned_like(x)
with torch.cuda.device(dev):
    torch.cuda._sleep(20_000_000)  # a long kernel ahead on side: a relu elsewhere reads x early
x.neg_()  # on side
kernel.relu(x, out=out)
result = kernel.relu(x)
assert torch.cuda.current_device() == current
side.synchronize()
assert_bitwise_equal(out, reference_relu(x))
assert_bitwise_equal(result, reference_relu(x))
print("ok")
"""

# A fresh process that touches only `data`, never calling set_device: which primary contexts
# exist after relu's forward calls, and after a backward.
CONTEXTS = COMMON + r"""
data = int(sys.argv[2])
dev = torch.device("cuda", data)
# No NaN: the torch.relu control keeps it, and its bits are checked as relu's.
x = random_input((256, 1030), torch.float32, dev, specials=False)
found = {"before": contexts()}
result = kernel.relu(x)
out = poisoned_like(x)
kernel.relu(x, out=out)
kernel.relu(x[:, ::2])
torch.cuda.synchronize(dev)
assert_bitwise_equal(result, reference_relu(x))
found["forward"] = contexts()
leaf = x.clone().requires_grad_(True)
grad = random_input(x.shape, torch.float32, dev, specials=False)
kernel.relu(leaf).backward(grad)
torch.cuda.synchronize(dev)
assert_bitwise_equal(leaf.grad, reference_relu_backward(grad, x))
found["backward"] = contexts()
print(json.dumps(found))
"""

# out on the other GPU: rejected, and nothing written.
REJECT_OUT = COMMON + r"""
x = random_input(4099, torch.float32, "cuda:0")
out = poisoned_like(x).to("cuda:1")
try:
    kernel.relu(x, out=out)
    raise SystemExit("out on another GPU was accepted")
except ValueError as error:
    assert "device" in str(error), error
assert_bitwise_equal(out, poisoned_like(x).to("cuda:1"))
print("ok")
"""

# A CUDA graph captured on `data` while `current` is current, replayed with new inputs; a
# backward on `data`.
GRAPH_BACKWARD = COMMON + r"""
data, current = int(sys.argv[2]), int(sys.argv[3])
dev = torch.device("cuda", data)
torch.cuda.set_device(current)
x = random_input(3 * 4099, torch.float32, dev)
out = poisoned_like(x)
with torch.cuda.device(dev):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture
        kernel.relu(x, out=out)
        kernel.relu(x[1:])
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        kernel.relu(x, out=out)
        allocated = kernel.relu(x[1:])
assert torch.cuda.current_device() == current
for _ in range(3):
    x.copy_(random_input(x.numel(), torch.float32, dev))
    out.fill_(-1)
    graph.replay()
    torch.cuda.synchronize(dev)
    assert_bitwise_equal(out, reference_relu(x))
    assert_bitwise_equal(allocated, reference_relu(x[1:]))
leaf = random_input((33, 257), torch.float16, dev).requires_grad_(True)
grad = random_input(leaf.shape, torch.float16, dev, specials=False)
kernel.relu(leaf[:, 1:]).backward(grad[:, 1:])
expected = torch.zeros_like(grad)
expected[:, 1:] = reference_relu_backward(grad[:, 1:], leaf.detach()[:, 1:])
assert leaf.grad.device == dev
assert_bitwise_equal(leaf.grad, expected)
assert torch.cuda.current_device() == current
print("ok")
"""

# One process per GPU (started together, neither calling set_device): relu, its backward and a
# torch.compile'd block on cuda:<rank>; the contexts it leaves.
WORKER = COMMON + r"""
rank = int(sys.argv[2])
dev = torch.device("cuda", rank)
x = random_input((512, 1024), torch.float32, dev, specials=False)
assert_bitwise_equal(kernel.relu(x), reference_relu(x))
leaf = x.clone().requires_grad_(True)
grad = random_input(x.shape, torch.float32, dev, specials=False)
kernel.relu(leaf).backward(grad)
assert_bitwise_equal(leaf.grad, reference_relu_backward(grad, x))
block = torch.compile(lambda t: kernel.relu(t).square() * 0.5, fullgraph=True)
compiled = block(x)
torch.testing.assert_close(compiled, reference_relu(x).square() * 0.5, rtol=0, atol=0)
torch.cuda.synchronize(dev)
print(json.dumps(contexts()))
"""


@pytest.fixture(params=VARIANTS, ids=lambda d: d.name)
def variant_dir(request):
    return request.param


def test_relu_on_a_device_that_is_not_current(variant_dir):
    assert run_child(ON_OTHER_DEVICE, variant_dir, str(DATA), str(CURRENT)).strip().endswith("ok")


def contexts_of(impl, data: int) -> dict:
    return json.loads(run_child(CONTEXTS, impl, str(data)).strip().splitlines()[-1])


@pytest.mark.parametrize("data", range(min(GPUS, 2)), ids=lambda d: f"only-cuda{d}")
def test_no_context_on_a_gpu_never_used(variant_dir, data):
    ours = contexts_of(variant_dir, data)
    # The probe sees the context of the device used, and no other before.
    assert data in ours["forward"], ours
    assert set(ours["before"]) <= {data}, ours
    assert ours["forward"] == [data], f"relu's forward calls on cuda:{data} left contexts on {ours['forward']}"
    torchs = contexts_of("torch", data)
    assert set(ours["backward"]) <= set(torchs["backward"]), (ours, torchs)


@two_gpus
def test_out_on_the_other_gpu_is_rejected_before_any_write(variant_dir):
    assert run_child(REJECT_OUT, variant_dir).strip().endswith("ok")


def test_graph_and_backward_on_a_device_that_is_not_current(variant_dir):
    assert run_child(GRAPH_BACKWARD, variant_dir, str(DATA), str(CURRENT)).strip().endswith("ok")


def run_workers(impl) -> list[list[int]]:
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(impl), str(rank)], cwd=ROOT / "tests",
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for rank in range(min(GPUS, 2))]
    found = []
    for rank, worker in enumerate(workers):
        stdout, stderr = worker.communicate(timeout=600)
        if worker.returncode != 0 and "libcudart.so.12" in stderr:
            pytest.skip("libcudart.so.12 is not on LD_LIBRARY_PATH")
        assert worker.returncode == 0, f"worker {rank} ({impl}):\n{stderr[-4000:]}"
        found.append(json.loads(stdout.strip().splitlines()[-1]))
    return found


def test_one_process_per_gpu(variant_dir):
    ours = run_workers(variant_dir)
    torchs = run_workers("torch")
    for rank, (mine, theirs) in enumerate(zip(ours, torchs)):
        assert rank in mine, (rank, mine)
        assert set(mine) <= set(theirs), f"worker on cuda:{rank}: contexts {mine}, torch.relu's {theirs}"
