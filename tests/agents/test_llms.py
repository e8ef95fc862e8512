"""llms.txt and llms-full.txt: their shape (llmstxt.org), links that resolve, kept by `--check`,
removed with their setting, and the same after an edit as in a fresh tree."""

from __future__ import annotations

import posixpath
import shutil
from pathlib import Path

import pytest
from edits import differences, tree
from helpers import cli_here, make_workspace
from markdown_it import MarkdownIt

from repodoc_lsp.render import llms

FILES = {
    "pyproject.toml": '[project]\nname = "demo"\n\n[tool.repodoc]\nllms-full-max-bytes = 900\n',
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/core.py": '"""Core things."""\n\n\nclass Widget:\n    """A widget."""\n\n\ndef make() -> Widget:\n'
                   '    """Make one."""\n    return Widget()\n',
    "pkg/a.py": "from pkg.core import make\n",
    "pkg/sub/b.py": "from pkg.core import Widget\nfrom pkg import a\n",
    "README.md": "# Demo\n\nHello.\n",
}


def _links(text: str) -> list[str]:
    found = []
    for token in MarkdownIt().parse(text):
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrs["href"]))
    return found


def _env(tmp_path: Path) -> dict[str, str]:
    return {"REPODOC_CACHE_DIR": str(tmp_path / "cache")}


def test_llms_txt_shape_links_check_and_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llms, "MAIN_FILES", 2)  # the rest goes under ## Optional
    ws = make_workspace(tmp_path / "ws", FILES)
    env = _env(tmp_path)
    assert cli_here("generate", str(ws), "-q", env=env).returncode == 0
    out = ws / "docs"
    text = (out / "llms.txt").read_text()
    tokens = [t for t in MarkdownIt().parse(text) if t.type != "html_block"]  # the marker line
    assert (tokens[0].type, tokens[0].tag, tokens[1].content) == ("heading_open", "h1", "demo")
    assert tokens[3].type == "blockquote_open"
    h2 = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
    assert h2 == ["Folders", "Main pages", "Optional"]
    main = text.split("## Main pages")[1].split("## Optional")[0]
    assert _links(main) == ["pkg/core.py_docs.md", "pkg/a.py_docs.md"]  # the most imported first
    links = _links(text)
    assert "pkg/doc.md" in links and "pkg/sub/doc.md" in links and "pkg/sub/b.py_docs.md" in links
    assert [link for link in links if not (out / link).is_file()] == []

    full = (out / "llms-full.txt").read_text()
    assert len(full.encode()) <= 900 and "`class Widget`: A widget." in full
    assert [link for link in _links(full) if not (out / link).is_file()] == []

    checked = cli_here("generate", str(ws), "--check", "-q", env=env)
    assert checked.returncode == 0 and "damaged" not in checked.stderr, checked.stderr  # names the manifest takes
    (out / "llms.txt").write_text(text + "\nA note.\n")
    assert cli_here("generate", str(ws), "--check", "-q", env=env).returncode == 1
    assert cli_here("generate", str(ws), "--force", "-q", env=env).returncode == 0
    assert (out / "llms.txt").read_text() == text

    (ws / "pyproject.toml").write_text('[project]\nname = "demo"\n')  # the setting turned off
    assert cli_here("generate", str(ws), "-q", env=env).returncode == 0
    assert not (out / "llms-full.txt").exists() and (out / "llms.txt").is_file()
    assert cli_here("generate", str(ws), "--check", "-q", env=env).returncode == 0


def test_llms_pages_after_an_edit_equal_a_fresh_tree(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", FILES)
    env = _env(tmp_path)
    assert cli_here("generate", str(ws), "-q", env=env).returncode == 0
    before = (ws / "docs/llms.txt").read_text()
    # pkg/a.py becomes the most imported file, and a file appears
    (ws / "pkg/c.py").write_text("from pkg import a\nfrom pkg.a import make\n")
    (ws / "pkg/core.py").write_text('"""Core things, renamed."""\n')
    assert cli_here("generate", str(ws), "-q", env=env).returncode == 0
    fresh = tmp_path / "fresh"
    shutil.copytree(ws, fresh, ignore=lambda folder, names: ["docs"] if posixpath.basename(folder) == "ws" else [])
    assert cli_here("generate", str(fresh), "-q", env=env).returncode == 0
    assert differences(tree(ws / "docs"), tree(fresh / "docs")) == []
    assert (ws / "docs/llms.txt").read_text() != before
