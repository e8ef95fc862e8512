"""A real Docusaurus 3 build of the tree with README's recipe ("A site"): every page becomes an HTML
page, `__init__.py_docs.md`, `_private.py_docs.md` and `_internal/` included (the docs plugin's
default `exclude` drops names starting with `_`), and the pages are read as CommonMark.

Docusaurus comes from tests/agents/docusaurus/install-ci-deps.sh (exact versions, a cache folder
outside the repository, once per machine; .ci/run calls it). Without it the test is skipped, unless
REPODOC_REQUIRE_DOCUSAURUS=1 (CI) makes that a failure. The build needs no network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import cli_here, make_workspace

HERE = Path(__file__).parent / "docusaurus"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repodoc-ci" / "docusaurus"
FILES = {
    "pyproject.toml": '[project]\nname = "demo"\n',
    "pkg/__init__.py": '"""The package."""\nfrom pkg.core import Widget\n',
    "pkg/core.py": '"""Core things."""\n\n\nclass Widget:\n    """A widget with <b>markup</b> and {braces}."""\n',
    "pkg/_private.py": '"""Private helpers."""\nfrom pkg.core import Widget\n\n\ndef _helper() -> Widget:\n'
                       "    return Widget()\n",
    "pkg/_internal/__init__.py": '"""Internal."""\n',
    "pkg/_internal/deep.py": '"""Deep."""\nfrom pkg._private import _helper\n\nVALUE = _helper()\n',
}
# README's recipe (the docs plugin's `exclude` without `_*`, pages read as CommonMark), made strict
# like `mkdocs build --strict`; Docusaurus Faster (Rspack) only to build in seconds, not a minute.
CONFIG = """module.exports = {
  title: 'demo',
  url: 'https://example.com',
  baseUrl: '/',
  onBrokenLinks: 'throw',
  onBrokenAnchors: 'throw',
  future: {faster: true, v4: true},
  markdown: {format: 'detect', hooks: {onBrokenMarkdownLinks: 'throw'}},
  presets: [['classic', {
    docs: {path: %s, routeBasePath: '/', exclude: ['**/*.test.{js,jsx,ts,tsx}', '**/__tests__/**']},
    blog: false,
  }]],
};
"""


def _docusaurus() -> Path:
    """The installed `docusaurus` command, or skip (fail under REPODOC_REQUIRE_DOCUSAURUS=1)."""
    wanted = json.loads((HERE / "package.json").read_text())["dependencies"]["@docusaurus/core"]
    core = CACHE / "node_modules/@docusaurus/core/package.json"
    have = json.loads(core.read_text())["version"] if core.is_file() else None
    if have == wanted and shutil.which("node"):
        return CACHE / "node_modules/.bin/docusaurus"
    why = f"Docusaurus {wanted} is not installed (bash {HERE / 'install-ci-deps.sh'})"
    if os.environ.get("REPODOC_REQUIRE_DOCUSAURUS") == "1":
        pytest.fail(why)
    pytest.skip(why)


def _route(page: str) -> str:
    """Where Docusaurus writes the page `page` of the tree: `a/b.md` -> `a/b/index.html`, `a/index.md`
    -> `a/index.html`."""
    stem = page.removesuffix(".md")
    return (stem.removesuffix("index") if stem == "index" or stem.endswith("/index") else stem + "/") + "index.html"


def test_docusaurus_builds_every_page_of_the_tree(tmp_path: Path) -> None:
    docusaurus = _docusaurus()
    ws = make_workspace(tmp_path / "ws", FILES)
    assert cli_here("generate", str(ws), "-q", env={"REPODOC_CACHE_DIR": str(tmp_path / "cache")}).returncode == 0
    pages = sorted(p.relative_to(ws / "docs").as_posix() for p in (ws / "docs").rglob("*.md"))
    assert {"pkg/__init__.py_docs.md", "pkg/_private.py_docs.md", "pkg/_internal/deep.py_docs.md"} <= set(pages)

    site = make_workspace(tmp_path / "site", {"package.json": '{"private": true}\n',
                                              "docusaurus.config.js": CONFIG % json.dumps(str(ws / "docs"))})
    (site / "node_modules").symlink_to(CACHE / "node_modules", target_is_directory=True)
    env = {**os.environ, "NO_UPDATE_NOTIFIER": "1", "CI": "1"}
    built = subprocess.run([str(docusaurus), "build", "--out-dir", str(tmp_path / "build")], cwd=site, env=env,
                           capture_output=True, text=True, timeout=280)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]

    missing = [page for page in pages if not (tmp_path / "build" / _route(page)).is_file()]
    assert not missing, missing
    core = (tmp_path / "build" / _route("pkg/core.py_docs.md")).read_text()
    assert 'href="/pkg/_private.py_docs"' in core or "href=/pkg/_private.py_docs" in core  # "Used by", resolved
    assert "id=class-Widget" in core or 'id="class-Widget"' in core  # the anchors that links and the editor use
    assert "markup&lt;/b" in core and "{braces}" in core  # a docstring stays text, as CommonMark
