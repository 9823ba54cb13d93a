"""The pages a user reads (CARD.md, the Hub card, which README.md links to; PERFORMANCE.md;
L2_BAND_CLIFF.md; docs/) cite only what the repository holds (the card by absolute links into
the source repository, read here as paths from its root): every results/ path they name exists, none points at a
file outside the repository, and the card and PERFORMANCE.md carry no issue or pull-request
numbers, which mean nothing on the Hub. Those pages, the studies' notes and relu-xpu/README.md
name no scripts/ or benchmarks/ file the tree lacks (a retired one is named with its commit,
`4f2ef0b:benchmarks/...`), and results/ stays one folder per shipped build plus the studies
the docs cite: at most RESULTS_FILES tracked files. Each check is also run on a planted fault
below, so that none of them passes by matching nothing."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from stage_release import SOURCE_BLOB, local_target, markdown_links  # noqa: E402

PAGES = ["CARD.md", "PERFORMANCE.md", "L2_BAND_CLIFF.md", *sorted(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
NO_ISSUE_NUMBERS = ["CARD.md", "PERFORMANCE.md"]
# Every page that cites results or scripts: the user's pages, the studies' notes, relu-xpu's.
CITING = [*PAGES, *sorted(p.relative_to(ROOT).as_posix() for p in [
    *(ROOT / "benchmarks" / "studies").rglob("*.md"), ROOT / "relu-xpu" / "README.md"])]
RESULTS_FILES = 126

# A results path as the pages write it: root-relative in code spans and prose
# (`results/16690a2/h200/summary.md`), page-relative in links (`../results/...` from docs/).
# A path that runs into a placeholder (`results/<machine>/`, `results/cpu-{avx2,avx512}/`) names
# a folder to be made, not a file cited: it is left out, as is a commit's file
# (`b31d803:results/release/`, what `git show` takes).
_RESULTS = re.compile(r"(?<![\w.\-/:])((?:\.\./)*results/[\w.\-/]*)(?![\w.\-/]*[<{*])")
# A script or benchmark named by its path (`scripts/bench.sh`, `benchmarks/studies/l2_band/band.py`),
# globs (`benchmarks/benchmark*.py`) and commits' files left out as above.
_SCRIPT = re.compile(r"(?<![\w.\-/:])((?:\.\./)*(?:scripts|benchmarks)/[\w.\-/]*\.\w+)(?![\w.\-/]*[<{*])")
# Paths that climb out of the page's folder, and Markdown files named anywhere in the text.
_PARENT_PATH = re.compile(r"(?<![\w.\-/])((?:\.\./)+[\w.\-/]+)")
_MARKDOWN_NAME = re.compile(r"(?<![\w.\-/<])([\w\-/.]*\w\.md)\b")
_ISSUE_NUMBER = re.compile(r"(?i)\b(?:issues?|pull requests?|PRs?)\s*#?\s*\d+|(?<![\w/&#])#\d+\b")
# Files outside any checkout (this machine's shared notes, home or work directories).
_MACHINE_PATH = re.compile(r"(?<![\w.])(?:/work/|~/|/home/|\$HOME/)")


def read(page: str) -> str:
    """A page's text, its links into the source repository written as paths from its root."""
    return (ROOT / page).read_text().replace(SOURCE_BLOB, "")


def _resolve(page: str, path: str) -> Path:
    """A path as a page means it: `../...` from the page's folder, anything else from the
    repository root (how the pages write results paths) unless it exists beside the page."""
    here = (ROOT / page).parent
    if path.startswith("../") or (here / path).exists():
        return (here / path).resolve()
    return (ROOT / path).resolve()


def cited_results(text: str) -> list[str]:
    found = []
    for path in _RESULTS.findall(text):
        path = path.rstrip(".,;:")
        if path.rstrip("/") not in ("results", "../results"):
            found.append(path)
    return found


def missing_results(page: str, text: str) -> list[str]:
    return [p for p in cited_results(text) if not _resolve(page, p).exists()]


def missing_scripts(page: str, text: str) -> list[str]:
    return [p for p in _SCRIPT.findall(text) if not _resolve(page, p).is_file()]


def tracked_results() -> list[str]:
    return subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.splitlines()


def _inside_repository(path: Path) -> bool:
    return path == ROOT or ROOT in path.parents


def outside_citations(page: str, text: str) -> list[str]:
    """Everything the page points at that the repository does not hold: relative links that
    leave it or lead nowhere, `../` paths above its root, Markdown files it lacks, paths of a
    machine."""
    bad = []
    for link in markdown_links(text):
        target = local_target(link)
        if target:
            path = _resolve(page, target)
            if not (_inside_repository(path) and path.exists()):
                bad.append(f"link {link}")
    for path in _PARENT_PATH.findall(text):
        if not _inside_repository(_resolve(page, path.rstrip(".,;:"))):
            bad.append(f"path {path}")
    # Link texts name what they show, not where it is: only their targets are paths.
    for name in set(_MARKDOWN_NAME.findall(re.sub(r"\[[^\]]*\]\(", "(", text))):
        if not _resolve(page, name).is_file():
            bad.append(f"page {name}")
    bad += [f"machine path {m.group(0)}..." for m in _MACHINE_PATH.finditer(text)]
    return bad


def issue_numbers(text: str) -> list[str]:
    return [m.group(0) for m in _ISSUE_NUMBER.finditer(text)]


@pytest.mark.parametrize("page", CITING)
def test_cited_results_exist(page):
    missing = missing_results(page, read(page))
    assert not missing, f"{page} cites results that the repository does not hold: {missing}"


@pytest.mark.parametrize("page", CITING)
def test_cited_scripts_exist(page):
    missing = missing_scripts(page, read(page))
    assert not missing, (f"{page} cites scripts the tree lacks: {missing}; name a retired one with "
                         "the commit that held it (`<commit>:<path>`)")


def test_results_hold_the_shipped_builds_and_cited_studies_only():
    files = tracked_results()
    assert files, "git ls-files lists no results/ file"
    assert len(files) <= RESULTS_FILES, (
        f"results/ tracks {len(files)} files, more than {RESULTS_FILES}: keep the runs a doc cites "
        "(results/README.md says where; git keeps the rest)")


def test_the_pages_cite_results():
    """The parser finds the citations at all (a broken pattern would pass every page)."""
    cited = {page: cited_results(read(page)) for page in PAGES}
    assert len(cited["CARD.md"]) >= 5, cited["CARD.md"]
    assert len(cited["PERFORMANCE.md"]) >= 20, cited["PERFORMANCE.md"]
    assert cited["L2_BAND_CLIFF.md"], "L2_BAND_CLIFF.md cites no results file"


@pytest.mark.parametrize("page", PAGES)
def test_no_page_cites_a_file_outside_the_repository(page):
    bad = outside_citations(page, read(page))
    assert not bad, f"{page} points outside the repository or at files it lacks: {bad}"


@pytest.mark.parametrize("page", NO_ISSUE_NUMBERS)
def test_no_issue_numbers(page):
    found = issue_numbers(read(page))
    assert not found, f"{page} names issues or pull requests, which mean nothing on the Hub: {found}"


def test_checks_catch_planted_faults():
    text = ("Figures: `results/h200/no-such-run/sweep.json` and [the layout](results/README.md); "
            "as ANCHORS.md reports, see ../shared/H200.md and /work/shared/STYLE.md; issue 23's target, "
            "PR #816.")
    assert missing_results("PERFORMANCE.md", text) == ["results/h200/no-such-run/sweep.json"]
    assert cited_results("in git as `b31d803:results/release/`") == []
    scripts = ("`scripts/no_such_tune.py`, `python benchmarks/studies/gone.py --table x`; kept: "
               "`git show 4f2ef0b:benchmarks/studies/misaligned.py`, `benchmarks/benchmark*.py`, "
               "`scripts/bench.sh`")
    assert missing_scripts("benchmarks/studies/misaligned.md", scripts) == [
        "scripts/no_such_tune.py", "benchmarks/studies/gone.py"]
    assert cited_results("`results/<machine>/report.md`, results/cpu-{avx2,avx512}/") == []
    bad = outside_citations("PERFORMANCE.md", text)
    assert any("ANCHORS.md" in b for b in bad), bad
    assert any("../shared/H200.md" in b for b in bad), bad
    assert any("/work/" in b for b in bad), bad
    assert outside_citations("docs/usage.md", "[the card](../README.md), [support](support.md)") == []
    assert outside_citations("docs/usage.md", "[up](../../elsewhere.md)") != []
    assert issue_numbers(text) == ["issue 23", "PR #816"]
    assert issue_numbers("[a heading](#what-ran-where), 4096 x 768, sm_90, 2026-12-01") == []
