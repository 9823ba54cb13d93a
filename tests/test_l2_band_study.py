"""The L2-band study (benchmarks/studies/l2_band/): what can be checked without a GPU. Its
kernels compile for sm_90 and load through ctypes; its plan and tables do what its docstring
says; its Triton peer and its checker are right on CPU tensors (Triton's interpreter)."""

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "benchmarks" / "studies" / "l2_band" / "l2_band.py"


def load_study():
    spec = importlib.util.spec_from_file_location("l2_band_study", STUDY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


study = load_study()
MIB, KIB = study.MIB, study.KIB


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not on PATH")
    return study.build_library(tmp_path_factory.mktemp("l2_band") / "libl2_band.so")


def test_library_builds_and_lists_its_variants(library):
    lib = study.StudyLibrary(library)
    assert lib.names[0] == "product"
    assert len(lib.names) == len(set(lib.names)) >= 20
    copies = [n for i, n in enumerate(lib.names) if lib.is_copy(i)]
    assert copies and all(n.startswith("copy") for n in copies)
    assert lib.lib.l2_band_variant_name(len(lib.names)) is None
    # Out-of-range arguments are refused before any launch (no GPU is touched).
    assert lib.lib.l2_band_launch(len(lib.names), 0, None, None, 0, None) == -1
    assert lib.lib.l2_band_launch(0, 4, None, None, 0, None) == -1


def test_plan_band_first_rotation_inside_budget():
    plan = study.make_plan(study.DTYPES, study.BAND_SIZES + study.DRAM_SIZES, study.MODES, 40, 40 * MIB)
    sizes = [p.nbytes for p in plan]
    first_dram = min(i for i, p in enumerate(plan) if p.nbytes in study.DRAM_SIZES)
    assert all(b not in study.DRAM_SIZES for b in sizes[:first_dram])
    assert all(b in study.DRAM_SIZES for b in sizes[first_dram:])
    for p in plan:
        if p.mode == "rot":
            assert 2 <= p.pairs <= 40 and 2 * p.nbytes * p.pairs <= 40 * MIB
        else:
            assert p.pairs == 1
    rotated = {p.nbytes for p in plan if p.mode == "rot"}
    assert rotated == {256 * KIB, 512 * KIB, 1 * MIB, 2 * MIB, 4 * MIB, 8 * MIB}
    assert len(plan) == len(study.DTYPES) * (len(study.BAND_SIZES) + len(study.DRAM_SIZES) + len(rotated))


def test_parse_size():
    assert study.parse_size("256KiB") == 256 * KIB
    assert study.parse_size("1.5MiB") == 3 * MIB // 2
    assert study.parse_size("4096") == 4096


def test_tables_ratios_from_rows():
    def row(entry, kind, us, p=0, nbytes=1 * MIB):
        return {"pass": p, "dtype": "float32", "bytes": nbytes, "mode": "hot", "entry": entry,
                "kind": kind, "us": us}

    rows = [row("relu(x, out=o)", "product", 2.0), row("o.copy_(x)", "peer", 1.8),
            row("clamp_min(out=)", "peer", 2.2), row("triton B1024 w4", "triton", 1.6),
            row("triton B2048 w8", "triton", 1.7), row("product", "study", 2.0),
            row("tile v2 t256", "study", 1.5), row("tile v2 t256", "study", 1.7, p=1),
            row("torch.relu(x)", "peer", 2.4), row("relu(x)", "product", 2.0),
            row("product", "study", 40.0, nbytes=64 * MIB),
            {"pass": 0, "dtype": "float32", "bytes": MIB, "mode": "hot", "entry": "tile v8 t256",
             "kind": "study", "us": None, "error": "AssertionError: 3 of 9 elements differ"}]
    text = study.tables({"rows": rows, "command": "x"})
    line = next(l for l in text.splitlines() if l.startswith("| float32 | 1 MiB | hot"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[6] == "1.60 B1024 w4"          # best Triton
    assert cells[7] == "0.800"                  # best peer 1.6 / ours 2.0
    assert cells[9] == "1.60 tile v2 t256"      # median of the two passes
    assert cells[10] == "1.000"
    assert cells[13] == "1.200"                 # torch.relu 2.4 / relu(x) 2.0
    summary = next(l for l in text.splitlines() if l.startswith("| tile v2 t256 |"))
    parts = [c.strip() for c in summary.strip("|").split("|")]
    assert parts[3] == "0.800" and parts[4] == "1.000" and parts[7] == "13.3%"
    assert "tile v8 t256: AssertionError" in text


TRITON_CHECK = textwrap.dedent("""
    import os, sys
    os.environ["TRITON_INTERPRET"] = "1"
    import importlib.util
    spec = importlib.util.spec_from_file_location("l2_band_study", sys.argv[1])
    study = importlib.util.module_from_spec(spec); sys.modules[spec.name] = study
    spec.loader.exec_module(study)
    kernel = study.triton_relu_kernel()
    for dtype in study.DTYPES:
        # 5000 elements: a partial last Triton block; specials planted at both ends.
        bufs = study.Buffers(dtype, 5000 * study.ELEMENT_BYTES[dtype], 2, device="cpu")
        entries = study.make_entries(None, None, kernel, dtype)
        for entry in entries:
            fn = entry.make(bufs)
            study.check(entry, fn, bufs)
        wrong = study.Entry("wrong", "study", lambda b: lambda i: b.o[i].copy_(b.x[i]), "relu")
        try:
            study.check(wrong, wrong.make(bufs), bufs)
        except AssertionError:
            pass
        else:
            raise SystemExit(f"the checker passed a copy as a ReLU ({dtype})")
        print(dtype, len(entries), "entries checked")
""")


def test_triton_peer_and_checker_on_cpu():
    pytest.importorskip("triton")
    env = dict(os.environ, TRITON_INTERPRET="1")
    result = subprocess.run([sys.executable, "-c", TRITON_CHECK, str(STUDY)], capture_output=True,
                            text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("entries checked") == len(study.DTYPES)


def test_run_point_records_failures_and_medians(monkeypatch):
    """run_point's bookkeeping with the GPU parts (capture, replay) replaced: a failing entry
    is recorded with its error and left untimed, the others get the median of their replays."""
    torch = pytest.importorskip("torch")
    cuda_buffers = study.Buffers
    monkeypatch.setattr(study, "Buffers", lambda d, b, p: cuda_buffers(d, b, p, device="cpu"))
    monkeypatch.setattr(study, "capture", lambda fn, pairs, calls: fn)
    monkeypatch.setattr(study, "time_graphs",
                        lambda graphs, calls, replays, lead_in=True: [[3.0, 1.0, 2.0] for _ in graphs])
    good = study.Entry("where", "study",
                       lambda b: lambda i: torch.where(b.x[i] > 0, b.x[i], b.x[i].new_zeros(()), out=b.o[i]),
                       "relu")
    copy = study.Entry("copy", "study", lambda b: lambda i: b.o[i].copy_(b.x[i]), "relu")
    point = study.Point("bfloat16", 4 * KIB, "rot", 3)
    rows = study.run_point(point, [good, copy], calls=6, replays=3, pass_index=1)
    by_name = {r["entry"]: r for r in rows}
    assert by_name["where"]["us"] == 2.0 and by_name["where"]["error"] is None
    assert by_name["copy"]["us"] is None and "differ from the reference" in by_name["copy"]["error"]
    assert all(r["pass"] == 1 and r["pairs"] == 3 and r["mode"] == "rot" for r in rows)


def test_check_forms_counts_straddle_every_edge_of_the_dense_policy():
    """check_forms.py's element counts sit on both sides of the one-tile grid (256 vectors),
    the wave edge between 1 x 256 and 2 x 128 (one vector per resident thread) and the
    streaming threshold (3/8 of the L2 per tensor forward), for every element size."""
    spec = importlib.util.spec_from_file_location("check_forms", STUDY.parent / "check_forms.py")
    check_forms = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_forms)
    l2, wave_threads = 60 * MIB, 132 * 2048  # the H200's
    for size in (1, 2, 4, 8):
        counts = check_forms.element_counts(l2, wave_threads, size)
        per_vector = 16 // size
        for edge in (256 * per_vector, wave_threads * per_vector, (3 * l2 // 8) // size):
            assert any(c < edge for c in counts) and any(edge < c for c in counts) and edge in counts
        assert wave_threads * per_vector + per_vector + 1 in counts  # past the wave by a vector
