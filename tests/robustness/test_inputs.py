"""Awkward inputs: names that break links, huge files, line endings, encodings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import DOCS_SECTIONS, KW_SECTIONS, broken_links, foreign_html, md_headings, page_errors, strip_fences

NAMES = ["with space.py", "hash#1.py", "per%cent.py", "br[ack]ets (1).py", "ünïcode_名前.py", "back`tick.py",
         "dir with space/inner #2.py"]


def _generate(root: Path, tmp: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "--json"],
                          env={**os.environ, "REPODOC_CACHE_DIR": str(tmp / "cache")}, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_names_that_break_links(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for name in NAMES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"def f():\n    '''In {name}.'''\n")
    (root / "user.py").write_text("import os\n")
    summary = _generate(root, tmp_path)
    assert summary["skipped"] == [] and summary["files"] == len(NAMES) + 1
    for name in NAMES:
        assert (root / "docs" / f"{name}_docs.md").is_file(), name
    assert broken_links(root / "docs") == []
    index = (root / "docs" / "index.md").read_text()
    assert "hash%231.py_docs.md" in index and "per%25cent.py_docs.md" in index


def test_big_files_and_line_endings(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "long.py").write_text("".join(f"def f{i}():\n    return {i}\n" for i in range(50_000)))  # 100,000 lines
    with open(root / "huge.txt", "wb") as fh:  # 50 MB, sparse
        fh.truncate(50 * 2**20)
    (root / "crlf.py").write_bytes(b"def a():\r\n    pass\r\nclass B:\r\n    pass\r\n")
    (root / "cr.py").write_bytes(b"def a():\r    pass\rclass B:\r    pass\r")
    (root / "bom.py").write_bytes(b"\xef\xbb\xbfdef with_bom():\n    pass\n")
    (root / "deep.py").write_text("x = " + "[" * 1000 + "]" * 1000 + "\ndef after():\n    pass\n")
    summary = _generate(root, tmp_path)
    skipped = {s["path"]: s["reason"] for s in summary["skipped"]}
    assert skipped["huge.txt"].startswith("too large (52,428,800 bytes")
    long_docs = (root / "docs/long.py_docs.md").read_text()
    assert "- **Lines**: 100,000" in long_docs and "Not embedded: " in long_docs
    assert "**`f49999`**" in (root / "docs/long.py_kw.md").read_text()
    for name in ("crlf.py", "cr.py"):
        kw = (root / "docs" / f"{name}_kw.md").read_text()
        assert "**`a`**" in kw and "**`B`**" in kw, name
    assert "**`with_bom`**" in (root / "docs/bom.py_kw.md").read_text()
    assert skipped["deep.py"] == "nesting too deep (1,000 levels; limit 200)"  # parso: minutes per MB
    for page in (root / "docs").rglob("*.md"):
        strip_fences(page.read_text())  # every fence closed
    assert broken_links(root / "docs") == []


HOSTILE = {
    "tool`<img src=x onerror=alert(1)>`.py": "def f():\n    '''A tool.'''\n\n\nif __name__ == '__main__':\n    f()\n",
    "a\n\n# injected heading\n\nb.py": "'''Blank lines in my name.'''\nif __name__ == '__main__':\n    pass\n",
    "~~~.py": "x = 1\n",
    "```<script>alert(2).md": "# Title\n",
    "<img src=y onerror=alert(3)>.txt": "words here\n",
    "[x](javascript:alert(4)).py": "'''Link.'''\n",
    "pkg\n\n## also injected/mod.py": "'''In a folder with blank lines.'''\n",
}


def test_hostile_file_names_stay_text(tmp_path: Path) -> None:
    """File names with backticks, HTML and blank lines: every page keeps its structure, no live HTML
    and no injected heading (in the file's own pages, its folder's pages and every sibling's Related Files)."""
    root = tmp_path / "ws"
    for name, text in HOSTILE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "plain.py").write_text("'''A sibling.'''\n")
    summary = _generate(root, tmp_path)
    assert summary["skipped"] == []
    pages = sorted((root / "docs").rglob("*.md"))
    # the root folder's and pkg's index.md and doc.md; the .txt file is a line of the index (no pages)
    assert len(pages) == 2 * len(HOSTILE) + 4
    for page in pages:
        text = page.read_text()
        assert foreign_html(text) == [], page
        headings = [t for _, t in md_headings(text)]
        assert not {"injected heading", "also injected"} & set(headings), (page, headings)
        if page.name.endswith("_docs.md"):
            assert page_errors(text, DOCS_SECTIONS) == [], page
        elif page.name.endswith("_kw.md"):
            assert page_errors(text, KW_SECTIONS) == [], page
    tool = (root / "docs" / "tool`<img src=x onerror=alert(1)>`.py_docs.md").read_text()
    assert "Run it as a script: ``python tool`<img src=x onerror=alert(1)>`.py``." in tool
    assert broken_links(root / "docs") == []
