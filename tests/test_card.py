"""CARD.md is the Hub card (README.md links to it): kernel-builder renders it beside the variants
and its upload publishes that copy as README.md on the Hub's main branch, alone; the staged
snapshot (scripts/stage_release.py) carries it as README.md and build/CARD.md. Its front matter
is what the Hub indexes; it fits one screen's worth of reading (MAX_LINES, MAX_WIDTH); every link
is absolute, so it resolves on main and in the snapshot alike, and every link into the source
repository names a file this repository holds; every figure of its performance section comes
from the results it cites, through the script that summarises them; its Python blocks run, in
order, against the snapshot, offline (a LOCAL_KERNELS mapping of each Hub id they name), and
every get_kernel / LayerRepository call in them passes trust_remote_code, without which kernels
refuses any publisher the Hub does not mark as trusted (a check HF_HUB_OFFLINE skips, so only
reading the code can catch it)."""

import ast
import functools
import json
import os
import re
import subprocess
import sys
import tomllib
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from conftest import ROOT, VARIANT_DIRS

sys.path.insert(0, str(ROOT / "scripts"))
from stage_release import (SOURCE, link_definitions, local_target, markdown_links,  # noqa: E402
                           reference_links, source_path, stage)

CARD = (ROOT / "CARD.md").read_text()
DEFINITIONS = link_definitions(CARD)
MAX_LINES, MAX_WIDTH = 120, 100
BLOCKS = re.findall(r"^```python\n(.*?)^```", CARD, re.S | re.M)
GENERAL = tomllib.loads((ROOT / "build.toml").read_text())["general"]
# The Hub repo the card loads from: build.toml's [general.hub] repo-id (a placeholder, <org>).
HUB_REPO_ID = GENERAL["hub"]["repo-id"]


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    return stage(tmp_path_factory.mktemp("hub") / "relu-build", list(VARIANT_DIRS.values()))


def front_matter() -> dict:
    match = re.match(r"^---\n(.*?)\n---\n", CARD, re.S)
    assert match, "README.md opens with no YAML front matter"
    import yaml

    return yaml.safe_load(match.group(1))


def test_front_matter():
    meta = front_matter()
    assert meta["library_name"] == "kernels"
    assert meta["license"] == "apache-2.0"
    assert "kernels" in meta["tags"]


def test_license_is_apache_2_and_staged(snapshot):
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the full text, not a notice
    assert (snapshot / "LICENSE").read_text() == text


def heading_anchors(markdown: str) -> set[str]:
    """GitHub's and the Hub's heading slugs: lower case, punctuation dropped, spaces to '-'."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M), re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def dead_links(page: str) -> list[str]:
    """What in a card would be dead where kernel-builder's upload puts it (main, the card alone)
    or in the snapshot: a relative link, an #anchor no heading makes, a link that is not https,
    a link into the source repository naming a file (or a heading of a page) this one lacks."""
    dead = []
    for link in markdown_links(page):
        path = source_path(link)
        if link.startswith("#"):
            if link[1:] not in heading_anchors(page):
                dead.append(f"{link} (no such heading)")
        elif local_target(link) is not None:
            dead.append(f"{link} (relative: on the Hub's main branch the card is alone)")
        elif not link.startswith("https://"):
            dead.append(f"{link} (not https)")
        elif path is not None:
            if not (ROOT / path).is_file():
                dead.append(f"{link} (the source holds no {path})")
            elif "#" in link and path.endswith(".md"):
                if link.split("#", 1)[1] not in heading_anchors((ROOT / path).read_text()):
                    dead.append(f"{link} (no such heading)")
    return dead


def test_readme_is_the_card():
    """One text: README.md (what the source repository shows) is a link to CARD.md."""
    readme = ROOT / "README.md"
    assert readme.is_symlink() and readme.resolve() == (ROOT / "CARD.md").resolve()


def test_card_is_kernel_builders_template_unchanged():
    """kernel-builder renders CARD.md as a minijinja template (`kernel-builder fill-card`, with
    repo_id, functions, layers, upstream, license); the card has no placeholder or block, so the
    card it uploads is this text."""
    import jinja2

    rendered = jinja2.Environment(trim_blocks=True, keep_trailing_newline=True).from_string(CARD).render(
        repo_id="<org>/relu", functions=["relu"], layers=["ReLU"], has_benchmark=True, upstream=None,
        license="apache-2.0")
    assert rendered == CARD


def test_snapshot_carries_the_card_where_the_hub_and_upload_read_it(snapshot):
    assert (snapshot / "README.md").read_text() == CARD
    assert (snapshot / "build" / "CARD.md").read_text() == CARD


def test_every_card_link_resolves_on_main_and_in_the_snapshot(snapshot):
    links = markdown_links(CARD)
    assert len(links) >= 8, f"only {len(links)} links found: the link parser is broken"
    assert not dead_links(CARD), f"dead on the Hub's main branch or in the snapshot: {dead_links(CARD)}"
    assert not dead_links((snapshot / "README.md").read_text())


def test_dead_link_check_catches_planted_faults():
    page = (f"[a](docs/usage.md) [b](#nowhere) [c](http://x.org) [d]({SOURCE}/blob/main/docs/gone.md)\n"
            f"[e][e]\n\n[e]: {SOURCE}/blob/main/results/no-such-run.json\n"
            f"[f]({SOURCE}/blob/main/docs/usage.md) [g]({SOURCE}/blob/main/docs/usage.md#semantics)\n")
    assert len(dead_links(page)) == 5, dead_links(page)


def test_card_links_are_found():
    """The card's own links (the parser's input above) include its docs."""
    targets = {source_path(link) for link in markdown_links(CARD)}
    assert {"PERFORMANCE.md", "docs/usage.md", "docs/support.md"} <= targets, targets


def prose_lines(markdown: str) -> list[str]:
    """The lines a reader sees as text: all but code blocks and link reference definitions
    (which Markdown does not render); tables and front matter count."""
    text = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    return [line for line in text.splitlines() if not re.match(r"^ {0,3}\[[^\]]+\]:\s", line)]


def test_card_length_and_width():
    lines = CARD.splitlines()
    assert len(lines) <= MAX_LINES, f"the card has {len(lines)} lines, more than {MAX_LINES}"
    wide = [line for line in prose_lines(CARD) if len(line) > MAX_WIDTH]
    assert not wide, f"lines over {MAX_WIDTH} characters: {wide}"
    code = [line for block in BLOCKS for line in block.splitlines() if len(line) > MAX_WIDTH]
    assert not code, f"code lines over {MAX_WIDTH} characters: {code}"


def test_width_check_catches_planted_faults():
    page = "x" * 101 + "\n| " + "y" * 99 + "\n```\n" + "z" * 120 + "\n```\n[id]: https://" + "w" * 100 + "\n"
    assert [len(line) for line in prose_lines(page) if line] == [101, 101]


def section(title: str) -> str:
    return CARD.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def performance_rows() -> list[list[str]]:
    """The cells of each row of the card's "Is it faster?" table."""
    rows = [line for line in section("Is it faster?").splitlines() if line.startswith("| ")][1:]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def cited_results(markdown: str) -> list[str]:
    """The results files a row or paragraph links to, inline or by reference."""
    links = markdown_links(markdown) + reference_links(markdown, DEFINITIONS)
    return [path for path in map(source_path, links) if path and path.startswith("results/")]


def test_every_performance_row_cites_a_results_file():
    """Each row of the table names the results file behind it, and the repository holds it."""
    rows = performance_rows()
    assert 6 <= len(rows) <= 8, rows
    for row in rows:
        cited = cited_results(row[-1])
        assert cited, f"no results file cited: {row}"
        for path in cited:
            assert (ROOT / path).is_file(), f"{path} is not in the repository"


def test_card_names_only_linked_results():
    """Results the card names outside links (code spans, prose) must be linked too."""
    prose = re.sub(r"https://\S+", "", CARD)
    named = set(re.findall(r"(?<![\w/])results/[\w.\-/]+\w", prose))
    linked = set(cited_results(CARD))
    assert linked and named <= linked, f"named on the card but not linked: {named - linked}"


# The scripts that condense a results folder into the ranges the docs quote: relu's runs
# (scripts/h200_docs.sh, scripts/bench.sh) and relu_squared's and the gated ops'.
SUMMARIES = [["benchmarks/summary.py", "--detail"], ["benchmarks/family_summary.py"]]
_FIGURE = re.compile(r"(?<![\w.])(\d+\.\d+)(?:-(\d+\.\d+))?x\b")
_NUMBER = re.compile(r"(?<![\w.])\d+\.\d+")
_RANGE = re.compile(r"(?<![\w.])(\d+\.\d+)-(\d+\.\d+)x?")


def roundings(number: str) -> set[str]:
    """A printed number as the docs may quote it, to two places (at a tie either way: the
    printed 0.975 is quoted 0.97 or 0.98)."""
    value, cent = Decimal(number), Decimal("0.01")
    return {str(value.quantize(cent, ROUND_HALF_UP)), str(value.quantize(cent, ROUND_HALF_DOWN))}


@functools.cache
def derived(folder: str) -> tuple[frozenset, frozenset, frozenset]:
    """(every number, every range's low end, every range's high end) that the summaries print
    for a results folder, each as the docs may quote it."""
    output = "\n".join(subprocess.run([sys.executable, str(ROOT / script[0]), *script[1:], str(ROOT / folder)],
                                      capture_output=True, text=True, check=True, cwd=ROOT).stdout
                       for script in SUMMARIES)
    numbers = {r for n in _NUMBER.findall(output) for r in roundings(n)}
    ranges = _RANGE.findall(output)
    lows = {r for low, _ in ranges for r in roundings(low)}
    highs = {r for _, high in ranges for r in roundings(high)}
    return frozenset(numbers), frozenset(lows), frozenset(highs)


def underived_figures(text: str, cited: list[str]) -> list[str]:
    """The figures of `text` ("1.84-2.82x", "0.79x") that neither appear verbatim in a cited
    Markdown file nor come from the summaries of the cited results' folders: a range's low end
    is a printed range's low end and its high end one's high end (a range over several printed
    ones), a single figure a printed number."""
    numbers, lows, highs, verbatim = set(), set(), set(), ""
    for path in cited:
        folder = "/".join(path.split("/")[:3])  # results/<build>/<machine>
        found = derived(folder)
        numbers |= found[0]
        lows |= found[1]
        highs |= found[2]
        if path.endswith(".md"):
            verbatim += (ROOT / path).read_text()
    bad = []
    for match in _FIGURE.finditer(text):
        low, high = match.groups()
        if match.group(0) in verbatim:
            continue
        if (high is None and low not in numbers) or (high is not None and (low not in lows or high not in highs)):
            bad.append(match.group(0))
    return bad


def test_every_performance_figure_comes_from_its_results():
    """Each figure of the "Is it faster?" table and its notes comes from the results its row (its
    paragraph) cites: printed by benchmarks/summary.py or benchmarks/family_summary.py run on the
    cited folder, or verbatim in a cited Markdown file."""
    checked = 0
    for row in performance_rows():
        text = " | ".join(row[:-1])
        checked += len(_FIGURE.findall(text))
        assert not underived_figures(text, cited_results(row[-1])), (row, underived_figures(text, cited_results(row[-1])))
    for paragraph in section("Is it faster?").split("\n\n"):
        if not paragraph.startswith("|") and cited_results(paragraph):
            checked += len(_FIGURE.findall(paragraph))
            assert not underived_figures(paragraph, cited_results(paragraph)), paragraph
    assert checked >= 16, f"only {checked} figures found: the figure pattern is broken"


def test_figure_check_catches_planted_faults():
    sq = ["results/7daee98/h200/relu-squared/relu_squared.json"]
    assert underived_figures("1.84-2.82x; 0.97-1.14x", sq) == []
    assert underived_figures("1.84-2.83x; 1.03x; 7.77x", sq) == ["1.84-2.83x", "7.77x"]
    dense = ["results/16690a2/h200/dense/sweep.md"]
    assert underived_figures("0.98-1.27x cold, 0.91-1.85x hot", dense) == []
    assert underived_figures("0.98-2.99x cold, 0.77x", dense) == ["0.98-2.99x", "0.77x"]


def kernel_calls(source: str) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("get_kernel", "LayerRepository")]


def test_card_calls_pass_trust_remote_code():
    calls = [call for block in BLOCKS for call in kernel_calls(block)]
    assert len(calls) >= 2, "the card should load with get_kernel and LayerRepository"
    missing = [ast.unparse(call) for call in calls
               if not any(k.arg == "trust_remote_code" and isinstance(k.value, ast.Constant) and k.value.value is True
                          for k in call.keywords)]
    assert not missing, f"without trust_remote_code=True these raise for an untrusted publisher: {missing}"


def test_trust_check_catches_a_missing_argument():
    assert kernel_calls('get_kernel("a/b", version=3)')[0].keywords[-1].arg != "trust_remote_code"


# Offline, kernels cannot list the Hub's version branches, so LayerRepository(version=3) would
# fail before consulting LOCAL_KERNELS (get_kernel(version=3) consults it first). The Hub
# resolves version 3 to the branch v3; the mapping ignores the revision.
PRELUDE = '''
import kernels._versions as _versions
_resolve = _versions.resolve_version_spec_as_ref
def _offline(repo_id, version_spec, local_files_only):
    if version_spec == 3:
        return type("Ref", (), {"target_commit": "v3"})()
    return _resolve(repo_id, version_spec, local_files_only=local_files_only)
_versions.resolve_version_spec_as_ref = _offline
'''

# What the card's blocks leave behind, checked: the loaded kernel ran (NaN -> 0, unlike
# torch.relu), and kernelize swapped the layer's forward.
EPILOGUE = '''
nan = torch.tensor([float("nan"), -0.0, -1.0, 2.0], device=device)
assert relu.relu(nan).tolist() == [0.0, 0.0, 0.0, 2.0]
assert model[1](nan).tolist() == [0.0, 0.0, 0.0, 2.0], "kernelize left nn.ReLU in place"
print("card ran on", device)
'''


def test_card_python_blocks_run_on_the_snapshot(snapshot):
    assert len(BLOCKS) >= 3, "quick start, training / compile / kernelize and which-build blocks"
    repo_ids = sorted(set(re.findall(r'"([^"\s]+/relu)"', "\n".join(BLOCKS))))
    assert repo_ids, "the card names no Hub id"
    script = "\n".join([PRELUDE, *BLOCKS, EPILOGUE])
    env = {**os.environ, "HF_HUB_OFFLINE": "1",
           "LOCAL_KERNELS": ":".join(f"{repo}={snapshot}" for repo in repo_ids)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd="/", env=env,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "card ran on" in done.stdout


# A Hub id in Markdown: quoted, in code or after `=` (LOCAL_KERNELS="<id>=...").
_HUB_ID = re.compile(r"""["'`=(]([\w.<>-]+/relu)(?=["'`=\s)])""")


def test_card_and_docs_name_build_tomls_hub_repo(snapshot):
    """Every Hub id the staged Markdown names is build.toml's repo-id, but for the upstream
    kernel (build.toml's upstream): the placeholder is written once, in build.toml."""
    upstream = GENERAL["upstream"].removeprefix("https://huggingface.co/")
    named = {}
    for page in sorted(snapshot.rglob("*.md")):
        if "build" not in page.relative_to(snapshot).parts:
            for repo_id in set(_HUB_ID.findall(page.read_text())) - {upstream}:
                named.setdefault(repo_id, []).append(str(page.relative_to(snapshot)))
    assert HUB_REPO_ID in named, "the card names no Hub id"
    assert set(named) == {HUB_REPO_ID}, f"Hub ids other than build.toml's {HUB_REPO_ID}: {named}"


def test_which_build_snippet_prints_the_loaded_variant(snapshot):
    """The card's "Which build do I have?" block, after its quick start, prints the variant
    kernels loaded (here: the one it picks from the snapshot for this machine's backend) and
    the source commit of its metadata.json, with whether that tree was dirty."""
    (quick_start,) = [b for b in BLOCKS if "get_kernel(" in b and "LayerRepository" not in b]
    (snippet,) = [b for b in BLOCKS if "metadata.json" in b]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LOCAL_KERNELS": f"{HUB_REPO_ID}={snapshot}"}
    script = "\n".join([quick_start, snippet, "print('loaded', pathlib.Path(relu.__file__).parent.name)"])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd="/", env=env,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    loaded = done.stdout.split("loaded ")[-1].strip()
    (line,) = [line for line in done.stdout.splitlines() if line.startswith(f"{loaded} ")]
    kernel = json.loads((snapshot / "build" / loaded / "metadata.json").read_text())["provenance"]["kernel"]
    assert line == f"{loaded} {kernel}"


def test_bug_report_line_asks_for_the_snippet_output():
    which = section("Which build do I have? Bugs, source and license")
    assert "metadata.json" in which
    assert re.search(r"^Reporting a bug: that line", which, re.M)


def test_source_commands_are_the_two_and_ci_runs_the_test_one():
    """The card gives exactly two commands for a clone, the main job and the tests; CI runs the
    card's test command."""
    commands = re.findall(r"^    (scripts/\S+)\s+# (.*)$", CARD, re.M)
    assert [c for c, _ in commands] == ["scripts/bench.sh", "scripts/test.sh"], commands
    assert commands[0][1].startswith("main job") and commands[1][1].startswith("tests")
    assert all((ROOT / c).is_file() for c, _ in commands)
    assert re.search(r"^scripts/test\.sh\b", (ROOT / ".ci" / "run").read_text(), re.M)
