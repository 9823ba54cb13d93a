"""PNG plots of a sweep (benchmarks/sweep.py): GB/s against input size, one panel per dtype,
one figure per timing mode, the copy ceiling drawn in.

    python benchmarks/plot.py results/cpu/sweep.json     # -> results/cpu/sweep_<mode>.png
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import CEILINGS, Sweep, fmt_size  # noqa: E402

STYLE = {
    "relu_out": dict(color="tab:red", linewidth=2.2, label="relu(x, out=o) (ours)"),
    "relu": dict(color="tab:orange", linestyle="--", label="relu(x) (ours, allocating)"),
    "torch.relu": dict(color="tab:blue", label="torch.relu(x)"),
    "clamp_min_out": dict(color="tab:cyan", linestyle="--", label="torch.clamp_min(out=)"),
    "torch.compile": dict(color="tab:purple", linestyle=":", marker=".", label="torch.compile (static)"),
    "sse_baseline": dict(color="tab:green", label="upstream SSE loop (1 thread)"),
    "row_per_block": dict(color="tab:green", label="upstream one block per row"),
}
MODE_TITLE = {
    "hot": "hot: one buffer pair",
    "cold": "cold: rotated buffers > 1.5x cache",
    "eager": "eager: host-timed per call, dispatch included",
}


def plot_mode(s: Sweep, mode: str, path: Path) -> None:
    dtypes = s.dtypes("forward")
    cols = 3 if len(dtypes) > 4 else min(2, len(dtypes))
    rows = -(-len(dtypes) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.6 * rows), squeeze=False)
    timing = "GPU time from CUDA-graph replay" if s.meta["device"] != "cpu" and mode != "eager" else "host-timed"
    fig.suptitle(f"relu on {s.meta['device_name']}: {MODE_TITLE.get(mode, mode)} ({timing}); "
                 f"GB/s = 2 x bytes / time", fontsize=11)
    for ax, dtype in zip(axes.flat, dtypes):
        sizes = s.sizes("forward", dtype)
        peers = sorted({p for b in sizes for p in s.table.get(("forward", dtype, b, mode), {})})
        ceiling = []
        for b in sizes:
            t = s.ceiling_us("forward", dtype, b, mode)
            if t:
                ceiling.append((b, 2 * b / t * 1e-3))
        if ceiling:
            xs, ys = zip(*ceiling)
            ax.plot(xs, ys, color="0.55", linewidth=4, alpha=0.5, label="copy ceiling (fastest copy)")
        for peer in peers:
            if peer in CEILINGS:
                continue
            pts = [(b, r["gbps"]) for b in sizes if (r := s.table.get(("forward", dtype, b, mode), {}).get(peer))]
            if pts:
                xs, ys = zip(*pts)
                ax.plot(xs, ys, **STYLE.get(peer, dict(label=peer)))
        ax.set_xscale("log", base=2)
        ax.set_title(dtype, fontsize=10)
        ax.set_xlabel("input size")
        ax.set_ylabel("GB/s")
        ticks = [b for b in sizes if b & (b - 1) == 0][::2]
        ax.set_xticks(ticks)
        ax.set_xticklabels([fmt_size(b).replace(" ", "") for b in ticks], rotation=45, fontsize=7)
        ax.minorticks_off()
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(dtypes):]:
        ax.axis("off")
    handles, labels = {}, {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=4, fontsize=8,
               frameon=False)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = Path(sys.argv[1])
    s = Sweep(path)
    for mode in s.modes("forward"):
        target = path.with_name(f"{path.stem}_{mode}.png")
        plot_mode(s, mode, target)
        print(target)


if __name__ == "__main__":
    main()
