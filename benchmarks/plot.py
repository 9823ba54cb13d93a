"""PNG plots of a sweep (benchmarks/sweep.py): GB/s against input size, one figure per timing
mode, two panels per dtype that pair forms like benchmarks/report.py does: out= forms (writing
the same `o`; the out= copy ceiling drawn in) and allocating forms (eager and compiled;
x.clone(), the allocating copy, drawn in where the sweep has it). No panel mixes the forms.

    python benchmarks/plot.py results/cpu/sweep.json     # -> results/cpu/sweep_<mode>.png
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import Sweep, fmt_size  # noqa: E402

PANELS = (
    ("out", "out= forms: write the same o", ("relu_out", "clamp_min_out", "triton", "sse_baseline", "row_per_block")),
    ("allocating", "allocating forms: the allocator's block",
     ("relu", "torch.relu", "compile(relu)", "torch.compile")),
)

STYLE = {
    "relu_out": dict(color="tab:red", linewidth=2.2, label="relu(x, out=o) (ours)"),
    "relu": dict(color="tab:orange", linestyle="--", label="relu(x) (ours, allocating)"),
    "torch.relu": dict(color="tab:blue", label="torch.relu(x)"),
    "clamp_min_out": dict(color="tab:cyan", linestyle="--", label="torch.clamp_min(out=)"),
    "torch.compile": dict(color="tab:purple", linestyle=":", marker=".", label="torch.compile(torch.relu) (static)"),
    "compile(relu)": dict(color="tab:brown", linestyle=":", marker="x", label="torch.compile(relu) (ours, static)"),
    "sse_baseline": dict(color="tab:green", label="upstream SSE loop (1 thread)"),
    "row_per_block": dict(color="tab:green", label="upstream one block per row"),
    "triton": dict(color="tab:olive", linestyle="-.", label="best plain Triton (fastest config)"),
}
MODE_TITLE = {
    "hot": "hot: one buffer pair",
    "cold": "cold: inputs rotated, out= forms' outputs too",
    "rot": "rot: x and o sets rotated within the cache",
    "eager": "eager: host-timed per call, dispatch included",
}


def ceiling_points(s: Sweep, dtype: str, mode: str, form: str) -> list[tuple[int, float]]:
    points = []
    for b in s.sizes("forward", dtype):
        if form == "out":
            t = s.ceiling_us("forward", dtype, b, mode)
        else:
            t = s.us("forward", dtype, b, mode, "clone")
        if t:
            points.append((b, 2 * b / t * 1e-3))
    return points


def plot_mode(s: Sweep, mode: str, path: Path) -> None:
    dtypes = s.dtypes("forward")
    per_row = 1 if len(dtypes) == 1 else 2  # dtypes per row, each two panels wide
    cols = 2 * per_row
    rows = -(-len(dtypes) // per_row)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.3 * rows), squeeze=False)
    timing = "GPU time from CUDA-graph replay" if s.meta["device"] != "cpu" and mode != "eager" else "host-timed"
    fig.suptitle(f"relu on {s.meta['device_name']}: {MODE_TITLE.get(mode, mode)} ({timing}); "
                 f"GB/s = 2 x bytes / time; out= and allocating forms apart", fontsize=11)
    flat_axes = list(axes.flat)
    for i, dtype in enumerate(dtypes):
        sizes = s.sizes("forward", dtype)
        peers_here = {p for b in sizes for p in s.table.get(("forward", dtype, b, mode), {})}
        for j, (form, title, peers) in enumerate(PANELS):
            ax = flat_axes[2 * i + j]
            ceiling = ceiling_points(s, dtype, mode, form)
            if ceiling:
                xs, ys = zip(*ceiling)
                label = "copy ceiling (fastest out= copy)" if form == "out" else "x.clone() (allocating copy)"
                ax.plot(xs, ys, color="0.55", linewidth=4, alpha=0.5, label=label)
            for peer in peers:
                if peer not in peers_here:
                    continue
                pts = [(b, r["gbps"]) for b in sizes if (r := s.table.get(("forward", dtype, b, mode), {}).get(peer))]
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, **STYLE.get(peer, dict(label=peer)))
            ax.set_xscale("log", base=2)
            ax.set_title(f"{dtype}: {title}", fontsize=9)
            ax.set_xlabel("input size")
            ax.set_ylabel("GB/s")
            ticks = [b for b in sizes if b & (b - 1) == 0][::2]
            ax.set_xticks(ticks)
            ax.set_xticklabels([fmt_size(b).replace(" ", "") for b in ticks], rotation=45, fontsize=7)
            ax.minorticks_off()
            ax.grid(alpha=0.3)
    for ax in flat_axes[2 * len(dtypes):]:
        ax.axis("off")
    handles = {}
    for ax in flat_axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=4, fontsize=8,
               frameon=False)
    height = fig.get_size_inches()[1]
    legend_rows = -(-len(handles) // 4)
    fig.tight_layout(rect=(0, min(0.3, 0.2 * legend_rows / height), 1, 1 - 0.35 / height))
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep_json", type=Path)
    path = parser.parse_args().sweep_json
    s = Sweep(path)
    for mode in s.modes("forward"):
        target = path.with_name(f"{path.stem}_{mode}.png")
        plot_mode(s, mode, target)
        print(target)


if __name__ == "__main__":
    main()
