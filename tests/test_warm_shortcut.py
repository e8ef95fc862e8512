"""A whole run whose inputs are those the manifest records skips planning, and only then."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import make_workspace, read_manifest

from repodoc_lsp.config import load_settings
from repodoc_lsp.pipeline.generate import generate, regenerate
from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.store.workspace import Workspace

FILES = {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import f\n",
         "pkg/b.py": '"""B."""\n\ndef f():\n    """Eff."""\n'}


def _ws(tmp_path: Path, **options: object) -> Workspace:
    root = tmp_path / "ws"
    if not root.exists():
        make_workspace(root, FILES)
    settings, _ = load_settings(root, {"cacheDir": str(tmp_path / "cache"), **options})
    return Workspace(root, settings)


def _inputs(out: Path) -> str | None:
    return read_manifest(out).get("inputs")


def _generate(tmp_path: Path, **options: object):  # type: ignore[no-untyped-def]
    ws = _ws(tmp_path, **options)
    return ws, generate(ws.root, ws)


def test_an_unchanged_tree_is_not_planned_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, first = _generate(tmp_path)
    assert first.written and _inputs(ws.out)
    planned: list[int] = []
    import repodoc_lsp.pipeline.generate as gen
    real = gen.plan_pages
    monkeypatch.setattr(gen, "plan_pages", lambda *a, **k: planned.append(1) or real(*a, **k))
    _ws2, again = _generate(tmp_path)
    assert (again.written, again.unchanged, planned) == ([], len(first.written), [])


def test_a_setting_that_changes_pages_is_planned(tmp_path: Path) -> None:
    ws, _ = _generate(tmp_path)
    _ws2, again = _generate(tmp_path, embedSourceMaxBytes=0)
    assert "pkg/b.py_docs.md" in again.written
    assert "Not embedded" in (ws.out / "pkg/b.py_docs.md").read_text()


@pytest.mark.parametrize("options", [{"jobs": 1}, {"hover": "off", "regenerateOnSave": False, "maxWorkspaceSymbols": 5},
                                     {"refsHistory": True, "refsIgnore": ["x/**"]}])
def test_a_setting_no_page_reads_is_not_a_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 options: dict[str, object]) -> None:
    """The worker count, the language server's settings and `repodoc check`'s shape no page: a run given
    another value (`generate --check --jobs 1` after `generate`) takes the unchanged tree's shortcut."""
    ws, first = _generate(tmp_path)
    planned: list[int] = []
    import repodoc_lsp.pipeline.generate as gen
    real = gen.plan_pages
    monkeypatch.setattr(gen, "plan_pages", lambda *a, **k: planned.append(1) or real(*a, **k))
    _ws2, again = _generate(tmp_path, **options)
    assert (again.written, again.unchanged, planned) == ([], len(first.written), [])
    assert _inputs(ws.out) == _inputs(_ws2.out)


def test_a_deleted_or_touched_page_is_planned(tmp_path: Path) -> None:
    ws, _ = _generate(tmp_path)
    (ws.out / "pkg/a.py_kw.md").unlink()
    _ws2, again = _generate(tmp_path)
    assert again.written == ["pkg/a.py_kw.md"]
    os.utime(ws.out / "pkg/b.py_kw.md", ns=(1, 1))  # same content, another time: rendered, not written
    _ws3, third = _generate(tmp_path)
    assert third.written == [] and _inputs(ws.out)


def test_an_edited_page_is_reported_on_every_run(tmp_path: Path) -> None:
    ws, _ = _generate(tmp_path)
    page = ws.out / "pkg/b.py_docs.md"
    page.write_text(page.read_text() + "\nmy note\n")
    for _ in range(2):
        _w, run = _generate(tmp_path)
        assert [c.page for c in run.conflicts] == ["pkg/b.py_docs.md"]
        assert not _inputs(ws.out)  # an incomplete tree records no inputs
    assert "my note" in page.read_text()


def test_a_save_between_whole_runs_is_not_hidden(tmp_path: Path) -> None:
    ws, _ = _generate(tmp_path)
    (ws.root / "pkg/b.py").write_text('"""B."""\n\ndef g():\n    """Gee."""\n')
    regenerate(ws, ["pkg/b.py"], Renderer())
    assert not _inputs(ws.out)  # a run of some pages does not vouch for the whole tree
    (ws.root / "pkg/b.py").write_text(FILES["pkg/b.py"])  # back: the whole tree is planned
    _w, again = _generate(tmp_path)
    assert "pkg/b.py_kw.md" in again.written and "`f`" in (ws.out / "pkg/b.py_kw.md").read_text()
