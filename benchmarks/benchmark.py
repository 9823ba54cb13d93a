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

float8 has no torch.relu and no torch.allclose: its reference is the upcast path a user has
today, and the runner is shown both outputs in bfloat16, which holds every float8 value
exactly (ReluDtypeBenchmark.out).
"""

import torch
import torch.nn.functional as F

from kernels.benchmark import Benchmark

BASE_SHAPE = (1024, 1024)
LARGE_SHAPE = (4096, 4096)
FLOAT8_DTYPES = (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)


def random_tensor(shape, dtype, device):
    if dtype in FLOAT8_DTYPES:  # randn * 3 is in range for float8: no NaN, no inf
        return (torch.randn(shape, device=device, dtype=torch.float32) * 3).to(dtype)
    if dtype.is_floating_point:
        return torch.randn(shape, device=device, dtype=torch.float32).to(dtype)
    info = torch.iinfo(dtype)  # randint's bounds must fit int64: int64 gets int32's range
    low, high = max(info.min, -(2**31)), min(info.max, 2**31 - 1) + 1
    return torch.randint(low, high, shape, device=device, dtype=dtype)


def _workloads(cls, workloads: dict) -> None:
    """setup_/benchmark_/verify_<name> for each name -> (setup args, verify method name):
    the runner finds a workload by those three names."""
    for name, (args, verify) in workloads.items():
        setattr(cls, f"setup_{name}", lambda self, args=args: self._prepare(*args))
        setattr(cls, f"benchmark_{name}", lambda self: self._run())
        setattr(cls, f"verify_{name}", lambda self, verify=verify: getattr(self, verify)())


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
    """float16, bfloat16, int8 and float8_e4m3fn at upstream's two sizes, through the
    preallocated out= form. The reference writes into its own preallocated buffer with
    torch's out= form: an allocating reference would time the allocator (and, for large CPU
    tensors, page faults), not ReLU. float8, which torch has no relu for, is compared with
    the upcast path into preallocated buffers: copy to bfloat16, clamp_min in place, copy
    back to float8."""

    seed = 42

    # The runner compares `out` with verify's result through torch.allclose, which has no
    # float8 kernel: it is shown a bfloat16 upcast of a float8 output, made when it reads
    # `out` after the reference ran, outside every timed call. relu writes into `y`.
    @property
    def out(self):
        y = self.y
        return y.to(torch.bfloat16) if y is not None and y.dtype in FLOAT8_DTYPES else y

    @out.setter
    def out(self, value):  # Benchmark.__init__ sets out = None
        self.y = value

    def _prepare(self, shape, dtype):
        self.x = random_tensor(shape, dtype, self.device)
        self.y = torch.empty_like(self.x)
        self.reference = torch.empty_like(self.x)
        if dtype in FLOAT8_DTYPES:  # the upcast path's own preallocated buffer
            self.upcast = torch.empty(shape, dtype=torch.bfloat16, device=self.device)

    def _run(self):
        self.kernel.relu(self.x, out=self.y)

    def _reference(self) -> torch.Tensor:
        return torch.clamp_min(self.x, 0, out=self.reference)

    def _reference_upcast(self) -> torch.Tensor:
        # The upcast path, out= like relu's side (preallocated buffers, no allocator in the
        # timed call): upcast, relu in place, downcast; then bfloat16 for allclose (that last
        # conversion, of the result, is part of the "Ref" time).
        self.upcast.copy_(self.x)
        torch.clamp_min(self.upcast, 0, out=self.upcast)
        self.reference.copy_(self.upcast)
        return self.reference.to(torch.bfloat16)


_workloads(ReluDtypeBenchmark, {
    f"{name}_{size}": ((shape, dtype), "_reference_upcast" if dtype in FLOAT8_DTYPES else "_reference")
    for name, dtype in (("float16", torch.float16), ("bfloat16", torch.bfloat16), ("int8", torch.int8),
                        ("float8_e4m3fn", torch.float8_e4m3fn))
    for size, shape in (("base", BASE_SHAPE), ("large", LARGE_SHAPE))
})


class ReluMisalignedBenchmark(Benchmark):
    """x = base[1:], a view one element into its buffer, and a fresh result: the two
    addresses differ modulo 16 bytes, as for a slice of an activation in a model. At
    LARGE_SHAPE's element count, float32, bfloat16 and int8, allocating like torch.relu."""

    seed = 42

    def _prepare(self, dtype):
        numel = LARGE_SHAPE[0] * LARGE_SHAPE[1]
        self.x = random_tensor((numel + 1,), dtype, self.device)[1:]
        self.out = None

    def _run(self):
        self.out = self.kernel.relu(self.x)

    def _reference(self) -> torch.Tensor:
        return F.relu(self.x)


_workloads(ReluMisalignedBenchmark, {name: ((getattr(torch, name),), "_reference")
                                     for name in ("float32", "bfloat16", "int8")})
