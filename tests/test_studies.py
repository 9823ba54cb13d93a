"""Every benchmark still builds and runs, so one that a rename breaks is caught the day it
breaks: each script under benchmarks/ imports and parses its arguments (--help), the timing
paths run in tiny CPU smoke runs (the sweep's --l2-band included, then report.py on its
output), the plain Triton peer computes relu's semantics (in Triton's interpreter), and every
.cu file under benchmarks/ compiles with nvcc. One Python process runs all the scripts (torch
imported once): about 30-40 s on 2 cores. benchmarks/studies/l2_band/ has its own test."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import ROOT, VARIANT_DIRS

BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("*.py"))
CUDA_SOURCES = sorted(BENCHMARKS.rglob("*.cu"))


def name_of(path: Path) -> str:
    return str(path.relative_to(BENCHMARKS))


def has_main(path: Path) -> bool:
    return '__name__ == "__main__"' in path.read_text()


# Runs each (script, arguments) as __main__ in one interpreter; a library module (no
# __main__ block) is imported. Prints {name: {"exit": code, "error": text, "stdout": text}}.
DRIVER = r"""
import contextlib, io, json, runpy, sys, traceback
runs = json.loads(sys.argv[1])
results = {}
for name, path, argv, as_main in runs:
    stdout, code, error = io.StringIO(), 0, None
    sys.argv = [path, *argv]
    try:
        with contextlib.redirect_stdout(stdout):
            runpy.run_path(path, run_name="__main__" if as_main else "benchmark_module")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code:
            error = str(exc.code)
    except BaseException:
        code, error = 1, traceback.format_exc(limit=8)
    results[name] = {"exit": code, "error": error, "stdout": stdout.getvalue()}
print("RESULTS " + json.dumps(results))
"""


CPU_SMOKE = ["sweep.py", "views.py", "compare.py", "dtypes.py", "training_step.py", "noarch_rules.py",
             "relu_squared.py", "gated.py"]
# Where a GPU is (the H200 suite): the GPU paths too (graph replay, the queued sampler, Triton).
CUDA_SMOKE = ["sweep.py", "views.py", "compare.py", "dtypes.py", "compile_blocks.py", "training_step.py",
              "noarch_rules.py", "relu_squared.py", "gated.py"]
SMOKE = [("cpu", name) for name in CPU_SMOKE] + [("cuda", name) for name in CUDA_SMOKE] * torch.cuda.is_available()


def smoke_runs(out: Path, device: str) -> dict[str, list[str]]:
    """Arguments of a tiny run of each script that times something, on `device`."""
    kernel = str(VARIANT_DIRS[device])
    out = out / device
    host = ["--min-sample-ms", "0.2", "--quiet-share", "1"] if device == "cpu" else []  # no wait for quiet
    return {
        "sweep.py": ["--device", device, "--l2-band", "--quick", "--dtypes", "float32" if device == "cpu" else "bfloat16",
                     "--sizes", "256KiB" if device == "cpu" else "1MiB", "--repeats", "1", *host, "--kernel", kernel,
                     "--out", str(out / "sweep")],
        "views.py": ["--device", device, "--quick", "--dtypes", "int8", "--views", "chunk", "--repeats", "1", *host,
                     "--kernel", kernel, "--out", str(out / "views")],
        "compare.py": ["--device", device, "--quick", "--build", f"a={kernel}", "--dtypes", "int8", "--repeats", "1",
                       "--quiet-share", "1", "--out", str(out / "compare")],
        "noarch_rules.py": ["--device", device, "--repeats", "1", "--quiet-share", "1", "--out", str(out / "rules")],
        "dtypes.py": ["--device", device, "--kernel", kernel, "--dtypes", "uint16", "float8_e4m3fn", "--sizes", "1",
                      "--repeats", "1", "--out", str(out / "dtypes")],
        "compile_blocks.py": ["--device", device, "--quick", "--kernel", kernel, "--blocks", "square", "--repeats", "1",
                              "--calls", "1", "--out", str(out / "compile_blocks")],
        "training_step.py": ["--device", device, "--quick", "--kernel", kernel, "--repeats", "1", "--min-sample-ms", "1",
                             "--out", str(out / "training_step.json")],
        # On the torch stand-in until the build has relu_squared: the harness's paths, not the op.
        "relu_squared.py": ["--device", device, "--standin", "--sizes", "4KiB", "--train-sizes", "64KiB", "--dtypes",
                            "bfloat16", "--train-dtypes", "float32", "--no-compile", "--repeats", "1", *host,
                            "--out", str(out / "relu_squared")],
        # The CPU: on the stand-ins, the check against kernels-community's kernel included (its
        # CUDA build is not here); a GPU: the build, whose gated ops the CUDA suite tests.
        "gated.py": ["--device", device,
                     *(["--standin"] if device == "cpu" else ["--kernel", kernel, "--no-activation"]),
                     "--sizes", "64KiB", "--train-sizes", "64KiB", "--mlp-rows", "0", "--dtypes", "bfloat16",
                     "--train-dtypes", "float32", "--no-compile", "--repeats", "1", *host, "--out", str(out / "gated")],
    }


def run_driver(runs: list) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    env.pop("TRITON_INTERPRET", None)
    done = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(runs)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULTS ")), None)
    assert line, f"the driver died (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return json.loads(line.removeprefix("RESULTS "))


@pytest.fixture(scope="session")
def script_runs(tmp_path_factory):
    """Every script with --help, then the smoke runs, then report.py on the smoke sweep; all
    in one interpreter."""
    out = tmp_path_factory.mktemp("studies")
    runs = [(f"help {name_of(p)}", str(p), ["--help"] if has_main(p) else [], has_main(p)) for p in SCRIPTS]
    argvs = {device: smoke_runs(out, device) for device in {device for device, _ in SMOKE}}
    runs += [(f"smoke {device} {name}", str(BENCHMARKS / name), argvs[device][name], True) for device, name in SMOKE]
    sweep_json = str(out / "cpu" / "sweep" / "sweep.json")
    runs += [("report sweep", str(BENCHMARKS / "report.py"), [sweep_json], True)]
    return out, run_driver(runs)


@pytest.mark.parametrize("script", SCRIPTS, ids=name_of)
def test_parses_arguments(script_runs, script):
    _, results = script_runs
    result = results[f"help {name_of(script)}"]
    assert result["exit"] == 0, result["error"]
    if has_main(script):
        assert "usage:" in result["stdout"], result["stdout"]


@pytest.mark.parametrize("device, name", SMOKE, ids=[f"{d}-{n}" for d, n in SMOKE])
def test_smoke_run(script_runs, device, name):
    out, results = script_runs
    result = results[f"smoke {device} {name}"]
    assert result["exit"] == 0, result["error"]
    # The sweep, the views and gated.py record a failing peer or point and go on: none may fail here.
    written = {"sweep.py": "sweep/sweep.json", "views.py": "views/views.json", "gated.py": "gated/gated.json"}.get(name)
    if written:
        records = json.loads((out / device / written).read_text())["records"]
        assert records and not [r for r in records if "error" in r], [r for r in records if "error" in r]


def test_gated_smoke_times_every_form_and_checks_the_peer(script_runs):
    """The CPU smoke run of gated.py (stand-ins): every form timed, ours and the eager peer in
    each, and the bit-for-bit check against kernels-community's kernel for three dtypes."""
    out, _ = script_runs
    records = json.loads((out / "cpu" / "gated" / "gated.json").read_text())["records"]
    timed = {(r["form"], r["peer"]) for r in records if "us" in r}
    for form, ours, eager in [("relu_and_mul", "relu_and_mul", "eager"),
                              ("fatrelu_and_mul", "relu_and_mul_t", "eager_t"),
                              ("relu_squared_and_mul", "relu_squared_and_mul", "eager_sq"),
                              ("ReGLU", "ReGLU", "eager_reglu"), ("FatreluAndMul", "FatreluAndMul", "eager_fatrelu"),
                              ("SReGLU", "SReGLU", "eager_sreglu")]:
        assert {(form, ours), (form, eager)} <= timed, (form, sorted(timed))
    assert ("fatrelu_and_mul", "activation") in timed
    checked = {r["dtype"] for r in records if r["op"] == "activation-check" and "bit_differences" in r}
    assert checked == {"float32", "float16", "bfloat16"}, checked
    assert "NaN-free inputs" in (out / "cpu" / "gated" / "gated.md").read_text()


L2_BAND_PEERS = {"relu_out", "copy_", "clamp_min_out", "relu", "torch.relu", "clone"}


def test_l2_band_sweep_and_its_report(script_runs):
    out, results = script_runs
    data = json.loads((out / "cpu" / "sweep" / "sweep.json").read_text())
    measured = {(r["mode"], r["peer"]) for r in data["records"] if "us" in r}
    assert measured == {(mode, peer) for mode in ("hot", "rot", "cold") for peer in L2_BAND_PEERS}, measured
    assert data["meta"]["l2_band"] and data["meta"]["triton_peer"].startswith("not measured"), data["meta"]
    assert not [r for r in data["records"] if "error" in r]
    report = results["report sweep"]
    assert report["exit"] == 0, report["error"]
    band = report["stdout"].split("**L2 band", 1)[1]
    for mode in ("hot", "rot", "cold"):
        assert f"| float32 | 256 KiB | {mode} |" in band, band
    assert "Plain Triton peer: not measured" in band


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU: the Triton peer and graph replay run on CUDA only")
def test_cuda_l2_band_sweep_times_triton(script_runs):
    """On a GPU the L2-band smoke sweep times all 8 plain Triton configs in both forms, hot,
    rot and cold, by graph replay of 40 calls (rot and cold: whole laps of their sets)."""
    out, _ = script_runs
    data = json.loads((out / "cuda" / "sweep" / "sweep.json").read_text())
    assert not [r for r in data["records"] if "error" in r], [r for r in data["records"] if "error" in r]
    timed = {(r["mode"], r["peer"]): r for r in data["records"] if "us" in r}
    configs = {p for _, p in timed if p.startswith("triton")}
    assert len(configs) == 16 and {m for m, _ in timed} == {"hot", "rot", "cold"}, sorted(timed)
    assert {p for _, p in timed} == L2_BAND_PEERS | configs
    assert timed[("hot", "relu_out")]["calls_per_sample"] == 40, timed[("hot", "relu_out")]
    assert timed[("cold", "relu_out")]["calls_per_sample"] >= 40


def test_report_gives_each_forms_best_peer(tmp_path):
    """report.py's L2 band table: per point and form, the fastest peer (the fastest Triton
    config among them) and best / ours."""
    def record(peer, mode, us, form="out"):
        return dict(op="forward", dtype="bfloat16", bytes=1 << 20, numel=1 << 19, shape=[128, 4096], peer=peer,
                    form=form, mode=mode, us=us, gbps=2 * (1 << 20) / us * 1e-3)

    records = []
    for mode in ("hot", "rot", "cold"):
        records += [record("relu_out", mode, 2.0), record("copy_", mode, 2.2), record("clamp_min_out", mode, 2.4),
                    record("triton_b1024_w4", mode, 1.9), record("triton_b4096_w8", mode, 1.6),
                    record("relu", mode, 2.0, "allocating"), record("torch.relu", mode, 2.5, "allocating"),
                    record("clone", mode, 2.3, "allocating"), record("triton_alloc_b8192_w8", mode, 2.1, "allocating")]
    meta = dict(command="python benchmarks/sweep.py --device cuda --l2-band", device="h200", device_name="NVIDIA H200",
                torch="2.11.0", cuda="13.0", threads=1, kernel_id="k", git="abc", date_utc="2026-12-01 08:00", repeats=9,
                loadavg_start=[0, 0, 0], cache="L2", cache_bytes=60 << 20, triton_peer="plain Triton ReLU")
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(dict(meta=meta, records=records)))
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import report
    finally:
        sys.path.remove(str(BENCHMARKS))
    band = report.render(path).split("**L2 band", 1)[1]
    # out=: Triton's 1.6 us (b4096_w8) over ours 2.0; allocating: the Triton config 2.1 over ours 2.0
    assert ("| bfloat16 | 1 MiB | rot | 2.00 | best plain Triton (b4096_w8) | 1.60 | 0.80 | 2.00 | "
            "best plain Triton, allocating (b8192_w8) | 2.10 | 1.05 |") in band, band


def test_plain_triton_peer_is_relu():
    """The Triton peer in Triton's CPU interpreter: bit for bit relu's semantics (NaN and
    -0.0 to +0, +inf kept) for the L2 band's dtypes, a partial last block included."""
    pytest.importorskip("triton")
    code = r"""
import sys, torch
sys.path.insert(0, "benchmarks")
import baselines
launch = baselines.load_triton_relu()
for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int8):
    if dtype.is_floating_point:
        x = torch.randn(3000).to(dtype)
        x[:4] = torch.tensor([float("nan"), -0.0, float("inf"), -float("inf")]).to(dtype)
    else:
        x = torch.randint(-128, 128, (3000,), dtype=dtype)
    o = torch.full_like(x, 7)
    launch(o, x, 1024, 4)
    bits = {1: torch.int8, 2: torch.int16, 4: torch.int32}[x.element_size()]
    expected = torch.where(x > 0, x, torch.zeros_like(x))
    assert torch.equal(o.view(bits), expected.view(bits)), dtype
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, TRITON_INTERPRET="1"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "ok" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("source", CUDA_SOURCES, ids=name_of)
def test_cuda_study_compiles(source, tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found")
    if tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2]) < (2, 11):
        pytest.skip("the CUDA sources use torch >= 2.11's header-only headers, as the build does")
    # torch's include dir: the product headers a study includes reach its header-only dtype enum
    torch_include = str(Path(torch.__file__).parent / "include")
    done = subprocess.run([nvcc, "-std=c++20", "-arch=sm_90", "-c", str(source), "-o", str(tmp_path / "study.o"),
                           "-I", str(ROOT), "-I", torch_include], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
