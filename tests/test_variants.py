"""What `kernels` (0.17.2) picks from our release set on each user system, and which GPUs
the picked CUDA variant then serves.

The release set (scripts/release_set.py) holds five compiled variants, all built against
the torch 2.11 stable ABI: cpu, cu130 and cu124 for x86_64, cpu and cu130 for aarch64
(ARM_CASES: the same rules on aarch64, with no CUDA 12 variant). On x86_64 Linux a user gets:

- torch 2.11 ... 2.15, CPU torch:                 the cpu variant.
- torch 2.11 ... 2.15, CUDA 13.0 or 13.2:         the cu130 variant (a cu13x variant serves
  any CUDA 13.y with y >= x; stable-ABI variants serve any torch >= their ABI version).
- torch 2.11 ... 2.15, CUDA 12.6, 12.8 or 12.9:   the cu124 variant (12.4 <= their minor).
- a CUDA torch with `backend="cpu"` asked:        the cpu variant.
- torch 2.10 (older than the stable ABI 2.11):    nothing, whatever the backend.

That is the compiled variants alone (CASES below). The release also ships the noarch
variants torch-cpu and torch-cuda, which take every cell left empty above (the tests at the
end, over scripts/release_set.py), and torch-xpu, the one variant an XPU torch accepts.

Every case goes through the public `kernels.variants.resolve_variant(variants, backend=...)`,
the call `get_kernel`/`get_local_kernel` make. It has no parameter for the system: it detects
it. So `fake_system` below patches, for the duration of that one call only, exactly what
`resolve_variants` reads (see its source in kernels/variants.py and kernels/backends.py).
The running torch's own version and CUDA play no part.

Then the GPU: kernels checks the ONE variant it picked against the device's capability
(kernels/archs.py, with metadata.json's backend.archs) and raises rather than fall back to
another variant. `GPU_TABLE` says, for each CUDA variant of the release set, which GPUs run
a compiled cubin, which JIT-compile its PTX and which are refused; the answers are written
out by hand, the archs are the release set's.
"""

import contextlib
import json
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import release_set  # noqa: E402

RELEASE = tuple(variant.name for variant in release_set.RELEASE)
COMPILED_RELEASE = tuple(variant.name for variant in release_set.RELEASE if not variant.noarch)
# The x86_64 cases' candidates; the aarch64 cases below add ARM_RELEASE.
X86_RELEASE = tuple(v.name for v in release_set.RELEASE if not v.noarch and v.platform == "x86_64")
ARM_RELEASE = tuple(v.name for v in release_set.RELEASE if not v.noarch and v.platform == "aarch64")


def released(backend: str, cuda: str | None = None, platform: str = "x86_64") -> str:
    """The release set's variant for that backend, toolchain CUDA and CPU."""
    (name,) = [v.name for v in release_set.RELEASE
               if (v.backend, v.toolchain.cuda, v.platform) == (backend, cuda, platform)]
    return name


CPU = released("cpu")
CU130 = released("cuda", "13.0")
CU124 = released("cuda", "12.4")
ARM_CPU = released("cpu", platform="aarch64")
ARM_CU130 = released("cuda", "13.0", platform="aarch64")

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
        return X86_RELEASE + self.also_offered

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


def cuda12_refused(system_cuda: str) -> str:
    return f"CUDA version (12.4) is not compatible with system CUDA version ({system_cuda})"


TORCH_TOO_OLD = "Torch stable ABI version (2.11) is too new for environment Torch version (2.10)"
ALL_TORCH_TOO_OLD = {CPU: TORCH_TOO_OLD, CU130: TORCH_TOO_OLD, CU124: TORCH_TOO_OLD}
DECOY_WRONG_TORCH = "Torch version (2.13) does not match environment Torch version (2.12)"
TORCHES = ("2.11", "2.12", "2.13", "2.14", "2.15")

# fmt: off
CASES = [
    # system,                picks, refuses
    # CPU torch: the cpu variant.
    *(Case(System(t, "cpu"), CPU, {CU130: wrong_backend("cu130", "cpu"), CU124: wrong_backend("cu124", "cpu")})
      for t in TORCHES),
    # CUDA 13.0 and 13.2: the cu130 variant (same major, variant minor 0 <= 0, 2); a CUDA
    # torch does not take a cpu variant by default, nor a variant of another CUDA major.
    *(Case(System(t, cuda), CU130, {CPU: wrong_backend("cpu", cuda), CU124: cuda12_refused(version)})
      for t in TORCHES for cuda, version in (("cu130", "13.0"), ("cu132", "13.2"))),
    # CUDA 12.6, 12.8, 12.9 (every CUDA 12 build of torch 2.11 on): the cu124 variant.
    *(Case(System(t, cuda), CU124, {CPU: wrong_backend("cpu", cuda), CU130: cuda_too_old(version)})
      for t in TORCHES for cuda, version in (("cu126", "12.6"), ("cu128", "12.8"), ("cu129", "12.9"))),
    # No CUDA 12.2 torch >= 2.11 exists; it shows the minor rule: 12.4 > 12.2 is refused.
    Case(System("2.11", "cu122"), None,
         {CPU: wrong_backend("cpu", "cu122"), CU130: cuda_too_old("12.2"), CU124: cuda12_refused("12.2")}),
    # A CUDA torch whose user asks for backend="cpu": the cpu variant.
    Case(System("2.11", "cu130"), CPU,
         {CU130: wrong_backend("cu130", "cpu"), CU124: wrong_backend("cu124", "cpu")}, asks_backend="cpu"),
    Case(System("2.15", "cu132"), CPU,
         {CU130: wrong_backend("cu130", "cpu"), CU124: wrong_backend("cu124", "cpu")}, asks_backend="cpu"),
    Case(System("2.12", "cu126"), CPU,
         {CU130: wrong_backend("cu130", "cpu"), CU124: wrong_backend("cu124", "cpu")}, asks_backend="cpu"),
    # torch 2.10 predates the 2.11 stable ABI. kernels checks the torch version before the
    # backend, so every variant gets that reason, on every backend and backend request.
    *(Case(System("2.10", backend), None, ALL_TORCH_TOO_OLD)
      for backend in ("cpu", "cu126", "cu128", "cu129", "cu130", "cu132")),
    Case(System("2.10", "cu130"), None, ALL_TORCH_TOO_OLD, asks_backend="cpu"),
    # A versioned decoy for torch 2.13 is accepted there (it is not in `refuses`), yet the
    # stable-ABI variant is preferred.
    Case(System("2.13", "cpu"), CPU,
         {CU130: wrong_backend("cu130", "cpu"), CU124: wrong_backend("cu124", "cpu")},
         also_offered=(VERSIONED_DECOY,)),
    # On any other torch the decoy is refused: a versioned build needs that exact torch.
    Case(System("2.12", "cpu"), CPU,
         {CU130: wrong_backend("cu130", "cpu"), CU124: wrong_backend("cu124", "cpu"),
          VERSIONED_DECOY: DECOY_WRONG_TORCH},
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


# ---- aarch64 Linux (Grace Hopper/Blackwell, DGX Spark, Graviton, Ampere Altra) ----------
# The release set's aarch64 variants, cross-built here. On an aarch64 system the x86_64
# variants are refused for their CPU, which kernels checks first.
ON_ARM = {name: "CPU (x86_64) does not match system CPU (aarch64)" for name in X86_RELEASE}
ARM_BOTH_TORCH_TOO_OLD = {ARM_CPU: TORCH_TOO_OLD, ARM_CU130: TORCH_TOO_OLD}


def arm(torch_version: str, backend: str) -> System:
    return System(torch_version, backend, arch="aarch64")


# fmt: off
ARM_CASES = [
    *(Case(arm(t, "cpu"), ARM_CPU, {**ON_ARM, ARM_CU130: wrong_backend("cu130", "cpu")}, also_offered=ARM_RELEASE)
      for t in TORCHES),
    *(Case(arm(t, cuda), ARM_CU130, {**ON_ARM, ARM_CPU: wrong_backend("cpu", cuda)}, also_offered=ARM_RELEASE)
      for t in TORCHES for cuda in ("cu130", "cu132")),
    Case(arm("2.13", "cu130"), ARM_CPU, {**ON_ARM, ARM_CU130: wrong_backend("cu130", "cpu")},
         asks_backend="cpu", also_offered=ARM_RELEASE),
    # CUDA 12 on aarch64 is not built (out of scope); torch 2.10 predates the stable ABI.
    Case(arm("2.13", "cu128"), None, {**ON_ARM, ARM_CPU: wrong_backend("cpu", "cu128"), ARM_CU130: cuda_too_old("12.8")},
         also_offered=ARM_RELEASE),
    Case(arm("2.10", "cu130"), None, {**ON_ARM, **ARM_BOTH_TORCH_TOO_OLD}, also_offered=ARM_RELEASE),
]
# fmt: on


@pytest.mark.parametrize("case", ARM_CASES, ids=lambda case: f"aarch64-{case}")
def test_kernels_picks_intended_aarch64_variant(case: Case):
    test_kernels_picks_intended_variant(case)


def test_tables_cover_the_release_set():
    """Every compiled variant of the release set is a candidate of the x86_64 or the aarch64
    cases."""
    assert sorted(X86_RELEASE + ARM_RELEASE) == sorted(COMPILED_RELEASE)
    assert {v.platform for v in release_set.RELEASE if not v.noarch} == {"x86_64", "aarch64"}


# ---- The whole release set, noarch variants included (scripts/release_set.py). kernels ranks
# noarch variants (torch-cpu, torch-cuda) after every accepted compiled one and accepts them on
# any torch version whose backend matches: they fill exactly the cells no compiled build serves.
SYSTEM_BACKENDS = ["cpu", "cu126", "cu128", "cu130", "cu132"]
CPU_ARCHS = ["x86_64", "aarch64"]


def pick(candidates, system: System, asks_backend: str | None = None) -> str | None:
    with fake_system(system):
        picked, _ = resolve_variant([parse_variant(name) for name in candidates], backend=asks_backend)
    return picked.variant_str if picked else None


def noarch_for(system_backend: str) -> str:
    return "torch-cpu" if system_backend == "cpu" else "torch-cuda"


def test_release_set_has_the_noarch_variants():
    assert set(RELEASE) - set(COMPILED_RELEASE) == {"torch-cpu", "torch-cuda", "torch-xpu"}
    for name in ("torch-cpu", "torch-cuda", "torch-xpu"):
        row = release_set.variant(name)
        assert row.build_args() == ["--noarch", "--backend", row.backend] and row.archs() == ()


@pytest.mark.parametrize("arch", CPU_ARCHS)
@pytest.mark.parametrize("system_backend", SYSTEM_BACKENDS)
@pytest.mark.parametrize("torch_version", ["2.9", "2.10"])
def test_torch_older_than_the_stable_abi_gets_a_noarch_variant(torch_version, system_backend, arch):
    system = System(torch_version, system_backend, arch=arch)
    assert pick(COMPILED_RELEASE, system) is None, "no compiled variant serves torch < 2.11"
    assert pick(RELEASE, system) == noarch_for(system_backend)
    assert pick(RELEASE, system, asks_backend="cpu") == "torch-cpu"


@pytest.mark.parametrize("arch", CPU_ARCHS)
@pytest.mark.parametrize("system_backend", SYSTEM_BACKENDS)
@pytest.mark.parametrize("torch_version", ["2.11", "2.12", "2.13", "2.14", "2.15"])
def test_compiled_variants_keep_precedence_from_torch_2_11(torch_version, system_backend, arch):
    system = System(torch_version, system_backend, arch=arch)
    compiled = pick(COMPILED_RELEASE, system)
    if arch == "x86_64":  # cpu, cu124 (CUDA 12.6, 12.8) and cu130 (CUDA 13.0, 13.2)
        assert compiled is not None
    else:  # cpu and cu130 (CUDA 13.0, 13.2); no CUDA 12 variant for aarch64
        assert (compiled is not None) == (system_backend in ("cpu", "cu130", "cu132"))
    # Where a compiled variant loads it wins; elsewhere (a CUDA or CPU combination no compiled
    # build covers) the noarch variant of the system's backend.
    assert pick(RELEASE, system) == (compiled or noarch_for(system_backend))
# ---- An XPU (Intel GPU) torch ------------------------------------------------------------
# No XPU binary ships (no SYCL compiler is reachable to build relu-xpu/), and kernels accepts
# no variant of another backend on an XPU torch, noarch torch-cpu included: torch-xpu, the
# torch-ops variant, is what such a user gets, on any torch version; backend="cpu" still
# gets the CPU variants.
XPU_BACKENDS = ["xpu20251", "xpu20261"]  # oneAPI 2025.1, 2026.1 builds of torch


@pytest.mark.parametrize("xpu", XPU_BACKENDS)
@pytest.mark.parametrize("torch_version", ["2.9", "2.11", "2.14"])
def test_xpu_torch_gets_the_xpu_noarch_variant(torch_version, xpu):
    system = System(torch_version, xpu)
    with fake_system(system):
        picked, trace = resolve_variant([parse_variant(name) for name in RELEASE])
    assert picked is not None and picked.variant_str == "torch-xpu"
    refused = {d.variant.variant_str: d.reason for d in trace if isinstance(d, VariantRejected)}
    assert sorted(refused) == sorted(set(RELEASE) - {"torch-xpu"}), "every other variant refused"
    assert "not universal" in refused["torch-cpu"], refused["torch-cpu"]  # not the CPU fallback
    compiled_cpu = CPU if torch_version != "2.9" else None
    assert pick(RELEASE, system, asks_backend="cpu") == (compiled_cpu or "torch-cpu")


@pytest.mark.parametrize("system_backend", SYSTEM_BACKENDS)
def test_xpu_variant_is_refused_off_xpu(system_backend):
    with fake_system(System("2.14", system_backend)):
        _, trace = resolve_variant([parse_variant("torch-xpu")])
    assert isinstance(trace[0], VariantRejected), trace[0]


@pytest.mark.parametrize("torch_version", ["2.9", "2.14"])
def test_rocm_torch_gets_nothing_but_the_cpu_variants(torch_version):
    """ROCm stays out (nothing here can build, run or measure for AMD GPUs): kernels accepts
    no variant on a ROCm torch, so get_kernel raises; backend="cpu" gets the CPU variant, for
    CPU tensors, as the card says."""
    system = System(torch_version, "rocm64")
    assert pick(RELEASE, system) is None
    assert pick(RELEASE, system, asks_backend="cpu") == (CPU if torch_version != "2.9" else "torch-cpu")


def test_kernels_sees_the_xpu_it_is_told():
    """tests/kernels_sees_cuda with RELU_TEST_KERNELS_XPU, as scripts/release.sh's XPU pass
    runs the suite: a fresh interpreter's kernels sees an XPU torch and its own resolver picks
    torch-xpu from the release set (this torch's version and CPU, x86_64 or not)."""
    import os
    import subprocess

    tests = Path(__file__).resolve().parent
    path = [str(tests / "kernels_sees_cuda"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "RELU_TEST_KERNELS_XPU": "2026.1"}
    env.pop("RELU_TEST_KERNELS_CUDA", None)
    script = ("import sys; import kernels.backends as b; from kernels.variants import parse_variant, resolve_variant\n"
              "picked, _ = resolve_variant([parse_variant(n) for n in sys.argv[1:]])\n"
              "print(b._backend().variant_str, picked.variant_str if picked else None)")
    done = subprocess.run([sys.executable, "-c", script, *RELEASE], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["xpu20261", "torch-xpu"]


# ---- GPUs --------------------------------------------------------------------------------
# Each CUDA variant of the release set against the GPUs users have, through kernels' own
# check of the picked variant (kernels.archs._check_arch_incompatibility). "compiled": a cubin
# of the GPU's major at or below its minor; "JIT": only a +PTX arch covers it, and the driver
# compiles that PTX at first use (unmeasured here); "refused": get_kernel raises.
COMPILED, JIT, REFUSED = "compiled", "JIT from PTX", "refused"
GPUS = {  # name: compute capability
    "V100": (7, 0), "T4": (7, 5), "A100": (8, 0), "A10": (8, 6), "L4": (8, 9),
    "H100/H200": (9, 0), "B200": (10, 0), "RTX 5090": (12, 0), "GB10": (12, 1),
    "GH200": (9, 0), "GB200": (10, 0),
}
NOT_THERE = None  # no such machine: GH200, GB200 and GB10 are aarch64 systems, V100 has no Arm host
# fmt: off
GPU_TABLE = {  # GPU: (cu124 variant, cu130 variant, aarch64 cu130 variant)
    "V100":      (COMPILED,  REFUSED,   NOT_THERE),  # CUDA 13 dropped Volta (no cu13x torch runs there either)
    "T4":        (COMPILED,  COMPILED,  COMPILED),   # aarch64: T4G (AWS g5g)
    "A100":      (COMPILED,  COMPILED,  COMPILED),   # aarch64: PCIe GPUs in Arm servers
    "A10":       (COMPILED,  COMPILED,  COMPILED),   # sm_86 cubin
    "L4":        (COMPILED,  COMPILED,  COMPILED),
    "H100/H200": (COMPILED,  COMPILED,  COMPILED),
    "B200":      (JIT,       COMPILED,  COMPILED),   # on a cu128/cu129 torch: compute_90 PTX
    "RTX 5090":  (JIT,       COMPILED,  COMPILED),
    "GB10":      (NOT_THERE, NOT_THERE, COMPILED),   # 12.1 runs 12.0's cubin
    "GH200":     (NOT_THERE, NOT_THERE, COMPILED),
    "GB200":     (NOT_THERE, NOT_THERE, COMPILED),
}
# fmt: on
CUDA_VARIANTS = (CU124, CU130, ARM_CU130)


def kernels_serves(archs: list[str], capability: tuple[int, int], tmp_path: Path) -> bool:
    """Whether kernels' arch check lets a variant declaring `archs` load on that GPU."""
    from kernels._rust import Metadata
    from kernels.archs import _check_arch_incompatibility

    path = tmp_path / "metadata.json"
    path.write_text(json.dumps({"name": "relu", "id": "_relu_cuda_0", "version": 3, "license": "Apache-2.0",
                                "python-depends": [], "backend": {"type": "cuda", "archs": archs}}))
    metadata = Metadata.read_from_file(path)
    with pytest.MonkeyPatch.context() as patch:
        # A CUDA torch with that GPU, whatever torch runs the test (CPU-only in CI).
        patch.setattr(torch.version, "cuda", "12.8")
        patch.setattr(torch.cuda, "is_available", lambda: True)
        patch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
        try:
            _check_arch_incompatibility(metadata, "variant")
        except RuntimeError as refusal:
            assert "is not supported by the architectures of the build" in str(refusal)
            return False
    return True


@pytest.mark.parametrize(("variant", "gpu"), [(v, g) for v in CUDA_VARIANTS for g in GPUS
                                               if GPU_TABLE[g][CUDA_VARIANTS.index(v)] is not NOT_THERE],
                         ids=lambda x: "-".join(x.split("-")[3:5]) if x in CUDA_VARIANTS else x)
def test_gpu_is_served_as_the_table_says(variant, gpu, tmp_path):
    archs = list(release_set.variant(variant).archs())
    capability = GPUS[gpu]
    if not kernels_serves(archs, capability, tmp_path):
        outcome = REFUSED
    elif kernels_serves([a.removesuffix("+PTX") for a in archs], capability, tmp_path):
        outcome = COMPILED
    else:
        outcome = JIT
    assert outcome == GPU_TABLE[gpu][CUDA_VARIANTS.index(variant)], f"{gpu} on {variant}: archs {archs}"


@pytest.mark.parametrize("gpu", GPUS)
def test_noarch_cuda_variant_serves_every_gpu(gpu, tmp_path):
    """torch-cuda declares no archs (Triton compiles for the GPU it finds): kernels' arch
    check lets it load on every GPU."""
    assert kernels_serves(list(release_set.variant("torch-cuda").archs()), GPUS[gpu], tmp_path)


@pytest.mark.parametrize(("told", "expected"), [(None, "cu130"), ("12.8", "cu128")])
def test_kernels_sees_the_cuda_it_is_told(told, expected):
    """tests/kernels_sees_cuda, which the cu12x runs (scripts/release.sh, h200_release.sh)
    put first on PYTHONPATH: a fresh interpreter's kernels reports the CUDA it is told, and
    torch's own when told none."""
    import os
    import subprocess

    tests = Path(__file__).resolve().parent
    path = [str(tests / "kernels_sees_cuda"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    env.pop("RELU_TEST_KERNELS_CUDA", None)
    if told:
        env["RELU_TEST_KERNELS_CUDA"] = told
    # A CUDA 13.0 torch as far as kernels can tell, whatever torch runs the test.
    script = "import torch; torch.version.cuda = '13.0'; import kernels.backends as b; print(b._backend().variant_str)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected
