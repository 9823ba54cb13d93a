"""relu-common/relu_element.h, relu_squared_element.h and gated_element.h, the element logic of
every backend (the XPU kernel's included, which this project cannot run), compiled with the
host's g++ and checked by tests/relu_element_check.cpp against its own reference: every
float16, bfloat16 and int16 bit pattern, every int8/uint8 value, and random words of 16-, 32-
and 64-bit lanes; relu_squared over every float16 and bfloat16 pattern, random and special
float32/float64, and its 16-bit conversions; the gated ops (relu_and_mul, relu_squared_and_mul)
over every float16 and bfloat16 pattern of a, random and special float32/float64."""

import secrets
import subprocess
from pathlib import Path

import pytest

from host_check import BUILDS, ROOT, compile_checker

CHECKER = ROOT / "tests" / "relu_element_check.cpp"


@pytest.fixture(scope="module")
def checker_c17(tmp_path_factory) -> Path:
    return compile_checker(CHECKER, "c++17", tmp_path_factory.mktemp("relu_forward") / "check")


@pytest.mark.parametrize("build", BUILDS)
def test_element_logic_matches_reference(build, tmp_path):
    checker = compile_checker(CHECKER, build, tmp_path / "check")
    seed = str(secrets.randbits(63))  # fresh words every run; the seed is in the output
    run = subprocess.run([str(checker), seed], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].endswith(" checks, 0 failures"), run.stdout


def test_checker_catches_a_wrong_semantics(checker_c17):
    """Against a reference that keeps NaN (torch's CPU relu; for relu_squared, NaN squared; for
    the gated ops, a NaN a through the gate) the checker must fail: it can tell a kernel that
    gets the NaN lanes wrong from one that does not."""
    run = subprocess.run([str(checker_c17), "1", "--mutant"], capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    for name in ("float32", "float64", "float16", "bfloat16"):
        for label in (name, f"relu_squared<{name}>", f"relu_and_mul<{name}>",
                      f"relu_squared_and_mul<{name}>"):
            line = next(l for l in run.stdout.splitlines() if l.startswith(label + " "))
            assert not line.endswith(" 0 failures"), line
