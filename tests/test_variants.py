"""What `kernels` (0.17.2) picks from our release set on each user system.

The package ships two variants, both built against the torch 2.11 stable ABI:

    torch-stable-abi211-cpu-x86_64-linux
    torch-stable-abi211-cu130-x86_64-linux

On x86_64 Linux a user gets:

- torch 2.11 ... 2.15, CPU torch:            the cpu variant.
- torch 2.11 ... 2.15, CUDA 13.0 or 13.2:    the cu130 variant (a cu13x variant serves any
  CUDA 13.y with y >= x; stable-ABI variants serve any torch >= their ABI version).
- a CUDA torch with `backend="cpu"` asked:   the cpu variant.
- torch 2.11 ... 2.15, CUDA 12.6 or 12.8:    nothing (we cannot build CUDA 12 here: no CUDA 12
  nvcc), unless they ask for `backend="cpu"`, which gets the cpu variant.
- torch 2.10 (older than the stable ABI 2.11): nothing, whatever the backend.

That is the compiled variants alone (CASES below). The release also ships the noarch
variants torch-cpu and torch-cuda, which take every cell left empty above (the tests at the
end, over scripts/release_set.py).

Every case goes through the public `kernels.variants.resolve_variant(variants, backend=...)`,
the call `get_kernel`/`get_local_kernel` make. It has no parameter for the system: it detects
it. So `fake_system` below patches, for the duration of that one call only, exactly what
`resolve_variants` reads (see its source in kernels/variants.py and kernels/backends.py).
The running torch's own version and CUDA play no part.
"""

import contextlib
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import kernels.backends
import kernels.variants
from kernels.backends import parse_backend
from kernels.variants import VariantAccepted, VariantRejected, parse_variant, resolve_variant

CPU = "torch-stable-abi211-cpu-x86_64-linux"
CU130 = "torch-stable-abi211-cu130-x86_64-linux"
RELEASE = (CPU, CU130)

# A classic per-torch-version build: on torch 2.13 CPU kernels accepts it too, so it shows
# that an accepted stable-ABI variant outranks an accepted versioned one.
VERSIONED_DECOY = "torch213-cxx11-cpu-x86_64-linux"


@dataclass(frozen=True)
class System:
    """A user's machine as kernels sees it."""

    torch: str  # "2.11"
    backend: str  # what the torch build targets: "cpu", "cu130", ...
    arch: str = "x86_64"
    os: str = "Linux"  # as platform.system() spells it; kernels lowercases it

    def __str__(self) -> str:
        return f"torch{self.torch}-{self.backend}"


@contextlib.contextmanager
def fake_system(system: System):
    """Make kernels' system detection report `system`.

    resolve_variant exposes no way to pass a system, and the only explicit-parameter route,
    kernels.variants._resolve_variant_for_system, skips the `backend=` request handling we
    also want to test. So we patch what resolve_variants reads, as narrowly as each allows:
    """
    with pytest.MonkeyPatch.context() as patch:
        # Backend: kernels.backends._backend() is the one detector; _select_backend (default
        # and `backend="cpu"` requests alike) looks it up at call time.
        patch.setattr(kernels.backends, "_backend", lambda: parse_backend(system.backend))
        # CPU arch and OS: resolve_variants calls platform.machine()/platform.system(); we swap
        # the `platform` name inside kernels.variants only, not the real module.
        fake_platform = types.SimpleNamespace(machine=lambda: system.arch, system=lambda: system.os)
        patch.setattr(kernels.variants, "platform", fake_platform)
        # Torch version and C++ ABI: resolve_variants reads torch.__version__ and
        # torch.compiled_with_cxx11_abi() itself, no detector function to patch.
        # Every Linux torch >= 2.11 wheel is built with the cxx11 ABI.
        patch.setattr(torch, "__version__", f"{system.torch}.0+{system.backend}")
        patch.setattr(torch, "compiled_with_cxx11_abi", lambda: True)
        # A free-threaded CPython < 3.15 refuses all arch kernels; the user's Python is an
        # ordinary one, whatever interpreter runs this test.
        patch.setattr(kernels.variants, "_is_unsupported_free_threaded_build", lambda: False)
        yield


@dataclass(frozen=True)
class Case:
    system: System
    picks: str | None
    # Candidate -> a fragment of kernels' reason for refusing it. Every candidate not listed
    # here must be accepted, so each row states the whole outcome.
    refuses: dict[str, str]
    asks_backend: str | None = None  # the user's `backend=` argument to resolve_variant
    also_offered: tuple[str, ...] = ()  # candidates besides the release set

    @property
    def candidates(self) -> tuple[str, ...]:
        return RELEASE + self.also_offered

    def __str__(self) -> str:
        asked = f"-asks-{self.asks_backend}" if self.asks_backend else ""
        offered = "".join(f"+{name}" for name in self.also_offered)
        return f"{self.system}{asked}{offered}"


# Reasons, as kernels 0.17.2 words them (VariantRejected.reason, kernels/variants.py):
#   "backend (<variant backend>) does not match selected backend (<system backend>)"
#   "CUDA version (<variant CUDA>) is not compatible with system CUDA version (<system CUDA>)"
#   "Torch stable ABI version (<abi>) is too new for environment Torch version (<torch>)"
#   "Torch version (<variant torch>) does not match environment Torch version (<torch>)"
def wrong_backend(variant_backend: str, system_backend: str) -> str:
    return f"backend ({variant_backend}) does not match selected backend ({system_backend})"


def cuda_too_old(system_cuda: str) -> str:
    return f"CUDA version (13.0) is not compatible with system CUDA version ({system_cuda})"


TORCH_TOO_OLD = "Torch stable ABI version (2.11) is too new for environment Torch version (2.10)"
BOTH_TORCH_TOO_OLD = {CPU: TORCH_TOO_OLD, CU130: TORCH_TOO_OLD}
DECOY_WRONG_TORCH = "Torch version (2.13) does not match environment Torch version (2.12)"

# fmt: off
CASES = [
    # system,                picks, refuses
    # CPU torch: the cpu variant.
    Case(System("2.11", "cpu"), CPU, {CU130: wrong_backend("cu130", "cpu")}),
    Case(System("2.12", "cpu"), CPU, {CU130: wrong_backend("cu130", "cpu")}),
    Case(System("2.13", "cpu"), CPU, {CU130: wrong_backend("cu130", "cpu")}),
    Case(System("2.14", "cpu"), CPU, {CU130: wrong_backend("cu130", "cpu")}),
    Case(System("2.15", "cpu"), CPU, {CU130: wrong_backend("cu130", "cpu")}),
    # CUDA 13.0: the cu130 variant; a CUDA torch does not take a cpu variant by default.
    Case(System("2.11", "cu130"), CU130, {CPU: wrong_backend("cpu", "cu130")}),
    Case(System("2.12", "cu130"), CU130, {CPU: wrong_backend("cpu", "cu130")}),
    Case(System("2.13", "cu130"), CU130, {CPU: wrong_backend("cpu", "cu130")}),
    Case(System("2.14", "cu130"), CU130, {CPU: wrong_backend("cpu", "cu130")}),
    Case(System("2.15", "cu130"), CU130, {CPU: wrong_backend("cpu", "cu130")}),
    # CUDA 13.2: still the cu130 variant (same major, variant minor 0 <= 2).
    Case(System("2.11", "cu132"), CU130, {CPU: wrong_backend("cpu", "cu132")}),
    Case(System("2.12", "cu132"), CU130, {CPU: wrong_backend("cpu", "cu132")}),
    Case(System("2.13", "cu132"), CU130, {CPU: wrong_backend("cpu", "cu132")}),
    Case(System("2.14", "cu132"), CU130, {CPU: wrong_backend("cpu", "cu132")}),
    Case(System("2.15", "cu132"), CU130, {CPU: wrong_backend("cpu", "cu132")}),
    # A CUDA torch whose user asks for backend="cpu": the cpu variant, even on CUDA 12.
    Case(System("2.11", "cu130"), CPU, {CU130: wrong_backend("cu130", "cpu")}, asks_backend="cpu"),
    Case(System("2.15", "cu132"), CPU, {CU130: wrong_backend("cu130", "cpu")}, asks_backend="cpu"),
    Case(System("2.12", "cu126"), CPU, {CU130: wrong_backend("cu130", "cpu")}, asks_backend="cpu"),
    # CUDA 12: nothing. A cu130 variant needs CUDA 13; we ship no cu12x build.
    Case(System("2.11", "cu126"), None, {CPU: wrong_backend("cpu", "cu126"), CU130: cuda_too_old("12.6")}),
    Case(System("2.13", "cu126"), None, {CPU: wrong_backend("cpu", "cu126"), CU130: cuda_too_old("12.6")}),
    Case(System("2.15", "cu126"), None, {CPU: wrong_backend("cpu", "cu126"), CU130: cuda_too_old("12.6")}),
    Case(System("2.11", "cu128"), None, {CPU: wrong_backend("cpu", "cu128"), CU130: cuda_too_old("12.8")}),
    Case(System("2.13", "cu128"), None, {CPU: wrong_backend("cpu", "cu128"), CU130: cuda_too_old("12.8")}),
    Case(System("2.15", "cu128"), None, {CPU: wrong_backend("cpu", "cu128"), CU130: cuda_too_old("12.8")}),
    # torch 2.10 predates the 2.11 stable ABI. kernels checks the torch version before the
    # backend, so both variants get that reason, on every backend and backend request.
    Case(System("2.10", "cpu"), None, BOTH_TORCH_TOO_OLD),
    Case(System("2.10", "cu126"), None, BOTH_TORCH_TOO_OLD),
    Case(System("2.10", "cu128"), None, BOTH_TORCH_TOO_OLD),
    Case(System("2.10", "cu130"), None, BOTH_TORCH_TOO_OLD),
    Case(System("2.10", "cu132"), None, BOTH_TORCH_TOO_OLD),
    Case(System("2.10", "cu130"), None, BOTH_TORCH_TOO_OLD, asks_backend="cpu"),
    # A versioned decoy for torch 2.13 is accepted there (it is not in `refuses`), yet the
    # stable-ABI variant is preferred.
    Case(System("2.13", "cpu"), CPU, {CU130: wrong_backend("cu130", "cpu")}, also_offered=(VERSIONED_DECOY,)),
    # On any other torch the decoy is refused: a versioned build needs that exact torch.
    Case(System("2.12", "cpu"), CPU,
         {CU130: wrong_backend("cu130", "cpu"), VERSIONED_DECOY: DECOY_WRONG_TORCH},
         also_offered=(VERSIONED_DECOY,)),
]
# fmt: on


@pytest.mark.parametrize("case", CASES, ids=str)
def test_kernels_picks_intended_variant(case: Case):
    # A refusal listed for a name we do not offer would be a typo in the table.
    assert set(case.refuses) <= set(case.candidates)
    variants = [parse_variant(name) for name in case.candidates]

    with fake_system(case.system):
        picked, trace = resolve_variant(variants, backend=case.asks_backend)

    assert (picked.variant_str if picked else None) == case.picks

    decisions = {decision.variant.variant_str: decision for decision in trace}
    assert sorted(decisions) == sorted(case.candidates), "one decision per candidate"
    for name, decision in decisions.items():
        if name in case.refuses:
            assert isinstance(decision, VariantRejected), f"{name} should be refused"
            assert isinstance(decision.reason, str)
            assert case.refuses[name] in decision.reason
        else:
            assert isinstance(decision, VariantAccepted), f"{name} should be accepted, got {decision}"


# ---- The whole release set, noarch variants included (scripts/release_set.py). kernels ranks
# noarch variants (torch-cpu, torch-cuda) after every accepted compiled one and accepts them on
# any torch version whose backend matches: they fill exactly the cells no compiled build serves.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import release_set  # noqa: E402

SYSTEM_BACKENDS = ["cpu", "cu126", "cu128", "cu130", "cu132"]
CPU_ARCHS = ["x86_64", "aarch64"]


def pick(candidates, system: System, asks_backend: str | None = None) -> str | None:
    with fake_system(system):
        picked, _ = resolve_variant([parse_variant(name) for name in candidates], backend=asks_backend)
    return picked.variant_str if picked else None


def noarch_for(system_backend: str) -> str:
    return "torch-cpu" if system_backend == "cpu" else "torch-cuda"


def test_release_set_has_both_noarch_variants():
    assert set(release_set.NOARCH) == {"torch-cpu", "torch-cuda"}
    assert set(release_set.VARIANTS) == set(release_set.COMPILED) | set(release_set.NOARCH)


@pytest.mark.parametrize("arch", CPU_ARCHS)
@pytest.mark.parametrize("system_backend", SYSTEM_BACKENDS)
@pytest.mark.parametrize("torch_version", ["2.9", "2.10"])
def test_torch_older_than_the_stable_abi_gets_a_noarch_variant(torch_version, system_backend, arch):
    system = System(torch_version, system_backend, arch=arch)
    assert pick(release_set.COMPILED, system) is None, "no compiled variant serves torch < 2.11"
    assert pick(release_set.VARIANTS, system) == noarch_for(system_backend)
    assert pick(release_set.VARIANTS, system, asks_backend="cpu") == "torch-cpu"


@pytest.mark.parametrize("arch", CPU_ARCHS)
@pytest.mark.parametrize("system_backend", SYSTEM_BACKENDS)
@pytest.mark.parametrize("torch_version", ["2.11", "2.12", "2.13", "2.14", "2.15"])
def test_compiled_variants_keep_precedence_from_torch_2_11(torch_version, system_backend, arch):
    system = System(torch_version, system_backend, arch=arch)
    compiled = pick(release_set.COMPILED, system)
    if arch == "x86_64" and system_backend in ("cpu", "cu130", "cu132"):
        assert compiled is not None
    # Where a compiled variant loads it wins; elsewhere (a CUDA or CPU combination no compiled
    # build covers) the noarch variant of the system's backend.
    assert pick(release_set.VARIANTS, system) == (compiled or noarch_for(system_backend))
