"""How every benchmark here times and records, written once: the samplers, interleaving, buffer
rotation, the quiet-machine check, loading a build, NaN-free data, and what a results file
says about the machine, the software and the revision.

Samplers (each has `calls` and `sample()`, seconds per call):
  HostSampler   a host-timed loop of calls, the device synchronized before the clock starts
                and before it stops: what a Python caller pays, dispatch included.
  GraphSampler  GPU time per call from replaying a CUDA graph of `calls` captured calls, CUDA
                events around the replay: no launch gaps, no host in the number.
  QueuedSampler GPU time per call of calls queued behind a GPU sleep, CUDA events around
                them: for work a graph does not capture well (compiled forward + backward);
                host_samples keeps the wall time per call of the untimed pass before each.
A sampler's call takes no argument, or one buffer set (a dict of tensors) and then runs over
the sets it is given: one set is "hot"; several are rotated, the least recently used next.
`interleaved` runs every sampler once per repeat, forward order on even repeats and reversed on
odd ones (A B C C B A ...), so slow drift lands on all peers alike; figures are medians.
Rotation: `cold_sets` rotates past 1.5x the cache (every call reads from memory beyond it),
`within_cache_sets` inside 0.75x of it ("rot": in the cache, never the lines just touched).

benchmarks/benchmark.py does not use this module: it ships alone in the Hub snapshot and
`kernels benchmark` times it with its own runner.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import torch

ROOT = Path(__file__).resolve().parent.parent
KiB, MiB, GiB = 1024, 1024**2, 1024**3
COLD_CACHE_MULTIPLE = 1.5
WITHIN_CACHE_SHARE = 0.75  # the H200's L2: 45 of 60 MiB, two float32 sets of 8 MiB in and out


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


# ----------------------------------------------------------------------------- sizes and data

def parse_size(text: str) -> int:
    m = re.fullmatch(r"(\d+)\s*([KMG]?)(i?B)?", text.strip(), re.IGNORECASE)
    if not m:
        raise ValueError(f"size {text!r}: use e.g. 4KiB, 64MiB, 1GiB")
    return int(m.group(1)) * {"": 1, "K": KiB, "M": MiB, "G": GiB}[m.group(2).upper()]


def fmt_size(nbytes: int) -> str:
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if nbytes >= unit and nbytes % unit == 0:
            return f"{nbytes // unit} {name}"
    return f"{nbytes / MiB:.1f} MiB" if nbytes >= MiB else f"{nbytes} B"


def random_fill(t: torch.Tensor) -> torch.Tensor:
    """NaN-free random data, about half negative: every peer then computes the same values
    (torch maps NaN to NaN, relu to 0)."""
    if t.dtype.is_floating_point:
        return t.copy_(torch.randn(t.shape, device=t.device, dtype=torch.float32))
    info = torch.iinfo(t.dtype)  # randint's bounds must fit int64: int64 gets int32's range
    low, high = max(info.min, -(2**31)), min(info.max, 2**31 - 1) + 1
    return t.copy_(torch.randint(low, high, t.shape, device=t.device, dtype=t.dtype))


def random_tensor(shape, dtype: torch.dtype, device: str) -> torch.Tensor:
    return random_fill(torch.empty(shape, dtype=dtype, device=device))


def relu_reference(x: torch.Tensor) -> torch.Tensor:
    """relu by its definition, independent of every peer."""
    return torch.where(x > 0, x, torch.zeros_like(x))


# ----------------------------------------------------------------------------- buffers

def cold_sets(rotated_bytes_per_set: int, cache_bytes: int, cap: int) -> int:
    """Sets whose rotated bytes together exceed 1.5x the cache (at least 2), capped."""
    return max(2, min(cap, math.ceil(COLD_CACHE_MULTIPLE * cache_bytes / rotated_bytes_per_set) + 1))


def within_cache_sets(bytes_per_set: int, cache_bytes: int, cap: int) -> int:
    """Sets that together fit in 0.75x the cache, capped; below 2 there is no such rotation."""
    return min(cap, int(WITHIN_CACHE_SHARE * cache_bytes // bytes_per_set))


class Buffers:
    """`count` sets of tensors, one pool per role (set i of role r is pools[r][i]), so calls
    can rotate over separate memory; set 0 is the hot set. `shape`: every role's, or a dict
    of each role's (a gated op's x [n, 2d] and its grad [n, d])."""

    def __init__(self, roles: list[str], count: int, shape, dtype, device):
        shapes = shape if isinstance(shape, dict) else dict.fromkeys(roles, shape)
        self.pools = {r: torch.empty((count, math.prod(shapes[r])), dtype=dtype, device=device) for r in roles}
        self.sets = [{r: self.pools[r][i].view(shapes[r]) for r in roles} for i in range(count)]


class Rotation:
    """The sets in turn, the least recently used one next; shared by the peers of one mode so
    that a peer never finds the sets the previous peer just touched."""

    def __init__(self, sets: list):
        self.sets, self.next = sets, 0

    def take(self):
        s = self.sets[self.next]
        self.next = (self.next + 1) % len(self.sets)
        return s


# ----------------------------------------------------------------------------- samplers

class HostSampler:
    """Per-call seconds of a host-timed loop. `call` takes no argument (`sets` None), or one
    set: the hot set when `sets` is a list of one, else the next set of the Rotation `sets`."""

    def __init__(self, call: Callable, sets=None, device: str = "cpu", calls: int = 1):
        self.call, self.sets, self.device, self.calls = call, sets, device, calls

    def _loop(self, calls: int) -> float:
        call, sets = self.call, self.sets
        synchronize(self.device)
        start = time.perf_counter()
        if sets is None:
            for _ in range(calls):
                call()
        elif isinstance(sets, Rotation):
            for _ in range(calls):
                call(sets.take())
        else:
            hot = sets[0]
            for _ in range(calls):
                call(hot)
        synchronize(self.device)
        return time.perf_counter() - start

    def calibrate(self, min_seconds: float) -> float:
        """Grows the loop until one sample lasts min_seconds; returns per-call seconds."""
        self._loop(2)  # warm-up (first-touch page faults, lazy init)
        while True:
            elapsed = self._loop(self.calls)
            if elapsed >= min_seconds or self.calls >= 1 << 20:
                return elapsed / self.calls
            self.calls = min(1 << 20, max(self.calls * 2, int(self.calls * min_seconds / max(elapsed, 1e-7))))

    def sample(self) -> float:
        return self._loop(self.calls) / self.calls


class GraphSampler:
    """Per-call GPU seconds from replaying a CUDA graph of `calls` captured calls, timed with
    CUDA events. `call` takes no argument (`sets` None) or one set; call i gets sets[i % len]."""

    def __init__(self, call: Callable, sets: list | None = None, calls: int = 20):
        self.calls = calls
        run = (lambda i: call()) if sets is None else (lambda i: call(sets[i % len(sets)]))
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm-up outside capture, as torch.cuda.graph asks
            for i in range(3):
                run(i)
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            for i in range(calls):
                run(i)
        self.graph.replay()  # the first replay uploads the graph
        torch.cuda.synchronize()
        self.start, self.end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def sample(self) -> float:
        self.start.record()
        self.graph.replay()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end) * 1e-3 / self.calls


class QueuedSampler:
    """Per-call GPU seconds of `calls` calls of fn(), queued behind a GPU sleep twice as long
    as the host needs to issue them: the events then time the GPU's work back to back."""

    _cycles_per_second: float | None = None

    def __init__(self, fn: Callable, calls: int):
        self.fn, self.calls = fn, calls
        self.host_samples: list[float] = []  # wall seconds per call of each untimed pass, dispatch included

    @classmethod
    def sleep_rate(cls) -> float:
        if cls._cycles_per_second is None:  # torch.cuda._sleep's spin rate, measured once
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(1_000_000)
            start.record()
            torch.cuda._sleep(10_000_000)
            end.record()
            torch.cuda.synchronize()
            cls._cycles_per_second = 10_000_000 / (start.elapsed_time(end) / 1e3)
        return cls._cycles_per_second

    def sample(self) -> float:
        torch.cuda.synchronize()
        begin = time.perf_counter()
        for _ in range(self.calls):
            self.fn()
        torch.cuda.synchronize()
        host = time.perf_counter() - begin
        self.host_samples.append(host / self.calls)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(int(2 * host * self.sleep_rate()) + 1000)
        start.record()
        for _ in range(self.calls):
            self.fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / self.calls


def interleaved(samplers: dict, repeats: int) -> dict[str, list[float]]:
    """Seconds per call of every sampler, `repeats` samples each, A B C C B A ..."""
    names = list(samplers)
    samples = {n: [] for n in names}
    for r in range(repeats):
        for n in (names if r % 2 == 0 else reversed(names)):
            samples[n].append(samplers[n].sample())
    return samples


def medians(samples: dict[str, list[float]]) -> dict[str, float]:
    return {name: statistics.median(values) for name, values in samples.items()}


# ----------------------------------------------------------------------------- a quiet CPU

class MachineLoad:
    """CPU time that other processes take while we measure (Linux /proc/stat). On a shared
    2-core machine one busy neighbour makes every 2-thread run wait a scheduler time slice
    (4-8 ms per call were seen), so CPU benchmarks wait for a quiet machine before each point
    and measure a point again when others took more than `limit` of the cores meanwhile."""

    def __init__(self, limit: float):
        self.limit, self.available, self.cpus = limit, Path("/proc/stat").exists(), os.cpu_count() or 1

    def _busy(self) -> float:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    def start(self) -> None:
        if self.available:
            t = os.times()
            self._t0 = (time.time(), self._busy(), t.user + t.system)

    def others_share(self) -> float | None:
        """Share of all cores used by other processes since start()."""
        if not self.available:
            return None
        wall0, busy0, own0 = self._t0
        t = os.times()
        wall = max(time.time() - wall0, 1e-3)
        return max(0.0, (self._busy() - busy0) - (t.user + t.system - own0)) / (wall * self.cpus)

    def wait_for_quiet(self, max_seconds: float) -> None:
        deadline = time.time() + max_seconds
        while self.available:
            self.start()
            time.sleep(1.0)
            if self.others_share() < self.limit or time.time() > deadline:
                return


def measure_when_quiet(measure: Callable[[], list[dict]], load: MachineLoad | None, retries: int,
                       wait_s: float) -> list[dict]:
    """measure() once (load None), or after waiting for a quiet machine and again (up to
    `retries` times) while others took more than the limit; records get others_cpu_share."""
    if load is None:
        return measure()
    for attempt in range(1 + retries):
        load.wait_for_quiet(wait_s)
        load.start()
        records = measure()
        share = load.others_share()
        if share is None or share < load.limit:
            break
    for r in records:
        r["others_cpu_share"] = None if share is None else round(share, 3)
        r["attempts"] = attempt + 1
    return records


def timed_us(calls: dict, device: str, kind: str, repeats: int, calls_per_sample: int,
             quiet_share: float = 1.0) -> dict:
    """Median us per call of each fn() in `calls`, interleaved: "gpu" by CUDA-graph replay of
    `calls_per_sample` calls, "host" by host-timed loops of that many; on the CPU with
    quiet_share < 1, after waiting for a quiet machine (MachineLoad). Returns {"us": {name: us}}
    and, where the machine was watched, others_cpu_share and attempts."""
    def measure() -> list[dict]:
        make = (lambda fn: GraphSampler(fn, calls=calls_per_sample)) if kind == "gpu" else (
            lambda fn: HostSampler(fn, device=device, calls=calls_per_sample))
        samplers = {name: make(fn) for name, fn in calls.items()}
        return [{"us": {name: s * 1e6 for name, s in medians(interleaved(samplers, repeats)).items()}}]

    load = MachineLoad(quiet_share) if device == "cpu" and quiet_share < 1 else None
    return measure_when_quiet(measure, load, retries=2, wait_s=20.0)[0]


# ----------------------------------------------------------------------------- names and records

def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_isa() -> str:
    """The widest x86 vector ISA the CPU reports (the CPU kernel picks its variant alike)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.machine()
    if re.search(r"\bavx512bw\b", flags):
        return "avx512"
    return "avx2" if re.search(r"\bavx2\b", flags) else "baseline"


def machine(device: str) -> str:
    """The GPU's name, or the CPU's model, ISA, threads and family / model numbers (which tell
    CPU generations apart where a VM hides the model name)."""
    if device == "cuda":
        return torch.cuda.get_device_name(0)
    text = f"{cpu_model()} ({cpu_isa()}), {torch.get_num_threads()} threads"
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
        family, model = (re.search(rf"^{key}\s*:\s*(\S+)", cpuinfo, re.M) for key in ("cpu family", "model"))
        text += f"; cpu family {family and family[1]}, model {model and model[1]}"
    except OSError:
        pass
    return text


def device_label(device: str) -> str:
    """`cpu`, or the GPU's name as a folder name (`h200` for "NVIDIA H200")."""
    if device == "cpu":
        return "cpu"
    name = torch.cuda.get_device_name(0).lower().replace("nvidia", "")
    return re.sub(r"[^a-z0-9]+", "-", name).strip("-") or "cuda"


def last_level_cache_bytes(device: str) -> int:
    if device == "cuda":
        return int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 * MiB))
    for index in (3, 2):
        path = Path(f"/sys/devices/system/cpu/cpu0/cache/index{index}/size")
        if path.exists():
            text = path.read_text().strip().upper()
            return int(text.rstrip("KMG")) * {"K": KiB, "M": MiB, "G": GiB}.get(text[-1], 1)
    return 32 * MiB


def git_revision() -> str:
    """The checkout's short commit, "-dirty" when tracked files differ from it.
    RELU_GIT_REVISION overrides it: set by whoever copies the tree to a machine whose .git is
    not this checkout's (the lent H200's copy)."""
    if os.environ.get("RELU_GIT_REVISION"):
        return os.environ["RELU_GIT_REVISION"]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"
    return (head.stdout.strip() or "unknown") + ("-dirty" if dirty else "")


def load_build(path: Path, device: str | None = None):
    """A build of the package (a checkout, its build/ or one variant directory), as kernels
    loads it: for `device`'s backend, or a variant directory's own backend."""
    from kernels import get_local_kernel

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    metadata = Path(path) / "metadata.json"
    if device is None and metadata.exists():
        device = json.loads(metadata.read_text())["backend"]["type"]
    return get_local_kernel(Path(path), backend=device or "cpu")


def run_meta(device: str, kernel=None, **extra) -> dict:
    """What a results file says about its run: the command, the machine, the software, the
    revision of the code that timed, and the build timed (its op namespace and CPU ISA)."""
    try:
        import triton

        triton_version = triton.__version__
    except Exception:  # noqa: BLE001  (no Triton: a CPU machine)
        triton_version = None
    ops = getattr(getattr(kernel, "_ops", None), "ops", None)
    return {
        "command": "python " + " ".join([str(Path(sys.argv[0]).resolve().relative_to(ROOT))
                                         if Path(sys.argv[0]).resolve().is_relative_to(ROOT) else sys.argv[0],
                                         *sys.argv[1:]]),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "git": git_revision(),
        "device": device_label(device),
        "device_name": torch.cuda.get_device_name(0) if device == "cuda" else cpu_model(),
        "machine": machine(device),
        "threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton_version,
        "kernel_id": getattr(ops, "name", None),
        "cpu_isa": ops.cpu_isa() if ops is not None and hasattr(ops, "cpu_isa") else None,
        "loadavg_start": os.getloadavg(),
        **extra,
    }


def write_results(path: Path, meta: dict, records: list) -> None:
    """Rewritten after every point: a run cut short keeps what it measured."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "records": records}, indent=1) + "\n")
