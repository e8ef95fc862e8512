"""Files with nothing to say have no pages of their own (`render/own_pages.py`): a licence, package
metadata, configuration, a workflow, `py.typed`, a Markdown file without heading or prose are a line
of their folder's `index.md`, and no page, llms.txt or MCP answer links to a page they do not have.
A Markdown file that gains a heading gains its pages, and loses them with it: the kept tree equals a
fresh one (the CLI's run from its last run's state, and the server's save)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from edits import differences, tree
from helpers import broken_links, make_workspace, run_cli

from repodoc_lsp import cli
from repodoc_lsp.config import load_settings
from repodoc_lsp.pipeline.generate import generate, regenerate
from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.store.workspace import Workspace

FILES = {
    "LICENSE": "The MIT License (MIT)\n\nCopyright (c) 2024 Someone\n",
    "pyproject.toml": '[project]\nname = "demo"\n',
    ".github/workflows/ci.yml": "---\nname: CI\non: push\n",
    "README.md": "# Demo\n\nA demo project that shows which files get pages.\n\n## Use\n\nImport `pkg.mod`.\n",
    "notes.md": "todo\n",  # no heading, no paragraph of prose
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/py.typed": "",
    "pkg/mod.py": '"""A module."""\n\n\ndef f() -> int:\n    """One."""\n    return 1\n',
}
PAGED = {"README.md", "pkg/__init__.py", "pkg/mod.py"}


def test_only_source_and_documents_with_something_to_say_have_pages(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", FILES)
    proc = run_cli("generate", str(root), "--json", env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"] == len(FILES)
    out = root / "docs"
    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.md")}
    assert {p.removesuffix("_docs.md") for p in pages if p.endswith("_docs.md")} == PAGED
    assert {p.removesuffix("_kw.md") for p in pages if p.endswith("_kw.md")} == PAGED
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "- `LICENSE` (text file, 3 lines, 50 bytes): First words: `The MIT License (MIT)`\n" in index
    assert "- `pyproject.toml` (`.toml` file, 2 lines, 24 bytes): First words: `[project]`\n" in index
    assert "- `notes.md` (Markdown, 1 line, 5 bytes): No heading and no paragraph of prose.\n" in index
    assert "[`README.md`](README.md_docs.md)" in index
    assert "- `py.typed` (marker file, 0 lines, 0 bytes): PEP 561 marker" in \
        (out / "pkg/index.md").read_text(encoding="utf-8")
    assert "- `ci.yml` (`.yml` file, 3 lines, 22 bytes): First words: `name: CI`\n" in \
        (out / ".github/workflows/index.md").read_text(encoding="utf-8")
    assert broken_links(out) == []  # folder pages, Related Files, llms.txt: no link to a page not written
    for text in (out / "llms.txt").read_text(encoding="utf-8"), (out / "README.md_docs.md").read_text(encoding="utf-8"):
        assert "LICENSE" not in text and "pyproject.toml" not in text and "notes.md" not in text


def _cli(*args: str, cache: Path) -> dict:
    with contextlib.redirect_stdout(io.StringIO()) as printed, contextlib.redirect_stderr(io.StringIO()):
        assert cli.main([*args, "--json", "--cache-dir", str(cache)]) == 0
    return json.loads(printed.getvalue())


def _fresh(root: Path, tmp_path: Path) -> dict[str, bytes]:
    copy = tmp_path / "fresh" / root.name
    shutil.rmtree(copy.parent, ignore_errors=True)
    shutil.copytree(root, copy, ignore=lambda folder, names: ["docs"] if Path(folder) == root else [])
    _cli("generate", str(copy), "--no-cache", cache=tmp_path / "none")
    return tree(copy / "docs")


def test_a_document_gaining_and_losing_headings_gains_and_loses_its_pages(tmp_path: Path) -> None:
    """Through the CLI from its last run's state (only contents changed: the run plans from the change),
    then through the server's save (`regenerate`): pages appear, go, and the tree equals a fresh one."""
    root = make_workspace(tmp_path / "ws", FILES)
    cache = tmp_path / "cache"
    _cli("generate", str(root), cache=cache)
    (root / "notes.md").write_text("# Notes\n\n## Todo\n\nMore.\n")
    summary = _cli("generate", str(root), cache=cache)
    assert {"notes.md_docs.md", "notes.md_kw.md", "index.md"} <= set(summary["writtenPages"])
    assert "README.md_docs.md" in summary["writtenPages"]  # its Related Files list the new sibling
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []
    (root / "notes.md").write_text("todo\n")
    summary = _cli("generate", str(root), cache=cache)
    assert set(summary["removedPages"]) == {"notes.md_docs.md", "notes.md_kw.md"}
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []

    settings, _ = load_settings(root, {"cacheDir": str(cache)})
    ws = Workspace(root, settings)
    generate(root, ws)
    for text, written in (("# Notes\n\nA paragraph of prose long enough to count.\n", True), ("todo\n", False)):
        (root / "notes.md").write_text(text)
        summary = regenerate(ws, ["notes.md"], Renderer())
        assert (root / "docs/notes.md_docs.md").exists() is written
        assert ("notes.md_docs.md" in summary.removed) is not written
        assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []
        assert broken_links(root / "docs") == []


def test_get_page_of_a_file_without_pages_names_its_folder_index(tmp_path: Path) -> None:
    pytest.importorskip("mcp.server.mcpserver")
    from repodoc_lsp.mcp.docs import DocsError
    from repodoc_lsp.mcp.server import open_docs
    from repodoc_lsp.pipeline.runtime import LIBRARY

    root = make_workspace(tmp_path / "ws", FILES)
    settings, _ = load_settings(root, {"cacheDir": str(tmp_path / "cache")})
    docs, _tools, pages = open_docs(root, settings, LIBRARY, poll=0)
    docs.start()
    try:
        for path in ("pkg/py.typed", "pkg/py.typed_docs.md", "LICENSE_kw.md"):
            with pytest.raises(DocsError, match=r"has no page of its own .*: (pkg/)?index\.md lists it"):
                docs.answer(lambda path=path: pages.get_page(path=path))
        assert docs.answer(lambda: pages.get_page(path="README.md"))["page"] == "README.md_docs.md"
    finally:
        docs.close()


EMPTY = {
    "app.py": '"""The app, on `pkg.mod` and `pkg.sub.tool`."""\nfrom pkg import mod\nimport pkg.sub\n'
              'from pkg.sub import tool\n\n\ndef main() -> int:\n    """Run `pkg.mod.f`."""\n'
              '    return mod.f() + tool.g()\n',
    "pkg/__init__.py": "",
    "pkg/mod.py": '"""A module."""\n\n\ndef f() -> int:\n    """One."""\n    return 1\n',
    "pkg/sub/__init__.py": "",
    "pkg/sub/tool.py": '"""A tool."""\n\n\ndef g() -> int:\n    """Two."""\n    return 2\n',
}


def test_an_empty_source_is_a_line_of_its_folder_index_and_nothing_links_to_it(tmp_path: Path) -> None:
    """An empty `__init__.py` says nothing: no pages (two pages of "nothing found" before), a line in
    its folder's index; the imports reaching it name it without a link (file page and folder page)."""
    root = make_workspace(tmp_path / "ws", EMPTY)
    proc = run_cli("generate", str(root), "--json", env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stderr
    out = root / "docs"
    assert {p.relative_to(out).as_posix() for p in out.rglob("*_docs.md")} == \
        {"app.py_docs.md", "pkg/mod.py_docs.md", "pkg/sub/tool.py_docs.md"}
    assert "- `__init__.py` (`.py` file, 0 lines, 0 bytes): Empty: makes its folder a regular package.\n" in \
        (out / "pkg/index.md").read_text(encoding="utf-8")
    assert broken_links(out) == []
    app = (out / "app.py_docs.md").read_text(encoding="utf-8")
    assert "[`pkg.sub`]" not in app and "`pkg.sub`" in app and "[`pkg.mod`]" not in app
    assert "[`tool`](pkg/sub/tool.py_docs.md)" in app
    assert ", `pkg/sub/__init__.py`, [" in (out / "doc.md").read_text(encoding="utf-8")  # named, not linked


def test_an_empty_source_gaining_content_gains_its_pages_and_the_links_to_them(tmp_path: Path) -> None:
    """The CLI from its last run's state, then the server's save: pages appear and go with the content,
    the importer's page links the module while it has pages, and the tree equals a fresh one."""
    root = make_workspace(tmp_path / "ws", EMPTY)
    cache = tmp_path / "cache"
    _cli("generate", str(root), cache=cache)
    (root / "pkg/sub/__init__.py").write_text('"""The sub-package."""\n')
    summary = _cli("generate", str(root), cache=cache)
    assert {"pkg/sub/__init__.py_docs.md", "app.py_docs.md", "doc.md"} <= set(summary["writtenPages"])
    assert "[`pkg.sub`](pkg/sub/__init__.py_docs.md)" in (root / "docs/app.py_docs.md").read_text(encoding="utf-8")
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []
    (root / "pkg/sub/__init__.py").write_text("")
    summary = _cli("generate", str(root), cache=cache)
    assert set(summary["removedPages"]) == {"pkg/sub/__init__.py_docs.md", "pkg/sub/__init__.py_kw.md"}
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []

    settings, _ = load_settings(root, {"cacheDir": str(cache)})
    ws = Workspace(root, settings)
    generate(root, ws)
    for text, written in (('"""The package."""\n', True), ("", False)):
        (root / "pkg/__init__.py").write_text(text)
        regenerate(ws, ["pkg/__init__.py"], Renderer())
        assert (root / "docs/pkg/__init__.py_docs.md").exists() is written
        assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []
        assert broken_links(root / "docs") == []


def test_a_sub_folder_of_binary_files_only_says_so_in_its_parent_index(tmp_path: Path) -> None:
    """Every sub-folder in `index.md` with a purpose (issue 35): one whose files are all skipped
    (binary) said only "0 files" before."""
    root = make_workspace(tmp_path / "ws", {"a.py": "X = 1\n", "bin/blob": b"\x7fELF\x00\x01\x02\x00" * 8})
    proc = run_cli("generate", str(root), "--json", env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stderr
    assert "- [`bin/`](bin/index.md): 0 files. Holds no file repodoc reads (binary or skipped files only).\n" in \
        (root / "docs/index.md").read_text(encoding="utf-8")
