"""A real Docusaurus 3 build of the tree with README's recipe ("A site"): every page becomes an HTML
page of its own, at its name (`pkg/core.py_docs.md` -> `pkg/core.py_docs.html`), including
`__init__.py_docs.md`, `_private.py_docs.md` and `_internal/` (the docs plugin's default `exclude`
drops names starting with `_`) and a folder named `doc/` beside the folder page `doc.md` (without the
recipe's slugs, `pkg/doc.md`, `pkg/doc/index.md` and `pkg/doc/doc.md` are one route); the pages are
read as CommonMark, with their anchors and links.

Docusaurus comes from tests/agents/docusaurus/install-ci-deps.sh (exact versions, a cache folder
outside the repository, once per machine; .ci/run calls it). Without it the test is skipped, unless
REPODOC_REQUIRE_DOCUSAURUS=1 (CI) makes that a failure. The build needs no network.
"""

from __future__ import annotations

import json
import os
import re
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
    "pkg/doc/__init__.py": '"""A folder named doc, beside pkg/doc.md."""\n',
    "pkg/_internal/deep.py": '"""Deep."""\nfrom pkg._private import _helper\n\nVALUE = _helper()\n',
}
# README's recipe, verbatim (README "A site"), in the site of the test: its TREE, the docs as the
# site's home (routeBasePath; a site without a home page has broken links), made strict like
# `mkdocs build --strict`, and Docusaurus Faster (Rspack) only to build in seconds, not a minute.
RECIPE = """const path = require('path');
const TREE = path.resolve(__dirname, '../ws/docs');

module.exports = {
  title: 'demo',
  url: 'https://example.com',
  baseUrl: '/',
  onBrokenLinks: 'throw',
  onBrokenAnchors: 'throw',
  onDuplicateRoutes: 'throw',
  future: {faster: true, v4: true},
  markdown: {
    hooks: {onBrokenMarkdownLinks: 'throw'},
    format: 'detect',  // the pages are CommonMark (they hold HTML comments), not MDX
    // each page at its own name, pkg/doc.md -> pkg/doc.html: a folder named doc/ keeps its pages
    parseFrontMatter: async (params) => {
      const result = await params.defaultParseFrontMatter(params);
      const page = path.relative(TREE, params.filePath).split(path.sep).join('/');
      if (!page.startsWith('../') && !/(^|\\/)index\\.md$/.test(page)) {
        result.frontMatter.slug ??= '/' + page.replace(/\\.md$/, '.html');
      }
      return result;
    },
  },
  presets: [['classic', {
    // the default exclude drops names starting with _ (__init__.py_docs.md, _internal/)
    docs: {path: TREE, routeBasePath: '/', exclude: ['**/*.test.{js,jsx,ts,tsx}', '**/__tests__/**']},
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


def test_docusaurus_builds_every_page_of_the_tree(tmp_path: Path) -> None:
    docusaurus = _docusaurus()
    ws = make_workspace(tmp_path / "ws", FILES)
    assert cli_here("generate", str(ws), "-q", env={"REPODOC_CACHE_DIR": str(tmp_path / "cache")}).returncode == 0
    pages = sorted(p.relative_to(ws / "docs").as_posix() for p in (ws / "docs").rglob("*.md"))
    assert {"pkg/__init__.py_docs.md", "pkg/_private.py_docs.md", "pkg/_internal/deep.py_docs.md", "pkg/doc.md",
            "pkg/doc/index.md", "pkg/doc/doc.md"} <= set(pages)

    site = make_workspace(tmp_path / "site", {"package.json": '{"private": true}\n',
                                              "docusaurus.config.js": RECIPE})
    (site / "node_modules").symlink_to(CACHE / "node_modules", target_is_directory=True)
    # no update check; no build cache written into the shared install (through the symlink)
    env = {**os.environ, "NO_UPDATE_NOTIFIER": "1", "CI": "1", "DOCUSAURUS_NO_PERSISTENT_CACHE": "1"}
    built = subprocess.run([str(docusaurus), "build", "--out-dir", str(tmp_path / "build")], cwd=site, env=env,
                           capture_output=True, text=True, timeout=280)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]

    missing = [page for page in pages if not (tmp_path / "build" / page).with_suffix(".html").is_file()]
    assert not missing, missing
    for page in pages:  # each its own page: pkg/doc.md, pkg/doc/index.md and pkg/doc/doc.md are three
        title = next(line for line in (ws / "docs" / page).read_text().splitlines() if line.startswith("# "))
        html = re.sub(r"`([^`]*)`", r"<code>\1</code>", title[2:])
        assert f"<h1>{html}</h1>" in (tmp_path / "build" / page).with_suffix(".html").read_text(), page
    core = (tmp_path / "build/pkg/core.py_docs.html").read_text()
    assert "href=/pkg/_private.py_docs.html" in core.replace('"', '')  # "Used by", resolved
    assert "id=class-Widget" in core.replace('"', '')  # the anchors that links and the editor use
    assert "markup&lt;/b" in core and "{braces}" in core  # a docstring stays text, as CommonMark
