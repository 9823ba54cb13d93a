"""Stages what the Hub repo's version branch (v3) holds, as kernel-builder's upload lays it
out: build/<variant>/ for each given variant, benchmarks/benchmark*.py and README.md.

    python scripts/stage_release.py relu-build build/torch-stable-abi211-cpu-x86_64-linux ...

The command stages a release: the variants given must be exactly the release set
(scripts/release_set.py). stage() itself takes any variants (tests stage what they built).

On the staged directory the seed's commands work as on a downloaded snapshot:
`kernels benchmark ./relu-build`, LOCAL_KERNELS="<org>/relu=./relu-build" with
get_kernel("<org>/relu", version=3), and sys.path.insert(0, "relu-build/build/<variant>").
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stage(destination: Path, variant_dirs: list[Path]) -> Path:
    if destination.exists():
        shutil.rmtree(destination)  # a variant of an older release must not linger
    for variant in variant_dirs:
        shutil.copytree(variant, destination / "build" / variant.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (destination / "benchmarks").mkdir(parents=True)
    for benchmark in sorted((ROOT / "benchmarks").glob("benchmark*.py")):
        shutil.copy2(benchmark, destination / "benchmarks" / benchmark.name)
    shutil.copy2(ROOT / "README.md", destination / "README.md")
    return destination


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("destination", type=Path)
    parser.add_argument("variants", type=Path, nargs="+", help="build/<variant> directories")
    args = parser.parse_args()
    from release_set import RELEASE

    given, declared = sorted(v.name for v in args.variants), sorted(v.name for v in RELEASE)
    if given != declared:
        parser.error(f"the release set is {declared}, given {given}")
    print(stage(args.destination, args.variants))


if __name__ == "__main__":
    main()
