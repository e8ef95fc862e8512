"""repodoc's own templates compiled once and kept between runs in the person's cache folder (Jinja2's
`FileSystemBytecodeCache`, `render/environment.compiled_cache`): only in a private folder of theirs,
keyed by how pages are rendered and Jinja2's version; the tree stays the same."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from edits import differences, tree
from helpers import make_workspace
from test_since_last_run import FILES, _cli, _generate

from repodoc_lsp.render.environment import OwnEnvironment, compiled_cache


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates compiled from their source from now on."""
    names: list[str] = []
    real = OwnEnvironment.compile

    def counted(self: OwnEnvironment, source: object, name: str | None = None, *args: object, **kw: object) -> object:
        names.append(name or "")
        return real(self, source, name, *args, **kw)  # type: ignore[call-overload]
    monkeypatch.setattr(OwnEnvironment, "compile", counted)
    return names


def test_a_run_after_an_edit_compiles_no_template(tmp_path: Path, compiled: list[str]) -> None:
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    kept = cache / "templates"
    assert kept.is_dir() and (kept.stat().st_mode & 0o777) == 0o700 and any(kept.iterdir())
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    compiled.clear()
    assert _generate(root, cache)["writtenPages"] == ["pkg/leaf.py_docs.md"]
    assert compiled == []  # every template the pages used came compiled from the cache folder
    for entry in kept.iterdir():  # damaged: compiled again, the same pages
        entry.write_bytes(b"j2 not bytecode")
    (root / "pkg/leaf.py").write_text("def alone():\n    return 3\n")
    _generate(root, cache)
    assert compiled
    fresh = make_workspace(tmp_path / "fresh" / "ws", {**FILES, "pkg/leaf.py": "def alone():\n    return 3\n"})
    _cli("generate", str(fresh), "--no-cache", "--quiet")
    assert differences(tree(root / "docs"), tree(fresh / "docs")) == []


def test_the_folder_must_be_the_persons_and_private(tmp_path: Path) -> None:
    open_to_all = tmp_path / "open"
    open_to_all.mkdir(mode=0o777)
    os.chmod(open_to_all, 0o777)
    assert compiled_cache(open_to_all, "s") is not None and (open_to_all.stat().st_mode & 0o777) == 0o700
    (tmp_path / "link").symlink_to(open_to_all)
    assert compiled_cache(tmp_path / "link", "s") is None  # a link is not followed
    (tmp_path / "file").write_text("")
    assert compiled_cache(tmp_path / "file", "s") is None
