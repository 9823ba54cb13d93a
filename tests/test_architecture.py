"""The include rules README.md's "Architecture" draws: relu-common/ is below everything, the
backends include relu-common/ and their own folder only (never the binding in torch-ext/),
and product sources cite no results/ path."""

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
        assert "results/" not in path.read_text(), path.relative_to(ROOT)
