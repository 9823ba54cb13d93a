"""README.md is the Hub card: what a user reads on the Hub's page, next to the staged snapshot
(scripts/stage_release.py). Its front matter is what the Hub indexes; every link resolves
inside the snapshot; its Python blocks run, in order, against the snapshot, offline (a
LOCAL_KERNELS mapping of each Hub id they name), and every get_kernel / LayerRepository call
in them passes trust_remote_code, without which kernels refuses any publisher the Hub does not
mark as trusted (a check HF_HUB_OFFLINE skips, so only reading the code can catch it)."""

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import ROOT, VARIANT_DIRS

sys.path.insert(0, str(ROOT / "scripts"))
from stage_release import local_target, markdown_links, stage  # noqa: E402

CARD = (ROOT / "README.md").read_text()
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


def test_every_link_resolves_in_the_snapshot(snapshot):
    """Every relative link of every Markdown file staged (the card and what it links) names a
    file of the snapshot, and an #anchor a heading of it; absolute links are https."""
    checked, dead = 0, []
    for page in sorted(snapshot.rglob("*.md")):
        if "build" in page.relative_to(snapshot).parts:
            continue
        for link in markdown_links(page.read_text()):
            checked += 1
            target = local_target(link)
            if target is None:
                if not (link.startswith("https://") or link.startswith("#")):
                    dead.append(f"{page.relative_to(snapshot)}: {link} (not https)")
                elif link.startswith("#") and link[1:] not in heading_anchors(page.read_text()):
                    dead.append(f"{page.relative_to(snapshot)}: {link} (no such heading)")
                continue
            path = (page.parent / target).resolve() if target else page
            if not path.is_file() or snapshot.resolve() not in path.parents:
                dead.append(f"{page.relative_to(snapshot)}: {link}")
            elif "#" in link and path.suffix == ".md":
                if link.split("#", 1)[1] not in heading_anchors(path.read_text()):
                    dead.append(f"{page.relative_to(snapshot)}: {link} (no such heading)")
    assert checked >= 5, f"only {checked} links found: the link parser is broken"
    assert not dead, f"dead in the staged snapshot: {dead}"


def test_card_links_are_found():
    """The card's own links (the parser's input above) include its docs and its license."""
    targets = {local_target(link) for link in markdown_links(CARD)}
    assert {"LICENSE", "PERFORMANCE.md", "L2_BAND_CLIFF.md", "docs/support.md"} <= targets, targets


def performance_rows() -> list[list[str]]:
    """The cells of each row of the card's "Performance" table."""
    section = CARD.split("\n## Performance\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| where ")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def test_every_performance_row_cites_a_staged_results_file(snapshot):
    """Each figure on the card names the results file behind it, and the Hub holds that file:
    a row without one, or a citation the snapshot lacks, fails."""
    rows = performance_rows()
    assert len(rows) >= 8, rows
    for row in rows:
        cited = [local_target(link) for link in markdown_links(row[-1])]
        assert cited and all(c.startswith("results/") for c in cited), f"no results file cited: {row}"
        for target in cited:
            assert (snapshot / target).is_file(), f"{target} is not in the staged snapshot"


def test_card_names_only_staged_results():
    """Results the card names outside links (code spans, prose) must be staged too: linked."""
    named = set(re.findall(r"(?<![\w/])results/[\w.\-/]+\w", CARD))
    linked = {local_target(link) for link in markdown_links(CARD)}
    assert named and named <= linked, f"named on the card but not linked (so not staged): {named - linked}"


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
    assert len(BLOCKS) >= 4, "quick start, training, torch.compile and kernelize blocks"
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
    kernels loaded (here: the one it picks from the snapshot for this machine's backend),
    its backend and the source commit of its metadata.json."""
    (quick_start,) = [b for b in BLOCKS if "get_kernel(" in b and "LayerRepository" not in b]
    (snippet,) = [b for b in BLOCKS if "get_loaded_kernels" in b]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LOCAL_KERNELS": f"{HUB_REPO_ID}={snapshot}"}
    script = "\n".join([quick_start, snippet, "print('loaded', Path(relu.__file__).parent.name)"])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd="/", env=env,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("relu v3 ")]
    loaded = done.stdout.split("loaded ")[-1].strip()
    metadata = json.loads((snapshot / "build" / loaded / "metadata.json").read_text())
    assert f" {loaded} " in line
    assert f"backend={metadata['backend']['type']} " in line
    assert f"commit={metadata['provenance']['kernel']['commit']}" in line
    assert line.endswith(" (dirty tree)") == metadata["provenance"]["kernel"]["dirty"]


def test_bug_report_line_asks_for_the_snippet_output():
    which = CARD.split("## Which build do I have?", 1)[1].split("\n## ", 1)[0]
    assert "get_loaded_kernels" in which
    assert re.search(r"^Reporting a bug: include that line", which, re.M)
