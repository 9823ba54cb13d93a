"""What only the CUDA backend can get wrong: 64-bit indexing, CUDA graphs, streams, the
device guard, 16-byte vectors at every misalignment, CPU/CUDA mixes, and the backward
kernel. The contract tests (test_contract.py) run on CUDA too; these add to them."""

import pytest
import torch

from conftest import load_kernel
from reference import (
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    assert_bitwise_equal,
    poisoned_like,
    random_input,
    reference_relu,
    reference_relu_backward,
)

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


@pytest.fixture(scope="module")
def cuda_kernel():
    return load_kernel("cuda")


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_every_misalignment_of_x_and_out(cuda_kernel, dtype):
    # Offsets 1..15 elements put x and out at every position inside a 16-byte vector; the
    # length leaves a head, whole vectors and a tail. Same and different offsets for out.
    length = 1000 + 13
    base = random_input(length + 32, dtype, "cuda")
    for offset in range(1, 16):
        x = base[offset : offset + length]
        expected = reference_relu(x)
        for out_offset in (offset, 0, (offset + 1) % 16, 15 - offset):
            out_base = poisoned_like(base)
            out = out_base[out_offset : out_offset + length]
            cuda_kernel.relu(x, out=out)
            assert_bitwise_equal(out, expected)
            # Nothing outside out was written.
            assert_bitwise_equal(out_base[:out_offset], poisoned_like(out_base[:out_offset]))
            assert_bitwise_equal(out_base[out_offset + length :], poisoned_like(out_base[out_offset + length :]))
        assert_bitwise_equal(cuda_kernel.relu(x), expected)
        # In place at this misalignment, with lengths shorter than one vector too.
        for n in (1, 5, length):
            view = x[:n].clone()
            in_place_base = base.clone()
            target = in_place_base[offset : offset + n]
            cuda_kernel.relu(target, out=target)
            assert_bitwise_equal(target, reference_relu(view))


def test_int8_beyond_2_pow_31_elements(cuda_kernel):
    # 2^31 + 4099 elements: indices past int32, and a tail (4099 is not a multiple of 16).
    n = 2**31 + 4099
    if torch.cuda.mem_get_info()[0] < 3 * n:
        pytest.skip("needs about 6.5 GB of free device memory")
    x = torch.randint(-128, 128, (n,), dtype=torch.int8, device="cuda")
    out = torch.full_like(x, -1)
    cuda_kernel.relu(x, out=out)
    assert torch.equal(out, x.clamp_min(0))
    # The elements past 2^31 against the CPU reference as well.
    tail = slice(2**31 - 8, n)
    assert_bitwise_equal(out[tail], reference_relu(x[tail].cpu()))
    del out
    cuda_kernel.relu(x, out=x)  # in place, the same size
    assert (x >= 0).all()


def test_cuda_graph_capture_and_replay(cuda_kernel):
    x = random_input(3 * 4099, torch.float32, "cuda")
    out = poisoned_like(x)
    static = torch.empty_like(x)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        cuda_kernel.relu(x, out=out)  # warm-up outside the capture
        allocated = cuda_kernel.relu(x[1:])
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        cuda_kernel.relu(x, out=out)
        allocated = cuda_kernel.relu(x[1:])  # odd offset: head and tail inside the graph
    for _ in range(3):
        x.copy_(random_input(x.numel(), torch.float32, "cuda"))
        out.fill_(-1)
        graph.replay()
        torch.cuda.synchronize()
        assert_bitwise_equal(out, reference_relu(x))
        assert_bitwise_equal(allocated, reference_relu(x[1:]))
    del static


def test_runs_on_the_current_non_default_stream(cuda_kernel):
    stream = torch.cuda.Stream()
    x = random_input(1 << 22, torch.bfloat16, "cuda")
    out = poisoned_like(x)
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        # A long kernel ahead of ours on the same stream: if relu ran on another stream, it
        # would read x before this write lands.
        torch.cuda._sleep(2_000_000)
        x.neg_()
        cuda_kernel.relu(x, out=out)
        result = cuda_kernel.relu(x)
    stream.synchronize()
    assert_bitwise_equal(out, reference_relu(x))
    assert_bitwise_equal(result, reference_relu(x))


def test_device_guard_second_gpu(cuda_kernel):
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    with torch.cuda.device(0):
        x = random_input(100_003, torch.float16, "cuda:1")
        out = poisoned_like(x)
        cuda_kernel.relu(x, out=out)
        result = cuda_kernel.relu(x[3:])
        assert result.device == torch.device("cuda:1")
        assert torch.cuda.current_device() == 0
        # The kernel ran on cuda:1's current stream: an event there orders it.
        stream1 = torch.cuda.current_stream(1)
        stream1.synchronize()
    assert_bitwise_equal(out, reference_relu(x))
    assert_bitwise_equal(result, reference_relu(x[3:]))


def test_cpu_cuda_mixes_are_rejected(cuda_kernel):
    x_cuda = random_input(64, torch.float32, "cuda")
    x_cpu = x_cuda.cpu()
    out_cpu = poisoned_like(x_cpu)
    with pytest.raises(ValueError, match="out"):
        cuda_kernel.relu(x_cuda, out=out_cpu)
    assert_bitwise_equal(out_cpu, poisoned_like(x_cpu))
    out_cuda = poisoned_like(x_cuda)
    with pytest.raises((ValueError, RuntimeError), match="cpu|CPU"):
        cuda_kernel.relu(x_cpu, out=out_cuda)
    assert_bitwise_equal(out_cuda, poisoned_like(x_cuda))
    if torch.cuda.device_count() >= 2:
        out_other = poisoned_like(x_cuda).to("cuda:1")
        with pytest.raises(ValueError, match="device"):
            cuda_kernel.relu(x_cuda, out=out_other)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_backward_on_cuda(cuda_kernel, dtype):
    for offset in (0, 1, 3):
        base = random_input(4099 + offset, dtype, "cuda")
        x = base[offset:].detach().requires_grad_()
        y = cuda_kernel.relu(x)
        grad = random_input(x.shape, dtype, "cuda", specials=False)
        y.backward(grad)
        assert_bitwise_equal(x.grad, reference_relu_backward(grad, x.detach()))


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_sizes_around_the_grid(cuda_kernel, dtype):
    # Element counts around one block's worth of vectors and many blocks', at offset 0 and 1.
    element = torch.empty((), dtype=dtype).element_size()
    per_vector = 16 // element
    for vectors in (255, 256, 257, 4096 * 3 + 1):
        for extra in (0, per_vector - 1):
            n = vectors * per_vector + extra
            base = random_input(n + 1, dtype, "cuda")
            for x in (base[:n], base[1:]):
                out = poisoned_like(x)
                cuda_kernel.relu(x, out=out)
                assert_bitwise_equal(out, reference_relu(x))


def dense_policy_edges(element_bytes: int) -> list[int]:
    """Element counts on both sides of every edge of the CUDA dense policy on this device
    (relu-cuda/launch_policy.h): one tile (256 vectors), the wave edge between the 1 x 256 and
    2 x 128 tiles (one vector per resident thread), and the streaming threshold (the forward
    footprint, input + output, at 3/4 of the L2: 3/8 of it per tensor)."""
    props = torch.cuda.get_device_properties(0)
    per_vector = 16 // element_bytes
    tile = 256 * per_vector
    wave = props.multi_processor_count * props.max_threads_per_multi_processor * per_vector
    threshold = (3 * props.L2_cache_size // 8) // element_bytes
    counts = {1, per_vector - 1, per_vector + 1, tile - 1, tile, tile + 1, 3 * tile + 5}
    for edge in (wave, threshold):
        counts |= {edge - per_vector - 1, edge - 1, edge, edge + 1, edge + per_vector + 1}
    return sorted(counts)


@pytest.mark.parametrize("dtype", SUPPORTED_DTYPES, ids=str)
def test_dense_policy_edges(cuda_kernel, dtype):
    """Every dense form at the counts where the policy changes form, at offsets 0, 1 and 3 (a
    head and a tail), out=, allocating and in place; the backward below its own threshold."""
    for n in dense_policy_edges(torch.empty((), dtype=dtype).element_size()):
        base = random_input(n + 3, dtype, "cuda")
        for offset in (0, 1, 3):
            x = base[offset:offset + n]
            want = reference_relu(x)
            out = poisoned_like(x)
            cuda_kernel.relu(x, out=out)
            assert_bitwise_equal(out, want)
            assert_bitwise_equal(cuda_kernel.relu(x), want)
            in_place = x.clone()
            cuda_kernel.relu(in_place, out=in_place)
            assert_bitwise_equal(in_place, want)
        if dtype in FLOAT_DTYPES and n * x.element_size() <= 16 * 2**20:
            leaf = base[1:1 + n].detach().clone().requires_grad_()
            grad = random_input(n, dtype, "cuda", specials=False)
            cuda_kernel.relu(leaf).backward(grad)
            assert_bitwise_equal(leaf.grad, reference_relu_backward(grad, leaf.detach()))
