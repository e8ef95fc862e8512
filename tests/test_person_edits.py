"""A person's edit of a generated page is never lost; a page with the marker is deleted only as
repodoc wrote it, its digest recorded (the CLI's entry point, run in this process: `cli_here`)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import cli_here, generate_json, make_workspace

from repodoc_lsp.output.manifest import MANIFEST


def _edit(page: Path) -> str:
    text = page.read_text() + "\nA note a person added.\n"
    page.write_text(text)
    return text


def test_an_edited_page_is_a_conflict_until_forced(tmp_path: Path, cache_env: dict[str, str]) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    generate_json(root, cache_env)
    page = root / "docs/a.py_docs.md"
    edited = _edit(page)
    (root / "a.py").write_text("x = 2\n\n\ndef f():\n    pass\n")  # the page would change
    proc = cli_here("generate", str(root), env=cache_env)
    assert proc.returncode == 0, proc.stderr
    assert "conflict:" in proc.stderr and "a.py_docs.md: changed since repodoc wrote it" in proc.stderr
    assert page.read_text() == edited
    assert "**`f`**" in (root / "docs/a.py_kw.md").read_text()  # the rest is written
    check = cli_here("generate", str(root), "--check", env=cache_env)
    assert check.returncode == 1 and "1 conflict," in check.stdout
    forced = cli_here("generate", str(root), "--force", "--json", env=cache_env)
    assert forced.returncode == 0, forced.stderr
    summary = json.loads(forced.stdout)
    assert summary["setAside"] == [{"path": "a.py_docs.md",
                                    "reason": "changed since repodoc wrote it: copied to a.py_docs.md.orig"}]
    assert (root / "docs/a.py_docs.md.orig").read_text() == edited
    assert "A note a person added." not in page.read_text() and "f()" in page.read_text()
    assert cli_here("generate", str(root), "--check", env=cache_env).returncode == 0


def test_an_edited_page_of_a_deleted_source_stays(tmp_path: Path, cache_env: dict[str, str]) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    generate_json(root, cache_env)
    page = root / "docs/b.py_kw.md"
    edited = _edit(page)
    (root / "b.py").unlink()
    summary = generate_json(root, cache_env)
    assert summary["removedPages"] == ["b.py_docs.md"]
    assert [c["path"] for c in summary["conflicts"]] == ["b.py_kw.md"]
    assert page.read_text() == edited
    assert generate_json(root, cache_env)["conflicts"] != []  # reported again, never forgotten
    forced = generate_json(root, cache_env, "--force")
    assert forced["removedPages"] == ["b.py_kw.md"] and not page.exists()
    assert (root / "docs/b.py_kw.md.orig").read_text() == edited


def test_pages_of_deleted_sources_the_manifest_does_not_know_are_kept(tmp_path: Path,
                                                                     cache_env: dict[str, str]) -> None:
    """The manifest deleted, pages with the marker whose sources are gone are not known to be as
    repodoc wrote them (a person may have edited them): conflicts, kept (`--check` fails), until
    `--force` moves them aside. The pages of sources still there are written as before."""
    root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n", "sub/c.py": "z = 3\n", "docs/notes.md": "mine\n",
                                            "pyproject.toml": '[tool.repodoc]\noutput = "docs"\n'})
    generate_json(root, cache_env)
    (root / "docs" / MANIFEST).unlink()
    (root / "sub/c.py").unlink()
    gone = ["sub/c.py_docs.md", "sub/c.py_kw.md", "sub/doc.md", "sub/index.md"]
    before = {page: (root / "docs" / page).read_bytes() for page in gone}
    check = cli_here("generate", str(root), "--check", env=cache_env)
    assert check.returncode == 1 and "would be removed" not in check.stdout
    summary = generate_json(root, cache_env)
    assert summary["removedPages"] == [] and sorted(c["path"] for c in summary["conflicts"]) == gone
    assert {c["reason"].split(" (")[0] for c in summary["conflicts"]} == {
        "no longer generated, but not recorded as repodoc wrote it"}
    assert {page: (root / "docs" / page).read_bytes() for page in gone} == before
    forced = generate_json(root, cache_env, "--force")
    assert sorted(forced["removedPages"]) == gone and not (root / "docs/sub/c.py_docs.md").exists()
    assert (root / "docs/sub/c.py_docs.md.orig").read_bytes() == before["sub/c.py_docs.md"]
    assert (root / "docs/notes.md").read_text() == "mine\n"
    assert cli_here("generate", str(root), "--check", env=cache_env).returncode == 0
