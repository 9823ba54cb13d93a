"""Which CUDA architectures a CUDA variant holds: kernel-builder's rule, written once for the
build (scripts/build_variant.py), the compile check (scripts/check_cuda_compile.py) and the
release set (scripts/release_set.py).

kernel-builder compiles a kernel with `cuda-capabilities` in build.toml for the "loose
intersection" of that list with its default list for the toolkit's CUDA version
(preamble.cmake's CUDA_DEFAULT_KERNEL_ARCHS, its +PTX suffixes removed; utils.cmake's
cuda_archs_loose_intersection): for each default arch, the highest listed arch that is not
above it and has the same major (SASS runs only on its own major), or that is listed with
+PTX (PTX is JIT-compiled for any newer GPU); each chosen arch keeps the +PTX it was listed
with. So a toolkit never gets an arch it cannot compile (nvcc 13 has no sm_70), and one
build.toml gives each CUDA variant its own list.
"""

from __future__ import annotations

from packaging.version import Version

# kernel-builder's CUDA_DEFAULT_KERNEL_ARCHS (preamble.cmake, August 2026), newest toolkit
# first: the first entry whose CUDA version the toolkit reaches applies.
KERNEL_BUILDER_DEFAULT_ARCHS: tuple[tuple[Version, tuple[str, ...]], ...] = (
    (Version("13.0"), ("7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "11.0", "12.0", "12.1+PTX")),
    (Version("12.8"), ("7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.1", "12.0+PTX")),
    (Version("0"), ("7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0+PTX")),
)

PTX = "+PTX"


def base_arch(arch: str) -> str:
    """"9.0+PTX" -> "9.0"."""
    return arch.removesuffix(PTX)


def _version(arch: str) -> tuple[int, int]:
    major, _, minor = base_arch(arch).partition(".")
    if not (major.isdigit() and minor.isdigit()):
        # kernel-builder also knows 9.0a / 10.0f (arch- and family-specific builds); this
        # package lists none, so they are refused rather than half modelled.
        raise ValueError(f"CUDA arch {arch!r}: only X.Y and X.Y+PTX are supported here")
    return int(major), int(minor)


def default_archs(cuda: Version) -> tuple[str, ...]:
    """kernel-builder's default arch list for a toolkit of CUDA version `cuda`."""
    return next(archs for since, archs in KERNEL_BUILDER_DEFAULT_ARCHS if cuda >= since)


def loose_intersection(listed: list[str] | tuple[str, ...], targets: list[str] | tuple[str, ...]) -> list[str]:
    """kernel-builder's cuda_archs_loose_intersection(listed, targets): the archs to compile,
    ascending. `targets` carry no +PTX (kernel-builder strips it from its defaults)."""
    with_ptx = {base_arch(a) for a in listed if a.endswith(PTX)}
    candidates = sorted({base_arch(a) for a in listed}, key=_version)
    chosen: list[str] = []
    for target in targets:
        target_version = _version(target)
        match = None
        for candidate in candidates:  # ascending: the last that fits is the highest
            version = _version(candidate)
            if version > target_version:
                break
            if candidate in with_ptx or version[0] == target_version[0]:
                match = candidate
        if match is not None and match not in chosen:
            chosen.append(match)
    chosen.sort(key=_version)
    return [a + PTX if a in with_ptx else a for a in chosen]


def variant_archs(listed: list[str] | tuple[str, ...], cuda: Version) -> list[str]:
    """What kernel-builder compiles for build.toml's `cuda-capabilities` with a CUDA `cuda`
    toolkit; kernel-builder stops on an empty result, and so does this."""
    archs = loose_intersection(listed, [base_arch(a) for a in default_archs(cuda)])
    if not archs:
        raise ValueError(f"no arch of {list(listed)} is built by a CUDA {cuda} toolkit "
                         f"(its defaults: {list(default_archs(cuda))})")
    return archs
