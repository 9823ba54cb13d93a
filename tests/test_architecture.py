"""The house rules of docs/architecture.md. Includes: relu-common/ is below everything, the
backends include relu-common/ and their own folder only (never the binding in torch-ext/). The
C++: comments at most 0.20 of the code per folder, headers of at most 10 lines, measurements
and results paths only in the tuning tables. The Python package: modules of at most 200 lines,
at most 0.30 comment lines per code line, and private torch names only those docs/architecture.md
lists (tests/test_eager_path.py checks they exist in the running torch)."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ("relu-cpu", "relu-cuda", "relu-xpu")
SOURCE_SUFFIXES = {".h", ".cpp", ".cu", ".cuh"}


def sources(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in SOURCE_SUFFIXES)


def repo_includes(path: Path) -> list[str]:
    return re.findall(r'^\s*#\s*include\s*"([^"]+)"', path.read_text(), re.MULTILINE)


def test_relu_common_includes_only_itself():
    for path in sources("relu-common"):
        for name in repo_includes(path):
            assert name.startswith("relu-common/"), f"{path.relative_to(ROOT)} includes {name}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_backends_include_no_binding_and_no_other_backend(backend):
    assert sources(backend), backend
    for path in sources(backend):
        for name in repo_includes(path):
            assert name.startswith(("relu-common/", f"{backend}/")), f"{path.relative_to(ROOT)} includes {name}"


def test_product_sources_cite_no_results_path():
    product = [*sources("relu-common"), *(p for b in BACKENDS for p in sources(b)), *sources("torch-ext"),
               *sorted((ROOT / "torch-ext" / "relu").glob("*.py"))]
    assert product
    for path in product:
        if str(path.relative_to(ROOT)) not in TUNING_TABLES:  # a tuning line names its results file
            assert "results/" not in path.read_text(), path.relative_to(ROOT)


# ---- The Python package (issue 42): small modules, little prose, private torch names allowed only
# where docs/architecture.md's "Private torch names" lists them with the measurement behind them.

PACKAGE = ROOT / "torch-ext" / "relu"
MAX_MODULE_LINES = 200
MAX_COMMENT_RATIO = 0.30
MAX_PRIVATE_NAMES = 2
# The docstrings users read: the public functions, the package's, and layers.py's.
PUBLIC_FUNCTIONS = {"relu", "relu_squared", "relu_and_mul", "relu_squared_and_mul"}
PUBLIC_MODULES = {"__init__.py", "layers.py"}
PRIVATE_NAME = re.compile(r"torch\._|\._op\b|_current_level|torch\.ops\.aten\.[a-z_]+\.default\._op")


def package_modules() -> list[Path]:
    modules = sorted(PACKAGE.glob("*.py"))
    assert modules, PACKAGE
    return modules


def docstring_lines(tree: ast.Module, public_module: bool) -> dict[int, bool]:
    """{line: whether it belongs to a docstring users read} for every docstring line."""
    lines: dict[int, bool] = {}

    def visit(node, public: bool) -> None:
        body = getattr(node, "body", [])
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            lines.update(dict.fromkeys(range(body[0].lineno, body[0].end_lineno + 1), public))
        for child in body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                top_level_public = node is tree and (child.name in PUBLIC_FUNCTIONS or public_module)
                visit(child, top_level_public or (public and node is not tree))

    visit(tree, public_module)
    return lines


def comment_and_code_lines(path: Path) -> tuple[int, int]:
    """Comment lines: lines starting with '#', and docstring lines but those users read (which
    count as neither); code lines: every other non-blank line."""
    text = path.read_text()
    docstrings = docstring_lines(ast.parse(text), path.name in PUBLIC_MODULES)
    comments = code = 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or docstrings.get(number) is True:
            continue
        if number in docstrings or stripped.startswith("#"):
            comments += 1
        else:
            code += 1
    return comments, code


def allowed_private_names() -> set[str]:
    """The names that open the bullets of docs/architecture.md's "Private torch names"."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = re.search(r"^#+ Private torch names\n(.*?)(?=^#|\Z)", text, re.MULTILINE | re.DOTALL)
    assert section, 'docs/architecture.md has no "Private torch names" subsection'
    return set(re.findall(r"^- `([\w.]+)`", section[1], re.MULTILINE))


def private_names_used(path: Path) -> set[str]:
    """Each dotted name around a PRIVATE_NAME match (`forward_ad._current_level`)."""
    text = path.read_text()
    used = set()
    for match in PRIVATE_NAME.finditer(text):
        start, end = match.start(), match.end()
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "._"):
            start -= 1
        while end < len(text) and (text[end].isalnum() or text[end] in "._"):
            end += 1
        used.add(text[start:end].strip("."))
    return used


@pytest.mark.parametrize("path", package_modules(), ids=lambda p: p.name)
def test_package_modules_are_short(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{path.name}: {lines} lines; split it by concern"


def test_package_comment_ratio():
    counts = [comment_and_code_lines(path) for path in package_modules()]
    comments, code = sum(c for c, _ in counts), sum(k for _, k in counts)
    assert comments / code <= MAX_COMMENT_RATIO, (
        f"torch-ext/relu: {comments} comment lines for {code} code lines; the why in a line, the story in the docs")


def test_comment_counting_rule(tmp_path):
    text = '"""Module prose."""\n# why\nx = 1\n\n\ndef relu(x):\n    """Users read this."""\n    return x\n\n\n' \
           'def _helper():\n    """Prose."""\n    return 2  # trailing comments stay code\n'
    path = tmp_path / "sample.py"
    path.write_text(text)
    assert comment_and_code_lines(path) == (3, 5)


def test_private_torch_names_are_the_documented_ones():
    allowed = allowed_private_names()
    assert 0 < len(allowed) <= MAX_PRIVATE_NAMES, allowed
    used = {(path.name, name) for path in package_modules() for name in private_names_used(path)}
    unlisted = {(module, name) for module, name in used
                if not any(full == name or full.endswith("." + name) for full in allowed)}
    assert not unlisted, f"private torch names not in docs/architecture.md's list: {sorted(unlisted)}"
    unused = {full for full in allowed if not any(full == name or full.endswith("." + name) for _, name in used)}
    assert not unused, f"listed in docs/architecture.md but not used: {sorted(unused)}"


# ---- The C++ product folders: comments say why, measured constants live in one tuning table per
# backend (one line each, naming the device and the results file), file headers are short.

CXX_FOLDERS = ("relu-common", "relu-cpu", "relu-cuda", "relu-xpu", "torch-ext")
MAX_CXX_COMMENT_RATIO = 0.20
MAX_HEADER_LINES = 10
TUNING_TABLES = ("relu-cpu/tuning.h", "relu-cuda/tuning.h")
# A timing, a bandwidth or a machine in a comment: measurements belong in the tuning tables.
MEASUREMENT = re.compile(r"\b\d+(\.\d+)?\s*(ns|us|ms|GB/s|TB/s)\b|\b(H100|H200|A100|Zen ?\d|Xeon|EPYC|Sapphire)\b")


def cxx_comment_lines(path: Path) -> tuple[list[str], int, int]:
    """(comment lines, code lines, leading comment block's lines): lines opening with // or
    inside /* */ are comments; a trailing comment leaves its line code."""
    comments, code, header, in_block, leading = [], 0, 0, False, True
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not stripped:
            leading = leading and not header
            continue
        if in_block or stripped.startswith(("//", "/*")):
            comments.append(stripped)
            in_block = (in_block or stripped.startswith("/*")) and "*/" not in stripped
            header += leading
        else:
            code, leading = code + 1, False
    return comments, code, header


@pytest.mark.parametrize("folder", CXX_FOLDERS)
def test_cxx_comment_ratio(folder):
    counts = [cxx_comment_lines(path) for path in sources(folder)]
    comments, code = sum(len(c) for c, _, _ in counts), sum(k for _, k, _ in counts)
    assert comments / code <= MAX_CXX_COMMENT_RATIO, (
        f"{folder}: {comments} comment lines for {code} code lines; the why in a line, the story in the docs")


@pytest.mark.parametrize("path", [p for f in CXX_FOLDERS for p in sources(f)], ids=lambda p: p.name)
def test_cxx_headers_are_short_and_measurements_live_in_tuning_tables(path):
    comments, _, header = cxx_comment_lines(path)
    assert header <= MAX_HEADER_LINES, f"{path.relative_to(ROOT)}: a {header}-line header"
    if str(path.relative_to(ROOT)) not in TUNING_TABLES:
        quoted = [line for line in comments if MEASUREMENT.search(line)]
        assert not quoted, f"{path.relative_to(ROOT)} quotes measurements outside a tuning table: {quoted}"


@pytest.mark.parametrize("table", TUNING_TABLES)
def test_tuning_tables_cite_results_that_exist(table):
    text = (ROOT / table).read_text()
    cited = re.findall(r"results/[\w./-]+", text)
    assert cited, f"{table} cites no results file"
    for path in cited:
        assert (ROOT / path.rstrip(".")).exists(), f"{table} cites {path}, which does not exist"


def test_cxx_counting_rule(tmp_path):
    path = tmp_path / "sample.h"
    path.write_text("// header\n// two\n#pragma once\n/* block\n   more */\nint x;  // trailing\n\n// why\nint y;\n")
    comments, code, header = cxx_comment_lines(path)
    assert (len(comments), code, header) == (5, 3, 2)
