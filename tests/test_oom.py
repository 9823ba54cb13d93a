"""An allocation that fails inside relu raises torch's own error, in type and text, as
torch.relu's does (issue 28): OOM handlers match on it (accelerate's
find_executable_batch_size, a server retrying with a smaller batch). The binding allocates
through the stable C shim, which loses torch's error; torch-ext/relu/_allocation.py repeats
the failed allocation with torch.empty_like. Every target: relu(x), relu(x) recording a
gradient; then the backward and an out= that copies x, under a memory limit (the CPU: an
address-space limit in a child process; CUDA: the caching allocator's memory fraction). The
CPU's 16 TiB allocation runs under such a limit too: a host whose kernel overcommits memory
(the H200's, 128 GiB) may grant it, and the process then dies faulting it in."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from conftest import REPO_ID

# float32 elements of an expand()ed zero: 16 TiB as a dense result, beyond any CPU or GPU.
HUGE = 2**42


def raised(fn) -> BaseException:
    try:
        fn()
    except Exception as error:  # noqa: BLE001: the error itself is the result
        return error
    raise AssertionError("no error raised")


def same_error(ours: BaseException, torchs: BaseException, device: str) -> None:
    assert type(ours) is type(torchs), f"{type(ours).__name__}: {ours}\nagainst torch's {type(torchs).__name__}: {torchs}"
    if device == "cuda":
        # "CUDA out of memory. Tried to allocate 64.00 TiB. GPU 0 has a total capacity of ...
        # of which ... is free": the free memory may move between the two calls.
        ours_text, torchs_text = str(ours).split(". GPU")[0], str(torchs).split(". GPU")[0]
    else:
        ours_text, torchs_text = str(ours), str(torchs)
    assert ours_text == torchs_text, f"{ours}\nagainst torch's\n{torchs}"


# The child: relu(x) and torch.relu(x) of the 16 TiB x under an address-space limit of what the
# process maps now plus 1 GiB, which no host grants past; prints both errors.
CPU_HUGE_CHILD = textwrap.dedent("""
    import json, resource, sys
    import torch
    from kernels import get_kernel
    kernel = get_kernel(sys.argv[1], version=3, backend=sys.argv[2])
    x = torch.zeros(1, requires_grad=sys.argv[3] == "1").expand(int(sys.argv[4]))
    kernel.relu(torch.zeros(4, requires_grad=True)).sum().backward()  # warm: autograd, threads
    vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))
    errors = []
    for fn in (lambda: kernel.relu(x), lambda: torch.relu(x)):
        try:
            fn()
            errors.append(None)
        except Exception as e:
            errors.append([type(e).__name__, str(e)])
    print(json.dumps(errors))
""")


@pytest.mark.parametrize("grad", [False, True], ids=["no-grad", "recording-grad"])
def test_allocating_relu_beyond_memory_raises_torchs_error(kernel, backend, device, grad):
    if device == "cpu":
        done = subprocess.run([sys.executable, "-c", CPU_HUGE_CHILD, REPO_ID, backend, str(int(grad)), str(HUGE)],
                              capture_output=True, text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
        assert done.returncode == 0, done.stderr[-3000:]
        ours, torchs = json.loads(done.stdout.strip().splitlines()[-1])
        assert torchs is not None and "can't allocate memory" in torchs[1], f"the limit did not bite: {torchs}"
        assert ours == torchs, f"{ours}\nagainst torch's\n{torchs}"
        return
    x = torch.zeros(1, device=device, requires_grad=grad).expand(HUGE)
    ours = raised(lambda: kernel.relu(x))
    torchs = raised(lambda: torch.relu(x))
    assert isinstance(torchs, torch.OutOfMemoryError)
    same_error(ours, torchs, device)


# The child: backward and out= whose allocation (x's bytes) fails under RLIMIT_AS, and torch's
# own error for that allocation under the same limit.
CPU_CHILD = textwrap.dedent("""
    import json, os, resource, sys
    import torch
    from kernels import get_kernel
    kernel = get_kernel(sys.argv[1], version=3, backend=sys.argv[2])
    n = 1 << 25  # float32: 128 MiB a tensor
    x = torch.randn(n, requires_grad=True)
    y = kernel.relu(x)
    grad = torch.randn(n)
    b = torch.randn(3 * n + 3)
    xs, outs = b[::3][:-1], b[::3][1:]  # out one element on along x's lattice: x is copied first
    # Warm: torch's threads, x.grad and autograd's own structures exist before the limit.
    kernel.relu(xs, out=outs)
    y.backward(grad, retain_graph=True)
    vm = int(next(l for l in open("/proc/self/status") if l.startswith("VmSize")).split()[1]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + (64 << 20), resource.RLIM_INFINITY))
    found = {}
    for name, ours, like in (("backward", lambda: y.backward(grad), y), ("out-copy", lambda: kernel.relu(xs, out=outs), xs)):
        errors = []
        for fn in (ours, lambda: torch.empty_like(like)):
            try:
                fn()
                errors.append(None)
            except Exception as e:
                errors.append([type(e).__name__, str(e)])
        found[name] = errors
    print(json.dumps(found))
""")


def test_backward_and_out_copy_beyond_memory_raise_torchs_error_on_cpu(backend, device):
    if device != "cpu":
        pytest.skip("the CPU under an address-space limit; CUDA: the next test")
    done = subprocess.run([sys.executable, "-c", CPU_CHILD, REPO_ID, backend], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for name, (ours, torchs) in found.items():
        assert torchs is not None and "can't allocate memory" in torchs[1], f"{name}: the limit did not bite: {torchs}"
        assert ours == torchs, f"{name}: {ours}\nagainst torch's\n{torchs}"


def test_backward_and_out_copy_beyond_memory_raise_torchs_error_on_cuda(kernel, device):
    if device != "cuda":
        pytest.skip("CUDA: the caching allocator's memory fraction")
    n = 1 << 28  # float32: 1 GiB a tensor
    x = torch.randn(n, device=device, requires_grad=True)
    y = kernel.relu(x)
    grad = torch.randn(n, device=device)
    b = torch.randn(3 * n + 3, device=device)
    xs, outs = b[::3][:-1], b[::3][1:]
    torch.cuda.synchronize()
    total = torch.cuda.get_device_properties(device).total_memory
    try:
        # Room for what is allocated now and less than one more 1 GiB tensor.
        torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_allocated() + (512 << 20)) / total)
        torch.cuda.empty_cache()
        for ours, like in ((lambda: y.backward(grad), y), (lambda: kernel.relu(xs, out=outs), xs)):
            ours_error = raised(ours)
            torchs = raised(lambda: torch.empty_like(like))
            assert isinstance(torchs, torch.OutOfMemoryError), torchs
            same_error(ours_error, torchs, device)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
