"""The L2-band study (benchmarks/studies/l2_band/band.py): what can be checked without a GPU.
Its kernels compile for sm_90 and list themselves through ctypes; its buffer rotations are
what its docstring says; its tables compute the ratios the docs quote, from the committed run."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "benchmarks" / "studies" / "l2_band" / "band.py"
RUN = ROOT / "results" / "studies" / "l2-band" / "band.json"


def load_study():
    spec = importlib.util.spec_from_file_location("band_study", STUDY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


study = load_study()
KIB, MIB = study.KIB, study.MIB


def test_kernels_build_and_list_themselves(tmp_path):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not on PATH")
    library = tmp_path / "libband.so"
    subprocess.run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90", "-cudart", "static", "-Xcompiler", "-fPIC",
                    "-shared", f"-I{ROOT}", f"-I{Path(torch.__file__).parent / 'include'}",
                    str(STUDY.parent / "band_kernels.cu"), "-o", str(library)], check=True)
    kernels = study.Study(str(library))
    assert len(kernels.names) == len(set(kernels.names)) >= 20
    assert {"tile t256 v1", "product t256 v1", "copy t128 v2", "empty"} <= set(kernels.names)
    # Out-of-range arguments are refused before any launch: no GPU is touched.
    assert kernels.lib.band_launch(len(kernels.names), 0, None, None, 0, None) == -1
    assert kernels.lib.band_launch(0, 4, None, None, 0, None) == -1


def test_rotations():
    l2 = 60 * MIB
    assert study.sets_for("hot", MIB, l2) == 1
    for nbytes in study.SIZES:
        rot, cold = study.sets_for("rot", nbytes, l2), study.sets_for("cold", nbytes, l2)
        assert 2 <= rot <= study.CALLS
        if 4 * nbytes <= 0.75 * l2:  # the sizes where band.py times rot: every pair inside the L2
            assert 2 * nbytes * rot <= 0.75 * l2
        assert nbytes * cold >= 1.5 * l2  # cold: the inputs alone exceed 1.5x the L2


def test_tables_from_rows(tmp_path):
    def rows(entry, us, nbytes=MIB):
        return [{"pass": p, "dtype": "float32", "bytes": nbytes, "mode": "hot", "entry": entry, "us": us}
                for p in (0, 1)]

    data = {"meta": {"device": "d", "torch": "t", "triton": "tr"}, "failures": [],
            "rows": rows("relu(x, out=o)", 2.0) + rows("o.copy_(x)", 1.8) + rows("clamp_min(out=o)", 2.2)
            + rows("triton B1024 w4", 1.6) + rows("tile t128 v2", 1.5) + rows("relu(x)", 2.0)
            + rows("torch.relu(x)", 2.4) + rows("old relu(x, out=o)", 2.5) + rows("old relu(x)", 1.6)}
    path = tmp_path / "band.json"
    path.write_text(__import__("json").dumps(data))
    text = study.table(str(path))
    cells = [c.strip() for c in next(l for l in text.splitlines() if l.startswith("| float32 | 1 MiB")).strip("|").split("|")]
    assert cells[3:7] == ["1.60", "triton B1024 w4", "2.00", "0.800"]  # best peer 1.6 / ours 2.0
    assert cells[7:10] == ["1.50", "tile t128 v2", "1.067"]
    assert cells[12] == "1.200"  # torch.relu 2.4 / relu(x) 2.0
    assert "| relu(x, out=o) | 1 | 0.800 | 0.800 |" in text  # new/old 2.0 / 2.5
    assert "| relu(x) | 1 | 1.250 | 1.250 |" in text


def test_committed_run_prints_its_tables():
    result = subprocess.run([sys.executable, str(STUDY), "--table", str(RUN)], capture_output=True, text=True,
                            check=True)
    assert "failures: []" in result.stdout
    assert "| float32 | 4 KiB | hot |" in result.stdout and "| int8 | 32 MiB | cold |" in result.stdout
