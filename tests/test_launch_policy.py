"""relu-cuda/launch_policy.h's decisions for every architecture the release builds for
(sm_70..sm_121, by their SM counts and L2 sizes) and for extremes: tests/launch_policy_check.cu,
compiled by nvcc as a host program (no GPU needed), checks that every dense and strided
policy names a compiled kernel form and a valid launch, and that the one-tile form's grid
covers every vector."""

import subprocess

from host_check import ROOT, compile_cuda_host_checker

CHECKER = ROOT / "tests" / "launch_policy_check.cu"


def test_launch_policies_are_compiled_and_valid_on_every_arch(tmp_path):
    checker = compile_cuda_host_checker(CHECKER, tmp_path / "check")
    run = subprocess.run([str(checker)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    last = run.stdout.strip().splitlines()[-1]
    assert last.endswith(" checks, 0 failures") and int(last.split()[0]) > 10000, run.stdout
