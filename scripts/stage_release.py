"""Stages what the Hub repo's version branch (v3) holds, as kernel-builder's upload lays it
out: build/<variant>/ for each given variant and benchmarks/benchmark*.py; beside them the card
as README.md, and LICENSE. The card's source is CARD.md (README.md is a link to it): kernel-builder
renders it into the build output next to the variants (`kernel-builder fill-card`, a template
with no placeholders here, so the same text), and its upload publishes <variants' dir>/CARD.md as
README.md on the Hub's main branch, alone. So the stage writes build/CARD.md too, from which
`kernel-builder upload <snapshot>` publishes the card, and the card links only to absolute URLs
(its docs and results in the source repository, build.toml's `source`), which resolve on main
and in the snapshot alike.

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
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CARD = "CARD.md"
# Where the card's links point: the source repository's main branch (build.toml's `source`).
SOURCE = tomllib.loads((ROOT / "build.toml").read_text())["general"]["source"]
SOURCE_BLOB = f"{SOURCE}/blob/main/"
# What the snapshot holds beside the variants, the benchmarks and the card.
ALSO_STAGED = ["LICENSE"]

# [text](target) and ![alt](target), the target up to a space or ")": Markdown's inline links;
# and reference definitions, `[id]: target` on a line of their own.
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*(?:<([^>\s]+)>|([^)\s]+))(?:\s+\"[^\"]*\")?\s*\)")
_DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s+[\"'(].*)?$", re.M)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def _prose(text: str) -> str:
    return re.sub(r"`[^`\n]*`", "", _FENCE.sub("", text))


def link_definitions(text: str) -> dict[str, str]:
    """Reference definitions, `[id]: target`, by lower-cased id (Markdown matches ids so)."""
    return {key.lower(): target for key, target in _DEFINITION.findall(_FENCE.sub("", text))}


def markdown_links(text: str) -> list[str]:
    """The link targets of a Markdown text, inline and defined, code blocks and spans left out."""
    text = _prose(text)
    return [pointy or plain for pointy, plain in _LINK.findall(text)] + [t for _, t in _DEFINITION.findall(text)]


def reference_links(text: str, definitions: dict[str, str]) -> list[str]:
    """The targets of the reference links `[text][id]` in `text` (a table cell, say)."""
    return [definitions[key.lower()] for key in re.findall(r"\[[^\]]*\]\[([^\]]+)\]", _prose(text))
            if key.lower() in definitions]


def source_path(link: str) -> str | None:
    """The repository path a link into the source's main branch names, or None."""
    return link.removeprefix(SOURCE_BLOB).split("#", 1)[0] if link.startswith(SOURCE_BLOB) else None


def local_target(link: str) -> str | None:
    """A link's path relative to its file, or None for an absolute URL or a pure #anchor."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", link, re.I) or link.startswith("#"):
        return None
    return link.split("#", 1)[0]


def stage(destination: Path, variant_dirs: list[Path]) -> Path:
    if destination.exists():
        shutil.rmtree(destination)  # a variant of an older release must not linger
    for variant in variant_dirs:
        shutil.copytree(variant, destination / "build" / variant.name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (destination / "benchmarks").mkdir(parents=True)
    for benchmark in sorted((ROOT / "benchmarks").glob("benchmark*.py")):
        shutil.copy2(benchmark, destination / "benchmarks" / benchmark.name)
    card = (ROOT / CARD).read_text()
    (destination / "README.md").write_text(card)  # what the Hub shows
    (destination / "build" / "CARD.md").write_text(card)  # what kernel-builder's upload reads
    for rel in ALSO_STAGED:
        shutil.copy2(ROOT / rel, destination / rel)
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
