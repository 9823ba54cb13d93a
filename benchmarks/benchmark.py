"""Workloads for `kernels benchmark <checkout>` (kernels 0.17.2).

The runner loads the kernel (get_local_kernel on the checkout, or get_kernel for a Hub id),
sets `self.kernel` and `self.device`, seeds, calls `setup_<workload>()`, then times
`benchmark_<workload>()` host-side: perf_counter around each call plus a device synchronize,
10 warm-up and 100 timed calls. That includes the Python and dispatcher path, which decides
the time at small sizes. `verify_<workload>()` returns a reference that the runner compares
with `self.out` (allclose, atol 1e-2); its single timed call is the "Ref" column, too noisy to
be a comparison: benchmarks/sweep.py does the side-by-side measurement (PERFORMANCE.md).

Inputs come from randn / randint: no NaN, so torch's reference (NaN -> NaN) and ours
(NaN -> 0) agree element for element.
"""

import torch
import torch.nn.functional as F

from kernels.benchmark import Benchmark

BASE_SHAPE = (1024, 1024)
LARGE_SHAPE = (4096, 4096)


def random_tensor(shape, dtype, device):
    if dtype.is_floating_point:
        return torch.randn(shape, device=device, dtype=torch.float32).to(dtype)
    info = torch.iinfo(dtype)  # randint's bounds must fit int64: int64 gets int32's range
    low, high = max(info.min, -(2**31)), min(info.max, 2**31 - 1) + 1
    return torch.randint(low, high, shape, device=device, dtype=dtype)


class ReluBenchmark(Benchmark):
    """Upstream's workloads (kernels-community/relu): float32, allocating call, so the
    numbers line up with upstream's own benchmark."""

    seed = 42

    def setup_base(self):
        self.x = random_tensor(BASE_SHAPE, torch.float32, self.device)
        self.out = torch.empty_like(self.x)

    def benchmark_base(self):
        self.out = self.kernel.relu(self.x)

    def verify_base(self) -> torch.Tensor:
        return F.relu(self.x)

    def setup_large(self):
        self.x = random_tensor(LARGE_SHAPE, torch.float32, self.device)
        self.out = torch.empty_like(self.x)

    def benchmark_large(self):
        self.out = self.kernel.relu(self.x)

    def verify_large(self) -> torch.Tensor:
        return F.relu(self.x)


class ReluDtypeBenchmark(Benchmark):
    """float16, bfloat16 and int8 at upstream's two sizes, through the preallocated out=
    form. The reference writes into its own preallocated buffer with torch's out= form:
    an allocating reference would time the allocator (and, for large CPU tensors, page
    faults), not ReLU."""

    seed = 42

    def _prepare(self, shape, dtype):
        self.x = random_tensor(shape, dtype, self.device)
        self.out = torch.empty_like(self.x)
        self.reference = torch.empty_like(self.x)

    def _run(self):
        self.kernel.relu(self.x, out=self.out)

    def _reference(self) -> torch.Tensor:
        return torch.clamp_min(self.x, 0, out=self.reference)

    def setup_float16_base(self):
        self._prepare(BASE_SHAPE, torch.float16)

    def benchmark_float16_base(self):
        self._run()

    def verify_float16_base(self) -> torch.Tensor:
        return self._reference()

    def setup_float16_large(self):
        self._prepare(LARGE_SHAPE, torch.float16)

    def benchmark_float16_large(self):
        self._run()

    def verify_float16_large(self) -> torch.Tensor:
        return self._reference()

    def setup_bfloat16_base(self):
        self._prepare(BASE_SHAPE, torch.bfloat16)

    def benchmark_bfloat16_base(self):
        self._run()

    def verify_bfloat16_base(self) -> torch.Tensor:
        return self._reference()

    def setup_bfloat16_large(self):
        self._prepare(LARGE_SHAPE, torch.bfloat16)

    def benchmark_bfloat16_large(self):
        self._run()

    def verify_bfloat16_large(self) -> torch.Tensor:
        return self._reference()

    def setup_int8_base(self):
        self._prepare(BASE_SHAPE, torch.int8)

    def benchmark_int8_base(self):
        self._run()

    def verify_int8_base(self) -> torch.Tensor:
        return self._reference()

    def setup_int8_large(self):
        self._prepare(LARGE_SHAPE, torch.int8)

    def benchmark_int8_large(self):
        self._run()

    def verify_int8_large(self) -> torch.Tensor:
        return self._reference()
