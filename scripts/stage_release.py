"""Stages what the Hub repo's version branch (v3) holds, as kernel-builder's upload lays it
out: build/<variant>/ for each given variant, benchmarks/benchmark*.py and README.md (the
card); beside them LICENSE and every file the card links to, and what those Markdown files
link to in turn (docs/, PERFORMANCE.md, the plots it shows), so that no link on the Hub is dead.

    python scripts/stage_release.py relu-build build/torch-stable-abi211-cpu-x86_64-linux ...

The command stages a release: the variants given must be exactly the release set
(scripts/release_set.py). stage() itself takes any variants (tests stage what they built).

On the staged directory the seed's commands work as on a downloaded snapshot:
`kernels benchmark ./relu-build`, LOCAL_KERNELS="<org>/relu=./relu-build" with
get_kernel("<org>/relu", version=3), and sys.path.insert(0, "relu-build/build/<variant>").
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CARD = "README.md"
# What the snapshot holds beside the card, the benchmarks and what the card links to
# (followed through Markdown, below): the one list to extend with a page or results file
# the Hub repo must carry that no staged page links.
ALSO_STAGED = ["LICENSE"]

# [text](target) and ![alt](target), the target up to a space or ")": Markdown's inline links.
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def markdown_links(text: str) -> list[str]:
    """The inline link targets of a Markdown text, code blocks and code spans left out."""
    text = _FENCE.sub("", text)
    text = re.sub(r"`[^`\n]*`", "", text)
    return _LINK.findall(text)


def local_target(link: str) -> str | None:
    """A link's path relative to its file, or None for an absolute URL or a pure #anchor."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", link, re.I) or link.startswith("#"):
        return None
    return link.split("#", 1)[0]


def linked_files(start: str = CARD, root: Path = ROOT) -> list[str]:
    """Every file reachable by relative links from `start` (Markdown followed transitively),
    as paths relative to `root`, `start` included."""
    seen, todo = [], [start]
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.append(rel)
        path = root / rel
        if path.suffix == ".md" and path.is_file():
            for link in markdown_links(path.read_text()):
                target = local_target(link)
                if target:
                    todo.append((Path(rel).parent / target).as_posix())
    return sorted({str(Path(p)) for p in seen})


def stage(destination: Path, variant_dirs: list[Path]) -> Path:
    if destination.exists():
        shutil.rmtree(destination)  # a variant of an older release must not linger
    for variant in variant_dirs:
        shutil.copytree(variant, destination / "build" / variant.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (destination / "benchmarks").mkdir(parents=True)
    for benchmark in sorted((ROOT / "benchmarks").glob("benchmark*.py")):
        shutil.copy2(benchmark, destination / "benchmarks" / benchmark.name)
    for rel in [*ALSO_STAGED, *linked_files()]:
        source = ROOT / rel
        if source.is_file():  # a dead link stays dead: tests/test_card.py names it
            (destination / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / rel)
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
