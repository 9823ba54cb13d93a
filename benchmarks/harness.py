"""What the op-against-peers benchmarks (relu_squared.py, gated.py) share, above timing.py: a
point and a peer, checking the peers before timing them, timing one point's peers over hot and
cold buffer sets, the run over the points under a time limit, and the tables.

Each script brings its peers, its references and its points; a peer's `call` takes one buffer
set (a dict of tensors). Records are timing.py's: one per peer, point and mode."""

from __future__ import annotations

import math
import statistics
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from timing import (
    GraphSampler, HostSampler, MachineLoad, QueuedSampler, Rotation, fmt_size, interleaved, measure_when_quiet,
    synchronize, write_results,
)


@dataclass
class Point:
    op: str  # e.g. "forward" / "forward+backward"
    dtype_name: str
    nbytes: int
    shape: tuple


@dataclass
class Peer:
    name: str
    form: str  # what it is compared within: a table of its own
    call: Callable[[dict], object]


def matches(got: torch.Tensor, expected: torch.Tensor) -> bool:
    """True if bit-equal; False if within bfloat16's tolerance; raises otherwise."""
    if torch.equal(got, expected):
        return True
    torch.testing.assert_close(got, expected, rtol=1.6e-2, atol=1e-5)
    return False


def check_peers(peers: list[Peer], check: Callable[[Peer], dict], base: dict) -> tuple[list[Peer], dict, list[dict]]:
    """(the peers that passed, {name: what check returned}, an error record per peer that did
    not): a failing peer is recorded and not timed; the run goes on."""
    good, checks, records = [], {}, []
    for peer in peers:
        try:
            checks[peer.name] = check(peer)
            good.append(peer)
        except Exception as exc:  # noqa: BLE001
            records.append(dict(base, peer=peer.name, form=peer.form, mode="check",
                                error=f"{type(exc).__name__}: {exc}"))
    return good, checks, records


def graph_calls(traffic_bytes: int, sets: int, args) -> int:
    # Enough calls for --min-graph-ms at an H200's bandwidth (2 us floor), every set once per lap.
    estimate = 2e-6 + traffic_bytes / 4e12
    calls = max(args.min_graph_calls, min(2000, math.ceil(args.min_graph_ms * 1e-3 / estimate)))
    return sets * math.ceil(calls / sets)


def time_peers(good: list[Peer], checks: dict, sets: list[dict], rotations: dict[str, int], base: dict, args, *,
               autograd: bool, traffic_bytes: int, set_bytes: Callable[[str], int], host: bool) -> list[dict]:
    """A record per peer and mode, the peers interleaved: each mode ("cold", "hot") uses the
    first `count` sets, rotated (the least recently used next, shared by the peers) when more
    than one. CUDA: forward by graph replay; `autograd` (forward + backward) by calls queued
    behind a GPU sleep; CPU: calibrated host loops. `host`: also host time on the hot set
    (CUDA, dispatch included). set_bytes(form): a set's bytes a peer of that form touches."""
    device, records = args.device, []

    def emit(mode: str, samplers: dict, count: int):
        for name, values in interleaved(samplers, args.repeats).items():
            us = statistics.median(values) * 1e6
            form = next(p.form for p in good if p.name == name)
            records.append(dict(base, peer=name, form=form, mode=mode, us=us, gbps=traffic_bytes / us * 1e-3,
                                samples_us=[round(v * 1e6, 4) for v in values], calls_per_sample=samplers[name].calls,
                                footprint_bytes=count * set_bytes(form), **checks[name]))

    for mode, count in rotations.items():
        used = sets[:count]
        rotation = Rotation(used) if count > 1 else None  # shared by the mode's peers
        samplers = {}
        for peer in good:
            try:
                if device == "cpu":
                    s = HostSampler(peer.call, rotation or used, device)
                    s.calibrate(args.min_sample_ms * 1e-3)
                elif not autograd:
                    s = GraphSampler(peer.call, used, graph_calls(traffic_bytes, count, args))
                else:
                    take = rotation.take if rotation else (lambda: used[0])
                    s = QueuedSampler(lambda call=peer.call, take=take: call(take()), args.train_calls)
                    for _ in range(2):  # warm-up: autograd's first calls, the allocator
                        s.fn()
                samplers[peer.name] = s
            except Exception as exc:  # noqa: BLE001
                records.append(dict(base, peer=peer.name, form=peer.form, mode=mode,
                                    error=f"{type(exc).__name__}: {exc}"))
                synchronize(device)
        emit(mode, samplers, count)
        del samplers
    if host and device == "cuda":
        # Launch-bound: what a Python caller pays per call, dispatch included.
        samplers = {}
        for peer in good:
            s = HostSampler(peer.call, sets[:1], device)
            s.calibrate(args.min_sample_ms * 1e-3)
            samplers[peer.name] = s
        emit("host", samplers, 1)
    return records


def run_points(points: list[Point], measure: Callable[[Point], list[dict]], meta: dict, out_json: Path,
               out_md: Path, markdown: Callable[[dict, list], str], args) -> list[dict]:
    """measure(point) for each point in order, until --time-limit-s; on the CPU each point
    after waiting for a quiet machine and again while others took more than --quiet-share.
    The results and the tables are rewritten after every point: a run cut short keeps them."""
    device = args.device
    load = MachineLoad(args.quiet_share) if device == "cpu" and args.quiet_share < 1 else None
    records: list[dict] = []
    started = time.time()
    for i, point in enumerate(points):
        if args.time_limit_s and time.time() - started > args.time_limit_s:
            meta["stopped_early"] = f"--time-limit-s {args.time_limit_s}: {i} of {len(points)} points"
            break
        print(f"[{i + 1}/{len(points)}] {point.op} {point.dtype_name} {fmt_size(point.nbytes)} "
              f"{'x'.join(map(str, point.shape))} at {time.time() - started:.0f} s", file=sys.stderr, flush=True)
        try:
            records += measure_when_quiet(lambda: measure(point), load, retries=2, wait_s=20.0)
        except Exception as exc:  # noqa: BLE001  (one bad point, e.g. out of memory, must not end the run)
            records.append(dict(op=point.op, dtype=point.dtype_name, bytes=point.nbytes,
                                error=f"{type(exc).__name__}: {exc}", trace=traceback.format_exc(limit=3)))
            if device == "cuda":
                torch.cuda.empty_cache()
        write_results(out_json, meta, records)
        out_md.write_text(markdown(meta, records))
    meta["seconds"] = round(time.time() - started, 1)
    write_results(out_json, meta, records)
    out_md.write_text(markdown(meta, records))
    print(out_md.read_text())
    print(f"-> {out_json}, {out_md}", file=sys.stderr)
    return records


def tables(records: list[dict], forms: list[tuple], label: dict, ours: dict, dtypes: list[str],
           with_shape: bool = False) -> list[str]:
    """Markdown lines: per (op, form, peers) of `forms`, one table of ours (ours[form]) in us,
    then each peer present in us and peer / ours; then the errors and the peers not bit-equal
    to the reference."""
    table = {}
    for r in records:
        if "us" in r:
            key = (r["op"], r["form"], r["dtype"], r["bytes"], tuple(r["shape"]), r["mode"])
            table.setdefault(key, {})[r["peer"]] = r
    lines = []
    for op, form, peers in forms:
        keys = sorted(k for k in table if k[0] == op and k[1] == form)
        present = [p for p in peers if any(p in table[k] for k in keys)]
        if not keys:
            continue
        mine_name = ours[form]
        lines += ["", f"## {op}, {form}: {label[mine_name]} against " + ", ".join(label[p] for p in present), "",
                  "| dtype | size | mode | ours us | " + " | ".join(f"{label[p]} us | ratio" for p in present) + " |",
                  "|---|---|---|---|" + "---|---|" * len(present)]
        for key in sorted(keys, key=lambda k: (dtypes.index(k[2]), k[3], k[4], k[5])):
            row = table[key]
            mine = row.get(mine_name)
            size = fmt_size(key[3]) + (f" ({'x'.join(map(str, key[4]))})" if with_shape else "")
            cells = [key[2], size, key[5], f"{mine['us']:.2f}" if mine else "-"]
            for p in present:
                other = row.get(p)
                cells += [f"{other['us']:.2f}" if other else "-",
                          f"{other['us'] / mine['us']:.2f}x" if other and mine else "-"]
            lines.append("| " + " | ".join(cells) + " |")
    errors = [r for r in records if "error" in r]
    if errors:
        lines += ["", "## Errors", ""] + [f"- {r['op']} {r['dtype']} {fmt_size(r.get('bytes', 0))} {r.get('peer', '')} "
                                          f"{r.get('mode', '')}: {r['error']}" for r in errors]
    inexact = sorted({r["peer"] for r in records if r.get("exact") is False or r.get("grad_exact") is False})
    if inexact:
        lines += ["", "Not bit-equal to the reference (within bfloat16's tolerance): " + ", ".join(inexact)]
    return lines
