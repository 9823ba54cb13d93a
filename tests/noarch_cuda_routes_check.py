"""The torch-cuda variant's CUDA kernels (_noarch._relu_cuda, _relu_out_cuda,
_relu_backward_cuda) on CPU tensors, every route (as routed, FORCE_PATH torch and triton,
SMALL_CALL_BYTES 64 KiB and 0) for eight dtypes and five layouts, against the reference. The
Triton kernels run under the interpreter; the aten ops run their CPU kernels (CUDA's fmax is
for the H200 run). A dev-machine check of the routing without a GPU, run by hand:

    TRITON_INTERPRET=1 .venv/bin/python tests/noarch_cuda_routes_check.py   (after test_noarch.sh staged .cache/noarch)
"""
import os, sys, contextlib, itertools
assert os.environ.get("TRITON_INTERPRET") == "1"
import torch
sys.path.insert(0, ".cache/noarch/build/torch-cuda"); sys.path.insert(0, "tests")
import relu
from reference import reference_relu, reference_relu_backward, random_input, assert_bitwise_equal
noarch = sys.modules[relu.relu.__module__.rsplit(".", 1)[0] + "._noarch"]
class Null:
    def __init__(self, x): pass
    def __enter__(self): pass
    def __exit__(self, *e): pass
noarch._OnDeviceOf = Null
dtypes = [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.int8, torch.int32, torch.uint8, torch.float8_e4m3fn]
count = 0
for path, small, dtype in itertools.product([None, "torch", "triton"], [64 * 1024, 0], dtypes):
    noarch.FORCE_PATH, noarch.SMALL_CALL_BYTES = path, small
    base = random_input((40, 64), dtype, "cpu")
    for name, x in [("contig", base), ("chunk", base[:, :32]), ("t", base.t()), ("step", base[:, ::2]), ("0-d", base[0, 0])]:
        y = noarch._relu_cuda(x); assert_bitwise_equal(y, reference_relu(x)); count += 1
        o = torch.empty_like(x); noarch._relu_out_cuda(o, x); assert_bitwise_equal(o, reference_relu(x)); count += 1
        if dtype in (torch.float32, torch.bfloat16, torch.float16, torch.float64):
            r = reference_relu(x); g = random_input(tuple(x.shape), dtype, "cpu", specials=False)
            assert_bitwise_equal(noarch._relu_backward_cuda(g, r), reference_relu_backward(g, r)); count += 1
    ip = base.clone(); noarch._relu_out_cuda(ip, ip); assert_bitwise_equal(ip, reference_relu(base)); count += 1
print("ok", count)
