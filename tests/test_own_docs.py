"""A project's own docs/ (Sphinx, MkDocs, hand-written pages) is never the default output: the
first `repodoc generate` says in one line that it writes to repodoc-docs/, leaves docs/ as it
was (byte for byte: the project's own Sphinx build gives the same exit and warnings after it),
documents and checks those docs as inputs, and `generate --check` passes right after."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import cli_here, make_workspace, run_cli
from sdists import project_copy, sphinx_builds, sphinx_python

NOTICE = ("repodoc: docs/ holds your own documentation (docs/conf.py); writing to repodoc-docs/ "
          "(set `output` in [tool.repodoc] to choose)")
FILES = {
    "shapes/__init__.py": "",
    "shapes/core.py": 'def area(w: int, h: int) -> int:\n    """The area."""\n    return w * h\n',
    "docs/conf.py": 'project = "shapes"\nextensions = ["sphinx.ext.autodoc"]\n',
    "docs/index.rst": "Shapes\n======\n\nUse :func:`shapes.core.area`.\n\n.. toctree::\n\n   guide\n",
    "docs/guide.md": "# Guide\n\nCall `shapes.core.area`.\n",
}


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_first_run_beside_sphinx_docs(tmp_path: Path, cache_env: dict[str, str]) -> None:
    root = make_workspace(tmp_path / "ws", FILES)
    theirs = _tree(root / "docs")
    proc = run_cli("generate", str(root), env=cache_env)  # the command as a person runs it
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [NOTICE]
    assert proc.stdout.rstrip().endswith(f"-> {root / 'repodoc-docs'}")
    assert _tree(root / "docs") == theirs
    out = root / "repodoc-docs"
    assert (out / "shapes/core.py_docs.md").is_file()
    assert (out / "docs/index.rst_docs.md").is_file() and (out / "docs/guide.md_docs.md").is_file()  # inputs
    for args in (("generate", str(root)), ("generate", str(root), "--check"), ("check", str(root))):
        again = cli_here(*args, env=cache_env)
        assert again.returncode == 0, (args, again.stdout, again.stderr)
        assert "repodoc-docs" not in again.stderr  # said once, on the first run
    # The project's docs are checked: a rename makes both stale.
    (root / "shapes/core.py").write_text(FILES["shapes/core.py"].replace("area", "surface"))
    stale = cli_here("check", ".", "--no-pages", env=cache_env, cwd=root)
    assert stale.returncode == 1
    places = {line.split(":", 1)[0] for line in stale.stdout.splitlines() if "`shapes.core.area`" in line}
    assert places == {"docs/index.rst", "docs/guide.md"}, stale.stdout
    assert _tree(root / "docs") == theirs


@pytest.mark.slow
@pytest.mark.parametrize("name", ["click", "attrs"])
def test_their_sphinx_build_is_the_same_after_generate(name: str, tmp_path: Path,
                                                       cache_env: dict[str, str]) -> None:
    python = sphinx_python()
    pristine, project = project_copy(name, tmp_path / "pristine"), project_copy(name, tmp_path / "generated")
    theirs = _tree(project / "docs")
    proc = cli_here("generate", str(project), env=cache_env)
    assert proc.returncode == 0, proc.stderr
    before, after = sphinx_builds(python, [(pristine, tmp_path / "before"), (project, tmp_path / "after")])
    assert after == before
    assert _tree(project / "docs") == theirs
    assert "writing to repodoc-docs/" in proc.stderr and (project / "repodoc-docs/docs").is_dir()
    check = cli_here("generate", str(project), "--check", env=cache_env)
    assert check.returncode == 0, check.stdout + check.stderr
