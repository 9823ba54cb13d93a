"""torch-ext/layout_plan.h (and .cpp), the binding's one stride order (density, a result's
layout, the walk over any layout), compiled with the host's g++ and checked by
tests/layout_plan_check.cpp against definitions of its own: density by trying every order, the
walk by the elements it visits. The result strides against torch.empty_like itself:
tests/test_views.py."""

import secrets
import subprocess

import pytest

from host_check import BUILDS, ROOT, compile_checker

CHECKER = ROOT / "tests" / "layout_plan_check.cpp"
PLANNER = ROOT / "torch-ext" / "layout_plan.cpp"


@pytest.mark.parametrize("build", BUILDS)
def test_layout_plan_matches_reference(build, tmp_path):
    # No torch header: the planner is plain C++ over sizes and strides.
    checker = compile_checker(CHECKER, build, tmp_path / "check", extra=(str(PLANNER),))
    seed = str(secrets.randbits(63))  # fresh layouts every run; the seed is in the output
    run = subprocess.run([str(checker), seed], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].endswith(" checks, 0 failures"), run.stdout
