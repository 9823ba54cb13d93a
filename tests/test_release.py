"""The seed's commands on a staged snapshot of the Hub's v3 branch (scripts/stage_release.py
over this session's builds): `kernels benchmark <snapshot>`, LOCAL_KERNELS mapping the Hub
id to the snapshot with get_kernel(..., version=3), and the sys.path route. Each runs in a
fresh interpreter, from another directory, as a user's would."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO_ID, ROOT, VARIANT_DIRS, runs_kernels_benchmark

sys.path.insert(0, str(ROOT / "scripts"))
from stage_release import stage  # noqa: E402


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    return stage(tmp_path_factory.mktemp("hub") / "relu-build", list(VARIANT_DIRS.values()))


def run_python(*parts: str, **env) -> str:
    script = "\n".join(textwrap.dedent(part) for part in parts)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd="/", env={**os.environ, "HF_HUB_OFFLINE": "1", **env})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


CHECK_RELU = """
    import torch
    x = torch.tensor([-1.0, float("nan"), -0.0, 2.0], device={device!r})
    y = relu.relu(x)
    assert y.tolist() == [0.0, 0.0, 0.0, 2.0] and not torch.signbit(y).any(), y
    print(relu.relu.__module__)
"""


def test_snapshot_layout(snapshot):
    assert sorted(p.name for p in (snapshot / "build").iterdir() if p.is_dir()) == sorted(
        d.name for d in VARIANT_DIRS.values())
    assert (snapshot / "benchmarks" / "benchmark.py").is_file()
    # The card: README.md for the Hub's page, build/CARD.md where kernel-builder's upload reads it.
    assert (snapshot / "README.md").read_text() == (ROOT / "CARD.md").read_text()
    assert (snapshot / "build" / "CARD.md").read_text() == (ROOT / "CARD.md").read_text()


def test_local_kernels_get_kernel_version_3(snapshot, backend, device):
    out = run_python(
        f"""
        from kernels import get_kernel
        relu = get_kernel({REPO_ID!r}, version=3, backend={backend!r})
        import json, pathlib
        meta = json.loads((pathlib.Path(relu.__file__).parent / "metadata.json").read_text())
        assert meta["version"] == 3, meta
        assert str(pathlib.Path(relu.__file__).resolve()).startswith({str(snapshot.resolve())!r}), relu.__file__
        """,
        CHECK_RELU.format(device=device),
        LOCAL_KERNELS=f"{REPO_ID}={snapshot}",
    )
    assert out.strip()


def test_sys_path_import(snapshot, backend, device):
    variant = snapshot / "build" / VARIANT_DIRS[backend].name
    run_python(f"import sys; sys.path.insert(0, {str(variant)!r}); import relu", CHECK_RELU.format(device=device))


@runs_kernels_benchmark
def test_kernels_benchmark_on_snapshot(snapshot, tmp_path):
    output = tmp_path / "bench.json"
    # The `kernels` console script, run through the offline runner: on the H200 kernels is
    # only on PYTHONPATH, without its signature-checking dependencies.
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "kernels_cli_offline.py"), "benchmark", str(snapshot),
         "--iterations", "3", "--warmup", "1", "--output", str(output)],
        capture_output=True, text=True, cwd=snapshot, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert json.loads(output.read_text())
