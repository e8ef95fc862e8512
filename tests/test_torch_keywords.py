"""On PyTorch's Python sources, every keyword list written to a `_kw.md` equals what
Python's own `ast` finds, file for file (dunders and the standard library's imports aside).

The corpus is unpacked from the torch 2.13.0 wheel (`pip download` finds a local one)
into a cache folder outside the repository; the test is skipped when no wheel can be had,
unless REPODOC_REQUIRE_TORCH=1 (CI) makes that a failure.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import ast_keywords, run_cli

pytestmark = pytest.mark.slow

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repodoc-bench"


def torch_corpus() -> Path | None:
    """The `torch/` folder of Python sources, unpacked once."""
    target = CACHE / "torch-2.13.0"
    if (target / ".complete").exists():
        return target / "torch"
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    if not list(wheels.glob("torch-2.13.0*.whl")):
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "torch==2.13.0", "--no-deps", "-d",
                               str(wheels), "-q"], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return None
    wheel = next(wheels.glob("torch-2.13.0*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("torch/") and name.endswith(".py"):
                zf.extract(name, target)
    (target / ".complete").write_text("ok\n")
    return target / "torch"


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _module_of(rel: str) -> str:
    parts = rel[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def reference_keywords(source: bytes, rel: str, modules: set[str]) -> dict[str, list[str]] | None:
    """What `_kw.md` lists, from `ast` and the workspace's module names (`modules`): classes and
    functions without dunders; imports apart by where they lead (a relative one, or one naming a
    workspace module, is the workspace's, by its absolute module; one of Python's own modules is
    left out; any other is third-party), each module and imported name, dunders aside."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = {kind: {n for n in names if not _dunder(n)} for kind, names in ast_keywords(tree).items()
             if kind != "Imports"}
    tops = {m.split(".", 1)[0] for m in modules}
    workspace: set[str] = set()
    third: set[str] = set()
    package = _module_of(rel).split(".") if _module_of(rel) else []
    if not rel.endswith("__init__.py") and package:
        package = package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            groups = [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names if a.name != "*"]
            if node.level:
                up = node.level - 1
                base = package[: len(package) - up] if up <= len(package) else None
                module = "" if base is None else ".".join([*base, node.module] if node.module else base)
                workspace.update(n for n in (module, *names) if n and not _dunder(n))
                continue
            groups = [(node.module or "", names)]
        else:
            continue
        for module, names in groups:
            top = module.split(".", 1)[0]
            named = module in modules or any(f"{module}.{n}" in modules for n in names)
            if top in tops and named:
                into = workspace
            elif top in sys.stdlib_module_names or top == "__future__":
                continue
            else:
                into = workspace if top in tops else third
            into.update(n for n in (module, *names) if n and not _dunder(n))
    found.update({"Imports": workspace, "Third-party Imports": third})
    return {kind: sorted(names) for kind, names in found.items() if names}


_ENTRY = re.compile(r"^- \*\*(`+) ?(.*?) ?\1\*\*: ")


def written_keywords(page: Path) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            current = sections.setdefault(line[4:], [])
        elif line.startswith("## "):
            current = None
        elif current is not None and (m := _ENTRY.match(line)):
            current.append(m.group(2))
    return sections


def test_torch_keywords_equal_ast(tmp_path: Path) -> None:
    corpus = torch_corpus()
    if corpus is None:
        if os.environ.get("REPODOC_REQUIRE_TORCH"):
            pytest.fail("the torch 2.13.0 wheel could not be downloaded")
        pytest.skip("no torch 2.13.0 wheel available")
    out = tmp_path / "out"
    env = dict(os.environ, REPODOC_CACHE_DIR=str(tmp_path / "cache"))
    proc = run_cli("generate", str(corpus), "--out", str(out), "--json", env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr
    files = sorted(p for p in corpus.rglob("*.py"))
    assert len(files) == 2285
    modules = {_module_of(p.relative_to(corpus).as_posix()) for p in files}
    compared = 0
    mismatches = []
    for path in files:
        expected = reference_keywords(path.read_bytes(), path.relative_to(corpus).as_posix(), modules)
        if expected is None:  # newer syntax than this Python parses: nothing to compare with
            continue
        rel = path.relative_to(corpus).as_posix()
        page = out / f"{rel}_kw.md"
        if path.stat().st_size == 0:  # an empty source: a line of its folder's index, no keyword page
            assert not page.exists()
            got: dict[str, list[str]] = {}
        else:
            got = written_keywords(page)
        if got != expected:
            mismatches.append(rel)
        compared += 1
    assert mismatches == []
    assert compared >= 2280
