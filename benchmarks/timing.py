"""How every benchmark and study here times, written once: samplers, interleaving, buffer
rotation, the quiet-machine check, and the names of the machine and of the revision.

Samplers (each has `calls` and `sample()`, seconds per call):
  HostSampler   a host-timed loop of calls, the device synchronized before the clock starts
                and before it stops: what a Python caller pays, dispatch included.
  GraphSampler  GPU time per call from replaying a CUDA graph of `calls` captured calls, CUDA
                events around the replay: no launch gaps, no host in the number.
  QueuedSampler GPU time per call of calls queued behind a GPU sleep, CUDA events around
                them: for work a graph does not capture well (compiled forward + backward).
A sampler's call either takes no argument, or takes one buffer set (a dict of tensors) and
then runs over the sets it is given: one set is "hot"; several are rotated, in order, the
least recently used one next.

`interleaved` runs every sampler once per repeat, forward order on even repeats and
reversed on odd ones (A B C C B A ...), so slow drift lands on all peers alike.

Rotation: `cold_sets` sizes a rotation whose rotated bytes exceed 1.5x the cache (every call
reads from memory beyond it), `within_cache_sets` one that stays inside it (the L2 band's
"rot": data in the cache, but not the same lines call after call).

benchmarks/benchmark.py does not use this module: it ships alone in the Hub snapshot and
`kernels benchmark` times it with its own runner.
"""

from __future__ import annotations

import math
import os
import platform
import re
import statistics
import subprocess
import time
from pathlib import Path
from typing import Callable

import torch

ROOT = Path(__file__).resolve().parent.parent
KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

# Rotated bytes past this multiple of the cache: no call finds its input there ("cold").
COLD_CACHE_MULTIPLE = 1.5
# Rotated bytes within this share of the cache: every set stays resident ("rot"); the H200's
# L2 holds 0.75 x 60 MiB = 45 MiB, two float32 sets of 8 MiB in and 8 MiB out.
WITHIN_CACHE_SHARE = 0.75


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


# ----------------------------------------------------------------------------- buffers

def cold_sets(rotated_bytes_per_set: int, cache_bytes: int, cap: int) -> int:
    """Sets whose rotated bytes together exceed 1.5x the cache (at least 2), capped."""
    return max(2, min(cap, math.ceil(COLD_CACHE_MULTIPLE * cache_bytes / rotated_bytes_per_set) + 1))


def within_cache_sets(bytes_per_set: int, cache_bytes: int, cap: int) -> int:
    """Sets that together fit in 0.75x the cache, capped; below 2 there is no such rotation
    (the caller measures none)."""
    return min(cap, int(WITHIN_CACHE_SHARE * cache_bytes // bytes_per_set))


class Buffers:
    """`count` sets of same-shaped tensors, one pool per role (set i of role r is
    pools[r][i]), so calls can rotate over separate memory; set 0 is the hot set."""

    def __init__(self, roles: list[str], count: int, shape, dtype, device):
        numel = math.prod(shape)
        self.pools = {r: torch.empty((count, numel), dtype=dtype, device=device) for r in roles}
        self.sets = [{r: self.pools[r][i].view(shape) for r in roles} for i in range(count)]


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
    """Per-call seconds of a host-timed loop (one synchronize at each end). `call` takes no
    argument (`sets` None), or one set: the hot set when `sets` is a list of one, else the
    next set of the Rotation `sets`."""

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
    CUDA events. `call` takes no argument (`sets` None) or one set; call i of the graph gets
    sets[i % len(sets)]."""

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
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def sample(self) -> float:
        self.start.record()
        self.graph.replay()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end) * 1e-3 / self.calls


_sleep_cycles_per_second: float | None = None


def _sleep_rate() -> float:
    """torch.cuda._sleep's spin rate, measured once, to size the wait that queues a sample."""
    global _sleep_cycles_per_second
    if _sleep_cycles_per_second is None:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1_000_000)
        start.record()
        torch.cuda._sleep(10_000_000)
        end.record()
        torch.cuda.synchronize()
        _sleep_cycles_per_second = 10_000_000 / (start.elapsed_time(end) / 1e3)
    return _sleep_cycles_per_second


class QueuedSampler:
    """Per-call GPU seconds of `calls` calls of a function of no arguments, queued behind a
    GPU sleep twice as long as the host needs to issue them: the events then time the GPU's
    work back to back, not the host's pace."""

    def __init__(self, fn: Callable, calls: int):
        self.fn, self.calls = fn, calls

    def sample(self) -> float:
        fn, calls = self.fn, self.calls
        torch.cuda.synchronize()
        begin = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        host = time.perf_counter() - begin
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(int(2 * host * _sleep_rate()) + 1000)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3 / calls


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
        self.limit = limit
        self.available = Path("/proc/stat").exists()
        self.cpus = os.cpu_count() or 1

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

    def wait_for_quiet(self, max_seconds: float) -> float | None:
        """Waits (up to max_seconds) for a second in which others use < limit; returns their
        share in the last second looked at."""
        if not self.available:
            return None
        deadline = time.time() + max_seconds
        while True:
            self.start()
            time.sleep(1.0)
            share = self.others_share()
            if share < self.limit or time.time() > deadline:
                return share


def measure_when_quiet(measure: Callable[[], list[dict]], load: MachineLoad | None, retries: int,
                       wait_s: float) -> list[dict]:
    """measure() once (load None), or after waiting for a quiet machine and again (up to
    `retries` times) while others took more than the limit; each record gets
    others_cpu_share and attempts."""
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


# ----------------------------------------------------------------------------- names

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
    """The GPU's name, or the CPU's model, ISA, threads, and family / model numbers (which
    tell CPU generations apart where a VM hides the model name)."""
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
    """The checkout's short commit, "-dirty" (git describe's marker) when tracked files
    differ from it. RELU_GIT_REVISION overrides it: set by whoever copies the tree to a
    machine whose .git is not this checkout's (the lent H200's copy)."""
    if os.environ.get("RELU_GIT_REVISION"):
        return os.environ["RELU_GIT_REVISION"]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"
    return (head.stdout.strip() or "unknown") + ("-dirty" if dirty else "")
