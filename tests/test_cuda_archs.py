"""Which GPU architectures each CUDA variant holds, and why the oldest of them (sm_70, sm_75)
compute what every other one does.

- The arch rule (scripts/cuda_archs.py, kernel-builder's loose intersection) against the lists
  the CUDA issue expects, written out here, not computed.
- The release set's CUDA rows hold those lists (scripts/release_set.py).
- A built CUDA variant holds exactly the cubins and PTX its metadata.json declares
  (cuobjdump --list-elf / --list-ptx).
- The device code is one code for every arch: no branch on __CUDA_ARCH__'s value, no half,
  bfloat16 or float8 type (those floats are computed on their bit patterns by
  relu-common/relu_element.h, checked on the host by test_relu_element.py), so sm_70 and
  sm_75, which lack bfloat16 and float8 arithmetic, run the same logic as sm_90.
"""

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import cuda_archs  # noqa: E402
import release_set  # noqa: E402

# kernel-builder's default lists as the CUDA issue quotes them (KERNELS_FACTS.md).
KERNEL_BUILDER_CU126 = "7.0;7.2;7.5;8.0;8.6;8.7;8.9;9.0+PTX"
KERNEL_BUILDER_CU128 = "7.0;7.2;7.5;8.0;8.6;8.7;8.9;9.0;10.0;10.1;12.0+PTX"
KERNEL_BUILDER_CU130 = "7.5;8.0;8.6;8.7;8.9;9.0;10.0;11.0;12.0;12.1+PTX"

# What each release variant must hold. cu130 also carries compute_90 PTX: +PTX comes with
# the build.toml entry (9.0+PTX, which cu124 needs), not per toolkit, so every toolkit that
# builds 9.0 gets its PTX too; CUDA 13 has no sm_70.
CU124_ARCHS = ("7.0", "7.5", "8.0", "8.6", "8.9", "9.0+PTX")
CU130_ARCHS = ("7.5", "8.0", "8.6", "8.9", "9.0+PTX", "10.0", "12.0+PTX")


@pytest.mark.parametrize(("cuda", "expected"), [
    ("12.4", KERNEL_BUILDER_CU126), ("12.6", KERNEL_BUILDER_CU126), ("12.8", KERNEL_BUILDER_CU128),
    ("12.9", KERNEL_BUILDER_CU128), ("13.0", KERNEL_BUILDER_CU130), ("13.2", KERNEL_BUILDER_CU130),
])
def test_kernel_builder_default_archs(cuda, expected):
    assert ";".join(cuda_archs.default_archs(Version(cuda))) == expected


def targets(default_list: str) -> list[str]:
    return [a.removesuffix("+PTX") for a in default_list.split(";")]


@pytest.mark.parametrize(("listed", "target_list", "expected"), [
    # kernel-builder's own example (utils.cmake): +PTX matches across majors.
    (["8.0+PTX"], "9.0", ["8.0+PTX"]),
    # Each target takes the highest listed arch of its major not above it: 8.7 -> 8.6.
    (["8.0", "8.6"], "8.0;8.7;8.9", ["8.0", "8.6"]),
    # A base arch never serves another major: nothing for 9.0.
    (["8.0"], "9.0", []),
    # This package's list before sm_75 came in: no 7.x and no PTX (KERNELS_FACTS.md).
    (["8.0", "8.9", "9.0", "10.0", "12.0"], KERNEL_BUILDER_CU130, ["8.0", "8.9", "9.0", "10.0", "12.0"]),
    # 11.0 (Thor) is served by the 9.0 PTX, 12.1 by 12.0: neither adds an arch.
    (["7.0", "7.5", "8.0", "8.6", "8.9", "9.0+PTX", "10.0", "12.0+PTX"], KERNEL_BUILDER_CU130, list(CU130_ARCHS)),
    (["7.0", "7.5", "8.0", "8.6", "8.9", "9.0+PTX", "10.0", "12.0+PTX"], KERNEL_BUILDER_CU126, list(CU124_ARCHS)),
])
def test_loose_intersection(listed, target_list, expected):
    assert cuda_archs.loose_intersection(listed, targets(target_list)) == expected


def test_empty_intersection_stops_the_build():
    with pytest.raises(ValueError, match="no arch"):
        cuda_archs.variant_archs(["6.1"], Version("13.0"))


def test_arch_and_family_suffixes_are_refused():
    with pytest.raises(ValueError, match="9.0a"):
        cuda_archs.loose_intersection(["9.0a"], ["9.0"])


def build_toml() -> dict:
    return tomllib.loads((ROOT / "build.toml").read_text())


def test_release_cuda_variants_hold_the_expected_archs():
    assert release_set.variant("torch-stable-abi211-cu124-x86_64-linux").archs() == CU124_ARCHS
    assert release_set.variant("torch-stable-abi211-cu130-x86_64-linux").archs() == CU130_ARCHS
    assert release_set.variant("torch-stable-abi211-cu130-aarch64-linux").archs() == CU130_ARCHS  # same nvcc, same rule


def test_release_names_are_what_kernels_reads_from_each_row():
    from kernels.backends import CPU, CUDA
    from kernels.variants import parse_variant

    stable = build_toml()["torch"]["stable-abi"]
    for row in release_set.RELEASE:
        parsed = parse_variant(row.name)
        assert parsed.variant_str == row.name
        if row.noarch:  # torch-<backend>: no CPU, OS or ABI in the name
            assert parsed.arch.backend_name == row.backend and row.platform == "any", row.name
            continue
        assert parsed.arch.platform == row.platform and parsed.arch.os == "linux", row.name
        if row.backend == "cpu":
            assert parsed.arch.backend == CPU(), row.name
        else:
            assert parsed.arch.backend == CUDA(version=Version(row.toolchain.cuda)), row.name
        assert str(parsed.framework.version) == stable[row.backend], row.name
    assert len({row.name for row in release_set.RELEASE}) == len(release_set.RELEASE)


def find_cuobjdump() -> str | None:
    """The CUDA toolkit's own, else the one Triton bundles (the dev machine's CUDA 13.0
    toolkit has none)."""
    import importlib.util
    import os

    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "cuobjdump").is_file():
            return str(Path(home) / "bin" / "cuobjdump")
    if shutil.which("cuobjdump"):
        return shutil.which("cuobjdump")
    triton = importlib.util.find_spec("triton")
    if triton and triton.origin:
        bundled = Path(triton.origin).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
        if bundled.is_file():
            return str(bundled)
    return None


def archs_in_binary(library: Path, cuobjdump: str) -> list[str]:
    """The arch strings kernels reads (metadata.json's backend.archs) for what the fatbinary
    holds: X.Y for an sm_XY cubin, with +PTX when compute_XY PTX is there too."""
    def listed(flag: str, kind: str) -> set[str]:
        done = subprocess.run([cuobjdump, flag, str(library)], capture_output=True, text=True)
        if done.returncode != 0 and "No PTX" not in done.stderr:  # PTX-free binaries say so
            pytest.fail(f"{cuobjdump} {flag}: {done.stderr}")
        # "<name>.1.sm_90.cubin", "<name>.1.sm_90.ptx"; the last digit is the minor.
        found = re.findall(rf"\.(?:sm|compute)_(\d+)\.{kind}\b", done.stdout)
        return {f"{number[:-1]}.{number[-1]}" for number in found}

    cubins, ptx = listed("--list-elf", "cubin"), listed("--list-ptx", "ptx")
    assert ptx <= cubins, f"PTX without a cubin of its own: {sorted(ptx - cubins)}"
    return sorted((a + "+PTX" if a in ptx else a for a in cubins), key=lambda a: cuda_archs._version(a))


def test_cuda_binary_holds_exactly_the_declared_archs(variant_dir, backend, compiled_variant):
    if backend != "cuda":
        pytest.skip("a CPU variant holds no GPU code")
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        pytest.skip("no cuobjdump here (a CUDA toolkit's, or Triton's)")
    declared = json.loads((variant_dir / "metadata.json").read_text())["backend"]["archs"]
    assert archs_in_binary(next(variant_dir.glob("*.abi3.so")), cuobjdump) == declared


def cuda_device_sources() -> list[Path]:
    """Every file compiled into the CUDA kernels: build.toml's CUDA kernel sources."""
    kernel = next(k for k in build_toml()["kernel"].values() if k["backend"] == "cuda")
    return [ROOT / path for path in kernel["src"]]


# The one place device code may depend on the arch: relu's float16/bfloat16 pairs through
# __hmax2 on sm_80 and later (relu_vector16_gpu). Every other arch, and every other format, runs
# relu_element.h's integer bit operations, which the host tests check. (relu_squared's pairs
# convert through cuda_fp16.h / cuda_bf16.h, whose own arch branches pick the instructions.)
ARCH_BRANCH_FILE = "relu-cuda/relu_ops.cuh"


def test_device_code_branches_on_the_arch_in_one_place():
    """No preprocessor branch on __CUDA_ARCH__'s value and no half / bfloat16 / float8 type or
    header outside ARCH_BRANCH_FILE, and there exactly one `__CUDA_ARCH__ >= 800` test, whose
    fall-through is relu_forward: what sm_70 and sm_75 run is the bit form the host tests check."""
    arch_value_test = re.compile(r"__CUDA_ARCH__\s*[<>=!]|#\s*if\s+__CUDA_ARCH__|__CUDA_ARCH_(SPECIFIC|FAMILY_SPECIFIC)")
    float_types = re.compile(r"cuda_(fp16|bf16|fp8)\.h|\b__(half2?|nv_bfloat162?|nv_fp8\w*)\b")
    offenders = []
    for source in cuda_device_sources():
        if source.relative_to(ROOT).as_posix() == ARCH_BRANCH_FILE:
            continue
        for number, line in enumerate(source.read_text().splitlines(), 1):
            if arch_value_test.search(line) or float_types.search(line):
                offenders.append(f"{source.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []
    branch = (ROOT / ARCH_BRANCH_FILE).read_text()
    assert len(arch_value_test.findall(branch)) == 1
    assert "__CUDA_ARCH__ >= 800" in branch
    after_branch = branch[branch.index("__CUDA_ARCH__ >= 800"):]
    assert re.search(r"#endif\s*\n\s*return relu_forward<Fmt>\(v\);", after_branch), \
        "the arch branch must fall through to relu_forward (the bit form) on older GPUs"
