"""The `site` setting: `mkdocs.yml` beside the tree builds it with `mkdocs build --strict`, and
`.nojekyll` keeps `_`-names published on GitHub Pages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import cli_here, make_workspace

from repodoc_lsp.output.site import MARKER

pytest.importorskip("mkdocs")

FILES = {
    "pyproject.toml": '[project]\nname = "demo"\n\n[tool.repodoc]\nsite = "mkdocs"\n',
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/core.py": '"""Core things."""\n\n\nclass Widget:\n    """A widget."""\n',
    "pkg/sub/b.py": "from pkg.core import Widget\n",
    "pkg/use.py": "from pkg.core import Widget\nfrom pkg.sub import b\n",
}


def test_mkdocs_builds_the_tree_strictly(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", FILES)
    env = {"REPODOC_CACHE_DIR": str(tmp_path / "cache")}
    assert cli_here("generate", str(ws), "-q", env=env).returncode == 0
    assert (ws / "docs/.nojekyll").is_file()  # Jekyll would drop __init__.py_docs.md
    config = (ws / "mkdocs.yml").read_text()
    assert config.startswith(MARKER) and '- "sub/":' in config
    site = tmp_path / "site"
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=ws,
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    assert (site / "pkg/__init__.py_docs.html").is_file() and (site / "search/search_index.json").is_file()
    assert 'class="mermaid"' in (site / "pkg/doc.html").read_text()  # the import diagram, for Mermaid

    (ws / "mkdocs.yml").write_text("site_name: mine\n")  # a person's config is left alone
    proc = cli_here("generate", str(ws), "-q", env=env)
    assert proc.returncode == 0 and "not written by repodoc" in proc.stderr
    assert (ws / "mkdocs.yml").read_text() == "site_name: mine\n"
