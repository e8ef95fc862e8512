"""repodoc's own templates compiled once and kept between runs in the person's cache folder (Jinja2's
`FileSystemBytecodeCache`, `render/environment.compiled_cache`): only in a private folder of theirs,
keyed by how pages are rendered and Jinja2's version; the tree stays the same."""

from __future__ import annotations

import os
import time
from pathlib import Path

import jinja2
import pytest
from edits import differences, tree
from helpers import make_workspace, run_cli
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


def _aged(path: Path, days: float) -> Path:
    then = time.time() - days * 86_400
    os.utime(path, (then, then), follow_symlinks=False)
    return path


def _written(path: Path, days: float) -> Path:
    path.write_bytes(b"x")
    return _aged(path, days)


def test_entries_the_stamp_no_longer_uses_are_pruned(tmp_path: Path) -> None:
    """Compiled templates of other stamps or Jinja2 versions, and writes that did not end, go once a day
    old; the stamp's own, anything else, links and what they point to stay."""
    kept = tmp_path / "templates"
    kept.mkdir(mode=0o700)
    outside = _written(tmp_path / "old-3.0.0-k.cache", 3)
    version = jinja2.__version__
    stays = {f"mine-{version}-a.cache": True, f"old-{version}-a.cache": False, "mine-3.0.0-a.cache": False,
             f"mine-{version}-b.cacheXy12.tmp": False, "notes.txt": True, "recent-3.0.0-a.cache": True}
    for name in stays:
        _written(kept / name, 0 if name.startswith("recent") else 2)  # `recent`: another version's, today
    _aged(_symlink(kept / "link-3.0.0-a.cache", outside), 2)
    (kept / "folder-3.0.0-a.cache").mkdir()
    assert compiled_cache(kept, "mine") is not None
    left = {p.name for p in kept.iterdir()}
    assert left == {n for n, s in stays.items() if s} | {"link-3.0.0-a.cache", "folder-3.0.0-a.cache"}
    assert outside.read_bytes() == b"x"
    # a link to a folder holding an old entry: refused, nothing deleted through it
    assert compiled_cache(_symlink(tmp_path / "swapped", tmp_path), "mine") is None and outside.exists()


def _symlink(link: Path, target: Path) -> Path:
    link.symlink_to(target)
    return link


def test_a_run_prunes_the_compiled_templates_of_another_stamp(tmp_path: Path) -> None:
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    kept = cache / "templates"
    current = {p.name for p in kept.iterdir()}
    for entry in list(kept.iterdir()):  # as an older repodoc left them, beside the current ones
        _aged(_written(kept / f"0123456789abcdef{entry.name[16:]}", 0), 2)
    _aged(kept / min(current), 2)  # the current ones stay, however old
    _generate(root, cache)
    assert {p.name for p in kept.iterdir()} == current


def test_a_run_rendered_by_workers_keeps_the_compiled_templates(tmp_path: Path, compiled: list[str]) -> None:
    """A cold run renders every page in its render workers, whose fork server compiles the templates: it
    keeps them in the cache folder too, so the first run after an edit (in its own process) compiles
    none (it compiled them all: a third of that run's CPU on a large tree)."""
    files = {f"pkg/m{i:03}.py": f"def f{i}():\n    return {i}\n" for i in range(220)}
    root, cache = make_workspace(tmp_path / "ws", files), tmp_path / "cache"
    proc = run_cli("generate", str(root), "--cache-dir", str(cache), "--jobs", "2", "--quiet")
    assert proc.returncode == 0, proc.stderr
    (root / "pkg/m007.py").write_text("def f7():\n    return 8\n")
    assert _generate(root, cache)["writtenPages"] == ["pkg/m007.py_docs.md"]
    assert compiled == []
