"""The first call of a path made under CUDA-graph capture, then eager calls (issue 28): no
device tensor may be made lazily on a path capture reaches, or its fill is recorded rather
than run and eager calls before the first replay read memory never written (the noarch
variant's cached zero for where(out=): a small float8 out= call, a backward). The graph
pool's memory is made non-zero first (fresh pool memory is often zero by luck). Every CUDA
variant (tests/cuda_variants.py), each in a fresh process."""

import pytest
import torch

from cuda_variants import cuda_variant_dirs, run_child

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

CHILD = """
import sys
from pathlib import Path
import torch
from kernels import get_local_kernel
from reference import assert_bitwise_equal, random_input, reference_relu, reference_relu_backward

kernel = get_local_kernel(Path(sys.argv[1]))
ops = kernel._ops.ops
# Small calls: the noarch variant takes its torch path (where(out=) with a zero) for them.
x8 = random_input(256, torch.float8_e4m3fn, "cuda")
result = kernel.relu(random_input(256, torch.float32, "cuda", specials=False))
grad = random_input(256, torch.float32, "cuda", specials=False)
torch.cuda.synchronize()

# A graph in one pool allocates blocks of every small size and fills them, is replayed, and
# frees them to the pool: the next capture in that pool allocates from non-zero memory.
pool = torch.cuda.graph_pool_handle()
junk_graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(junk_graph, pool=pool):
    junk = [torch.empty(512, dtype=torch.uint8, device="cuda").fill_(0x5A) for _ in range(2048)]
junk_graph.replay()
torch.cuda.synchronize()
del junk

graph = torch.cuda.CUDAGraph()
out8 = torch.empty_like(x8)
with torch.cuda.graph(graph, pool=pool):
    kernel.relu(x8, out=out8)
    grad_in = ops.relu_backward(grad, result)
# Eager calls before the first replay.
eager8 = torch.full_like(x8.view(torch.uint8), 0x33).view(x8.dtype)
kernel.relu(x8, out=eager8)
eager_grad = ops.relu_backward(grad, result)
torch.cuda.synchronize()
assert_bitwise_equal(eager8, reference_relu(x8))
assert_bitwise_equal(eager_grad, reference_relu_backward(grad, result))
graph.replay()
torch.cuda.synchronize()
assert_bitwise_equal(out8, reference_relu(x8))
assert_bitwise_equal(grad_in, reference_relu_backward(grad, result))
print("ok")
"""


@pytest.mark.parametrize("variant_dir", cuda_variant_dirs() if torch.cuda.is_available() else [],
                         ids=lambda d: d.name)
def test_first_calls_under_capture_then_eager(variant_dir):
    assert run_child(CHILD, variant_dir).strip().endswith("ok")
