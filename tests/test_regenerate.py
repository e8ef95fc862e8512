"""`regenerate`: what the language server runs on save, in-process."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import broken_links, make_workspace

from repodoc_lsp.config import load_settings
from repodoc_lsp.pipeline.generate import generate, regenerate
from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.store.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = make_workspace(tmp_path / "ws", {
        "pkg/__init__.py": "", "pkg/a.py": "from pkg.b import f\n", "pkg/b.py": "def f():\n    pass\n",
        "other/c.py": "x = 1\n"})
    settings, _ = load_settings(root, {"cacheDir": str(tmp_path / "cache")})
    workspace = Workspace(root, settings)
    generate(root, workspace)
    return workspace


def _mtimes(out: Path) -> dict[str, int]:
    return {p.relative_to(out).as_posix(): p.stat().st_mtime_ns for p in out.rglob("*") if p.suffix in (".md", ".txt")}


def test_edit_rewrites_the_file_and_its_importers_only(ws: Workspace) -> None:
    before = _mtimes(ws.out)
    (ws.root / "pkg/b.py").write_text("def g():\n    pass\n")
    summary = regenerate(ws, ["pkg/b.py"], Renderer())
    # the folder's pages carry b.py's purpose line, derived from its definitions (no docstring), and
    # so does llms.txt (b.py is among its main pages)
    assert set(summary.written) == {"pkg/b.py_docs.md", "pkg/b.py_kw.md", "pkg/doc.md", "pkg/index.md", "llms.txt"}
    assert "**`g`**" in (ws.out / "pkg/b.py_kw.md").read_text()
    line = next(x for x in (ws.out / "pkg/index.md").read_text().splitlines() if "b.py_docs.md" in x)
    assert "`g`" in line and "`f`" not in line
    after = _mtimes(ws.out)
    assert {p for p in before if before[p] != after[p]} == set(summary.written)


def test_new_file_updates_siblings_and_folders(ws: Workspace) -> None:
    (ws.root / "pkg/new.py").write_text("import pkg.b\n")
    summary = regenerate(ws, ["pkg/new.py"], Renderer())
    assert {"pkg/new.py_docs.md", "pkg/new.py_kw.md", "pkg/index.md", "pkg/a.py_docs.md",
            "pkg/b.py_docs.md"} <= set(summary.written)
    imported_by = (ws.out / "pkg/b.py_docs.md").read_text().split("### Imported by", 1)[1].split("\n## ", 1)[0]
    assert "- [new.py](new.py_docs.md)\n" in imported_by  # a file of the page's folder, by its name
    assert broken_links(ws.out) == []


def test_deleted_file_and_emptied_folder_lose_their_pages(ws: Workspace) -> None:
    (ws.root / "other/c.py").unlink()
    summary = regenerate(ws, ["other/c.py"], Renderer())
    assert set(summary.removed) == {"other/c.py_docs.md", "other/c.py_kw.md", "other/index.md", "other/doc.md"}
    assert not (ws.out / "other").exists()
    assert "other/" not in (ws.out / "index.md").read_text()
    assert broken_links(ws.out) == []


def test_syntax_error_still_updates_keywords(ws: Workspace) -> None:
    (ws.root / "pkg/b.py").write_text("def f():\n    pass\n\ndef half(:\n")
    regenerate(ws, ["pkg/b.py"], Renderer())
    text = (ws.out / "pkg/b.py_kw.md").read_text()
    assert "**`half`**" in text and "**`f`**" in text


def test_a_replica_from_state_sees_later_changes_and_fills_the_cache(ws: Workspace) -> None:
    """The server's regeneration process restores the server's view of the workspace: files
    changed or created after that view was taken are changes to it, and the facts it
    analyses reach the server through the cache (no second analysis)."""
    state = ws.state()
    (ws.root / "pkg/b.py").write_text("def g():\n    pass\n")
    (ws.root / "pkg/new.py").write_text("def h():\n    pass\n")
    replica = Workspace(ws.root, ws.settings)
    replica.restore(state)
    assert set(replica.facts) == set(ws.facts) and replica.folders == ws.folders
    assert dict(replica.relations.imported_by) == dict(ws.relations.imported_by)
    summary = regenerate(replica, ["pkg/b.py", "pkg/new.py"], Renderer())
    assert {"pkg/b.py_kw.md", "pkg/new.py_docs.md", "pkg/new.py_kw.md", "pkg/index.md"} <= set(summary.written)
    assert "**`g`**" in (ws.out / "pkg/b.py_kw.md").read_text()
    assert broken_links(ws.out) == []
    ws.cache.put_many = None  # type: ignore[assignment,method-assign]  # would fail if it analysed anew
    assert ws.update_file("pkg/b.py") and ws.update_file("pkg/new.py")
    assert ws.facts["pkg/b.py"] == replica.facts["pkg/b.py"] and "pkg/new.py" in ws.facts


def test_a_workspace_takes_the_states_another_analysed(ws: Workspace) -> None:
    """The server takes the files its page process updated as the process sends them (digests;
    facts from the cache the process filled, in one query), without analysing them; a state
    whose facts the cache lacks is read from disk and analysed."""
    (ws.root / "pkg/b.py").write_text("def g():\n    pass\n")
    (ws.root / "pkg/new.py").write_text("from pkg.b import g\n")
    (ws.root / "other/c.py").unlink()
    replica = Workspace(ws.root, ws.settings)
    replica.restore(ws.state())
    rels = ["pkg/b.py", "pkg/new.py", "other/c.py"]
    change = replica.update_files(rels)
    states = replica.states(rels, facts=False)
    assert states["other/c.py"].digest == "" and all(states[r].digest and states[r].facts is None for r in rels[:2])
    taken = Workspace(ws.root, ws.settings)
    taken.restore(ws.state())
    analyse = taken._states
    taken._states = None  # type: ignore[assignment,method-assign]  # would fail if it read anything
    assert taken.take(states) == change and change.structural
    taken._states = analyse  # type: ignore[method-assign]
    assert taken.digests == replica.digests and taken.facts["pkg/new.py"] == replica.facts["pkg/new.py"]
    assert taken.relations.importers("pkg/b.py") == ["pkg/a.py", "pkg/new.py"]
    cacheless = Workspace(ws.root, ws.settings, use_cache=False)
    cacheless.restore(ws.state())
    assert cacheless.take(states).files == change.files and cacheless.digests == replica.digests


def test_the_first_change_after_a_scan_is_related_through_the_old_imports(ws: Workspace) -> None:
    again = Workspace(ws.root, ws.settings)
    assert again.scan()  # its relations are built on first use
    (ws.root / "pkg/a.py").write_text("x = 1\n")  # no longer imports pkg.b
    assert again.update_file("pkg/a.py").related == {"pkg/b.py"}


def test_update_and_remove_return_the_change(ws: Workspace) -> None:
    (ws.root / "pkg/b.py").write_text("def g():\n    pass\n")
    assert not ws.update_file("pkg/a.py")  # unchanged on disk: no change
    change = ws.update_file("pkg/b.py")
    assert change.files == {"pkg/b.py"} and not change.structural
    (ws.root / "pkg/a.py").write_text("x = 1\n")  # no longer imports pkg.b
    assert ws.update_file("pkg/a.py").related == {"pkg/b.py"}
    (ws.root / "pkg/new.py").write_text("x = 1\n")
    assert ws.update_file("pkg/new.py").structural
    (ws.root / "pkg/new.py").unlink()
    gone = ws.update_file("pkg/new.py")
    assert gone.structural and gone.files == {"pkg/new.py"}
    assert not ws.remove_file("pkg/new.py")


def test_a_package_appearing_rewrites_pages_that_named_it(ws: Workspace) -> None:
    """`import foo.missing` is third-party until a folder `foo` appears: the importer's page
    changes although none of its import targets do (the issue's stale page)."""
    (ws.root / "other/c.py").write_text("import foo.missing\n")
    regenerate(ws, ["other/c.py"], Renderer())
    (ws.root / "foo").mkdir()
    (ws.root / "foo/__init__.py").write_text('"""foo"""\n')
    summary = regenerate(ws, ["foo/__init__.py"], Renderer())
    assert "other/c.py_docs.md" in summary.written
    assert generate(ws.root, Workspace(ws.root, ws.settings), check=True).stale == []


def test_a_page_that_cannot_be_rendered_is_an_error_of_that_page(ws: Workspace, tmp_path: Path) -> None:
    before = (ws.out / "pkg/b.py_kw.md").read_bytes()
    templates = make_workspace(tmp_path / "tpl", {"file_kw.md.j2": "{{ marker }}\n{{ no_such_value }}\n"})
    (ws.root / "pkg/b.py").write_text("def g():\n    pass\n")
    summary = regenerate(ws, ["pkg/b.py"], Renderer(templates))
    assert [(e.page, e.reason.split(":")[0]) for e in summary.errors] == [("pkg/b.py_kw.md", "cannot render")]
    assert "no_such_value" in summary.errors[0].reason
    assert (ws.out / "pkg/b.py_kw.md").read_bytes() == before  # the previous page stays
    assert "pkg/b.py_docs.md" in summary.written  # the rest is written


def test_keys_follow_the_renderer(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A different renderer (code or built-in templates) re-keys every page, same version or not."""
    from repodoc_lsp.pipeline import generate as pipeline
    from repodoc_lsp.pipeline import keys

    before = {p.path: p.key for p in pipeline.plan_pages(ws, pipeline.site_of(ws))}
    monkeypatch.setattr(keys, "render_stamp", lambda: "another renderer")
    after = {p.path: p.key for p in pipeline.plan_pages(ws, pipeline.site_of(ws))}
    assert before.keys() == after.keys() and all(before[p] != after[p] for p in before)


def test_a_burst_of_created_and_deleted_files_is_one_batch_equal_to_a_fresh_tree(
        ws: Workspace, tmp_path: Path) -> None:
    """A checkout: files appear (importing each other and old files) and vanish in one batch; the
    relations are rebuilt once at its end, and the tree equals a fresh generation of the result."""
    new = []
    for i in range(60):
        rel = f"pkg{i % 3}/n{i}.py"
        (ws.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / rel).write_text(f"from pkg{(i + 1) % 3}.n{(i + 1) % 60} import f{(i + 1) % 60}\n"
                                   f"from pkg.b import f\n\n\ndef f{i}():\n    pass\n")
        new.append(rel)
    (ws.root / "other/c.py").unlink()
    rebuilt = []
    relations_class = type(ws.relations)

    class Counting(relations_class):  # type: ignore[misc,valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            rebuilt.append(1)
            super().__init__(*args, **kwargs)

    import repodoc_lsp.store.workspace as workspace_module

    original, workspace_module.Relations = workspace_module.Relations, Counting  # count, not replace
    try:
        regenerate(ws, [*new, "other/c.py"], Renderer())
    finally:
        workspace_module.Relations = original
    assert len(rebuilt) == 1
    batch = tmp_path / "batch"
    shutil.move(ws.out, batch)
    generate(ws.root, Workspace(ws.root, ws.settings))  # fresh, into the same folder

    def tree(out: Path) -> dict[str, str]:
        return {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*.md")}

    assert tree(batch) == tree(ws.out)
    assert "other/c.py_docs.md" not in tree(batch)
    assert "[`n1.py`]" in (batch / "pkg1/index.md").read_text()


def test_a_saved_gitignore_takes_files_out_and_back(ws: Workspace) -> None:
    """A `.gitignore` saved in the editor decides the inputs at once, as the next `repodoc generate` would:
    the file it now ignores loses its pages, and gets them back when the line goes."""
    (ws.root / ".gitignore").write_text("other/c.py\n")
    regenerate(ws, [".gitignore"], Renderer())
    assert "other/c.py" not in ws.facts and not (ws.out / "other/c.py_docs.md").exists()
    (ws.root / ".gitignore").write_text("")
    regenerate(ws, [".gitignore"], Renderer())
    assert "other/c.py" in ws.facts and (ws.out / "other/c.py_docs.md").exists()
