"""The package as kernel-builder and the kernels library see it: build.toml, the variant
layout, metadata, digest, ABI, and every loading path users have."""

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
import torch

from conftest import KERNEL_ROOT, PREBUILT, ROOT, runs_kernels_benchmark
from reference import assert_bitwise_equal, random_input, reference_relu

sys.path.insert(0, str(ROOT / "scripts"))
import build_variant  # noqa: E402
import release_set  # noqa: E402


def test_build_toml_is_valid_for_kernel_builder():
    from kernels._rust import Backend, Build

    build = Build.open(ROOT)  # kernel-builder's own parser and validator
    assert set(build.general.backends) == {Backend.CPU, Backend.CUDA, Backend.XPU}
    config = tomllib.loads((ROOT / "build.toml").read_text())
    assert config["general"]["edition"] == 5
    assert config["general"]["version"] == 3
    assert config["general"]["name"] == "relu"
    assert config["general"]["license"] == "Apache-2.0"
    listed = list(config["torch"]["src"])
    for kernel in config["kernel"].values():
        listed += kernel["src"]
    missing = [path for path in listed if not (ROOT / path).is_file()]
    assert not missing, f"build.toml lists files that do not exist: {missing}"
    assert {k["backend"] for k in config["kernel"].values()} == {"cpu", "cuda", "xpu"}


def test_noarch_needs_a_project_of_its_own(tmp_path):
    """docs/noarch.md: kernel-builder builds torch-cpu/torch-cuda from a
    [torch-noarch] project, and its parser refuses one beside [torch]."""
    from kernels._rust import Backend, Build

    general = '[general]\nname = "relu"\nversion = 3\nedition = 5\nlicense = "Apache-2.0"\nbackends = ["cpu", "cuda"]\n'
    (tmp_path / "build.toml").write_text(general + "[torch-noarch]\n")
    assert set(Build.open(tmp_path).general.backends) == {Backend.CPU, Backend.CUDA}
    (tmp_path / "build.toml").write_text(general + '[torch]\nsrc = []\n[torch-noarch]\n')
    with pytest.raises(Exception, match="torch-noarch"):
        Build.open(tmp_path)


def test_flake_uses_kernel_builder():
    flake = (ROOT / "flake.nix").read_text()
    assert "kernel-builder.lib.genKernelFlakeOutputs" in flake
    assert "path = ./.;" in flake


def test_variant_name_is_accepted_by_kernels(variant_dir, backend):
    from kernels.variants import parse_variant, resolve_variant

    resolved = resolve_variant([parse_variant(variant_dir.name)], backend=backend)
    if not isinstance(resolved, tuple):  # kernels < 0.15: the variant picked, or None
        assert resolved is not None, f"kernels refuses {variant_dir.name} here"
        return
    from kernels.variants import VariantAccepted

    assert isinstance(resolved[1][0], VariantAccepted), resolved[1][0]


def test_variant_layout_and_metadata(variant_dir, backend, kernel, noarch):
    from kernels._rust import Digest, Metadata

    metadata = Metadata.read_from_file(variant_dir / "metadata.json")
    assert str(metadata.name) == "relu"
    assert metadata.version == 3
    assert metadata.license == "Apache-2.0"
    assert str(metadata.backend.backend_type).lower() == backend
    if backend == "cuda" and not noarch:
        assert metadata.backend.archs, "CUDA builds must list backend.archs"
    if noarch:
        # Triton compiles for the GPU it finds: no archs, so kernels' arch check passes it.
        assert not metadata.backend.archs
        assert metadata.python_depends == [], "kernels 0.17.2 rejects triton there"
    ext_id = metadata.id
    assert ext_id.startswith(f"_relu_{backend}_")
    assert (variant_dir / "__init__.py").is_file()
    assert (variant_dir / "layers.py").is_file()
    assert (variant_dir / "relu" / "__init__.py").is_file()  # compat package for sys.path users
    ops_py = (variant_dir / "_ops.py").read_text()
    if noarch:
        assert not list(variant_dir.glob("*.so"))
        assert f'register_ops("{ext_id}", "{backend}", ' in ops_py
        assert (variant_dir / "_noarch.py").is_file()
        assert (variant_dir / "_triton.py").is_file() == (backend == "cuda")
    else:
        assert (variant_dir / f"{ext_id}.abi3.so").is_file()
        assert f"from . import {ext_id}" in ops_py
        assert not (variant_dir / "_noarch.py").exists() and not (variant_dir / "_triton.py").exists()
    assert kernel._ops.add_op_namespace_prefix("relu") == f"{ext_id}::relu"
    assert kernel._ops.ops is getattr(torch.ops, ext_id)
    # The digest covers every file but metadata.json and still matches what is on disk.
    metadata.digest.validate(Digest.hash_variant(metadata.digest.algorithm, variant_dir))
    raw = json.loads((variant_dir / "metadata.json").read_text())
    assert set(raw["digest"]["files"]) == {
        str(p.relative_to(variant_dir)) for p in variant_dir.rglob("*")
        if p.is_file() and p.name != "metadata.json" and "__pycache__" not in p.parts
    }


def test_provenance_reads_the_commit_and_changes_to_the_kernel_source(tmp_path):
    """The build's provenance of a clone of this checkout: its HEAD, clean with the scripts'
    outputs beside it (results/, build outputs), dirty for a changed or new file of the
    kernel's source, clean again once committed; none outside git."""
    import shutil

    if shutil.which("git") is None or build_variant.source_provenance() is None:
        pytest.skip("no git checkout here (scripts/check_bullseye.sh's root)")
    clone = tmp_path / "clone"

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    def state() -> tuple[str, bool]:
        kernel = build_variant.source_provenance(clone)["kernel"]
        return kernel["commit"], kernel["dirty"]

    assert build_variant.source_provenance(tmp_path) is None
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(clone)], check=True)
    assert state() == (git("rev-parse", "HEAD"), False)
    # What scripts/bench.sh and the build write: a new machine's results, a committed
    # machine's results rewritten, build outputs and the staged release.
    (clone / "results" / "cpu-new-machine").mkdir()
    (clone / "results" / "cpu-new-machine" / "machine.txt").write_text("new\n")
    committed = next(iter(git("ls-files", "results/*/machine.txt").splitlines()))
    (clone / committed).write_text("rewritten\n")
    for output in ["build/torch-cpu/metadata.json", ".cache/objects/x.o", "relu-build/README.md"]:
        (clone / output).parent.mkdir(parents=True, exist_ok=True)
        (clone / output).write_text("output\n")
    assert state()[1] is False, git("status", "--porcelain")
    layers = clone / "torch-ext" / "relu" / "layers.py"
    layers.write_text(layers.read_text() + "# edited\n")
    assert state()[1] is True, "a tracked source file changed"
    git("checkout", "--", "torch-ext/relu/layers.py")
    assert state()[1] is False
    (clone / "relu-cpu" / "new.h").write_text("untracked\n")
    assert state()[1] is True, "a new file in a backend folder"
    git("add", "relu-cpu/new.h")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "new.h")
    assert state() == (git("rev-parse", "HEAD"), False)


def test_provenance_covers_every_file_the_build_reads():
    """Every file a variant is built from, and the benchmarks the release ships, is within
    the pathspecs whose changes make a build dirty (the op namespace hashes a subset)."""
    import shutil

    if shutil.which("git") is None or build_variant.source_provenance() is None:
        pytest.skip("no git checkout here (scripts/check_bullseye.sh's root)")
    config = build_variant.read_build_toml()
    read = {build_variant.GLIBC_COMPAT_SOURCE, build_variant.DTYPE_TABLE_HEADER,
            ROOT / "build.toml", ROOT / "flake.nix", ROOT / "scripts" / "build_variant.py",
            ROOT / "scripts" / "cuda_archs.py", *(ROOT / "benchmarks").glob("benchmark*.py"),
            *build_variant.python_package(config).rglob("*.py")}
    for backend in config["general"]["backends"]:
        read |= set(build_variant.sources_for(config, backend))
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--", *build_variant.SOURCE_PATHSPECS],
                            capture_output=True, text=True, check=True).stdout.split()
    outside = sorted(str(p.relative_to(ROOT)) for p in read if str(p.relative_to(ROOT)) not in listed
                     and "__pycache__" not in p.parts)
    assert not outside, f"read by the build but not in SOURCE_PATHSPECS: {outside}"
    assert not any(p.startswith(("results/", "tests/", "docs/")) for p in listed)


@pytest.mark.parametrize("name", [v.name for v in release_set.RELEASE])
def test_metadata_fields_kernels_reads(name):
    """Every variant of the release set that is here (a staged release: all of them), read
    by kernels' own parser: kernels-minver (its MinverValidator refuses an older kernels),
    source (build.toml's, a git URL), provenance (the source commit, and whether the tree
    was dirty: kernels warns on load then)."""
    from kernels._rust import Metadata

    variant = KERNEL_ROOT / "build" / name
    if not variant.is_dir():
        pytest.skip(f"{name} is not built here")
    metadata = Metadata.read_from_file(variant / "metadata.json")
    raw = json.loads((variant / "metadata.json").read_text())
    general = tomllib.loads((ROOT / "build.toml").read_text())["general"]
    noarch = release_set.variant(name).noarch
    expected_minver = build_variant.KERNELS_MINVER_NOARCH if noarch else build_variant.KERNELS_MINVER_COMPILED
    assert str(metadata.kernels_minver) == expected_minver == raw["kernels-minver"]
    assert raw["source"] == general["source"] and metadata.source is not None
    provenance = metadata.provenance
    assert provenance is not None, "no provenance: built outside a git checkout?"
    assert re.fullmatch(r"[0-9a-f]{40}", provenance.kernel.commit)
    assert provenance.dirty == provenance.kernel.dirty == raw["provenance"]["kernel"]["dirty"]
    here = build_variant.source_provenance()
    if not PREBUILT and here is not None:  # built by this session from this tree
        assert provenance.kernel.commit == here["kernel"]["commit"]


def test_kernels_acts_on_minver_and_dirty(variant_dir, tmp_path, caplog):
    """The two fields do what kernels does with them on load (its default validators, which
    get_kernel and get_local_kernel run before importing): a kernels-minver above the
    installed kernels refuses, a dirty provenance warns. The variant's own metadata, those
    fields changed, in a copy."""
    import logging

    from kernels._rust import Metadata
    from kernels.validate import DirtyValidator, MinverValidator, default_metadata_validators

    kinds = {type(v) for v in default_metadata_validators()}
    assert {MinverValidator, DirtyValidator} <= kinds, kinds

    def with_fields(minver: str, dirty: bool) -> Metadata:
        raw = json.loads((variant_dir / "metadata.json").read_text())
        raw["kernels-minver"] = minver
        raw["provenance"]["kernel"]["dirty"] = dirty
        path = tmp_path / f"{minver}-{dirty}.json"
        path.write_text(json.dumps(raw))
        return Metadata.read_from_file(path)

    as_built = Metadata.read_from_file(variant_dir / "metadata.json")
    MinverValidator().validate_metadata(metadata=as_built, variant=variant_dir.name)  # this kernels loads it
    with pytest.raises(RuntimeError, match=r"requires kernels>=99\.0\.0"):
        MinverValidator().validate_metadata(metadata=with_fields("99.0.0", False), variant=variant_dir.name)
    with caplog.at_level(logging.WARNING):
        DirtyValidator().validate_metadata(metadata=with_fields("0.15.1", False), variant=variant_dir.name)
        assert "dirty" not in caplog.text
        DirtyValidator().validate_metadata(metadata=with_fields("0.15.1", True), variant=variant_dir.name)
    assert "was built from a dirty git tree (kernel source had uncommitted changes)" in caplog.text


# The package's __all__, sorted: what the card lists.
PUBLIC_API = ["layers", "relu", "relu_and_mul", "relu_squared", "relu_squared_and_mul"]


def test_public_api(kernel):
    assert sorted(kernel.__all__) == PUBLIC_API
    assert issubclass(kernel.layers.ReLU, torch.nn.Module)
    for layer in ("ReLUSquared", "FatreluAndMul", "ReGLU", "SReGLU"):
        assert issubclass(getattr(kernel.layers, layer), torch.nn.Module)


def abi_violations(library: Path) -> list[str]:
    """What kernel-abi-check (kernel-builder's own check-abi) finds against the Python
    limited API of 3.9 and manylinux_2_28 (glibc 2.28, and on aarch64 its base 2.17; the
    GLIBCXX, CXXABI and GCC versions of that policy): torch's own wheels' floor."""
    from kernel_abi_check import ObjectFile

    objects = ObjectFile(str(library))
    found = [f"not abi3: {v}" for v in objects.check_python_abi("3.9")]
    found += [f"{v.name} needs {v.dep}_{v.version}" for v in objects.check_manylinux("manylinux_2_28")]
    return found


def test_abi(variant_dir, compiled_variant):
    """Built here on glibc 2.36 with gcc 12, the binary still runs on glibc 2.28: the build
    links scripts/toolchains/manylinux_2_28.cpp (docs/build.md, "glibc")."""
    assert abi_violations(next(variant_dir.glob("*.abi3.so"))) == []


COMPILED_RELEASE = [v.name for v in release_set.RELEASE if not v.noarch]


@pytest.mark.parametrize("name", COMPILED_RELEASE)
def test_every_release_binary_is_manylinux_2_28(name):
    """Every compiled variant of the release set that is here (a staged release holds them
    all, aarch64 ones included, which no x86_64 test loads), checked as kernel-builder's
    check-abi would: no glibc symbol version newer than 2.28, none outside manylinux_2_28's
    GLIBCXX/CXXABI/GCC sets. A run on the whole release (scripts/release.sh) skips none."""
    variant = KERNEL_ROOT / "build" / name
    if not variant.is_dir():
        pytest.skip(f"{name} is not built here")
    (library,) = variant.glob("*.abi3.so")
    assert abi_violations(library) == []


# A mangled C++ name of torch's own API (at::, c10::, torch::, also as a template argument,
# vtable or typeinfo): what ties a binary to one torch version.
TORCH_CPP_NAME = re.compile(r"(^|[^A-Za-z0-9_])(at|c10|torch)::")


def test_extension_imports_only_the_stable_c_abi(variant_dir, compiled_variant):
    """The torch stable ABI promise: the binary needs torch's C shim functions only, so one
    build loads on every torch from 2.11 on. Which shim functions exist in 2.11 is proven by
    loading there (the H200 run, docs/support.md)."""
    library = next(variant_dir.glob("*.abi3.so"))
    listed = subprocess.run(["nm", "-D", "--undefined-only", "--demangle", str(library)],
                            capture_output=True, text=True, check=True).stdout
    undefined = [line.split(maxsplit=1)[-1] for line in listed.splitlines() if line.strip()]
    assert any(name.startswith(("aoti_torch_", "torch_")) for name in undefined), "no shim call?"
    offenders = sorted(name for name in undefined if TORCH_CPP_NAME.search(name))
    assert offenders == [], f"torch C++ symbols in {library.name}: {offenders}"


def _check_loaded(module):
    x = random_input(1000, torch.float32, "cpu")
    assert_bitwise_equal(module.relu(x), reference_relu(x))


def test_get_local_kernel_accepts_checkout_build_and_variant_dirs(variant_dir, backend):
    if backend != "cpu":
        pytest.skip("checked once, on the CPU variant")
    from kernels import get_local_kernel

    for path in (KERNEL_ROOT, KERNEL_ROOT / "build", variant_dir):
        _check_loaded(get_local_kernel(path, backend="cpu"))


def test_get_kernel_with_local_kernels_reports_version_3(kernel, variant_dir):
    # LOCAL_KERNELS does not compare versions, so the metadata is what says 3.
    from kernels._rust import Metadata

    loaded_dir = Path(kernel.__file__).parent
    assert Metadata.read_from_file(loaded_dir / "metadata.json").version == 3
    assert loaded_dir.resolve() == variant_dir.resolve()


def test_sys_path_import_of_variant_dir(variant_dir, device):
    script = textwrap.dedent(
        f"""
        import sys, torch
        sys.path.insert(0, {str(variant_dir)!r})
        import relu
        assert sorted(relu.__all__) == {PUBLIC_API!r}, relu.__all__
        x = torch.tensor([-1.0, float("nan"), -0.0, 2.0], device={device!r})
        y = relu.relu(x)
        assert y.tolist() == [0.0, 0.0, 0.0, 2.0], y
        assert not torch.signbit(y).any()
        assert relu.layers.ReLU()(x).tolist() == [0.0, 0.0, 0.0, 2.0]
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd="/")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


@runs_kernels_benchmark
def test_kernels_benchmark_runs_on_the_checkout(tmp_path):
    if not (ROOT / "benchmarks" / "benchmark.py").exists():
        pytest.fail("benchmarks/benchmark.py is missing")
    output = tmp_path / "bench.json"
    done = subprocess.run(
        # The `kernels` console script through the offline runner: on the H200 kernels is only
        # on PYTHONPATH, without its signature-checking dependencies.
        [sys.executable, str(ROOT / "scripts" / "kernels_cli_offline.py"),
         "benchmark", str(KERNEL_ROOT), "--iterations", "3", "--warmup", "1",
         "--output", str(output)],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert json.loads(output.read_text())


def test_noarch_dtype_table_is_the_binding_table(ops):
    """A noarch variant's dtype_table() is rendered at staging from relu-common/relu_dtypes.h
    (scripts/build_variant.py), not asked of a binary: the rendering must be the compiled op's
    text, so the header stays the one dtype table. Compared with the op of the variant under
    test: on a compiled one this holds the rendering to C++, on a noarch one the staged text
    to the header now."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import build_variant

    assert build_variant.dtype_table_text() == ops.dtype_table()
