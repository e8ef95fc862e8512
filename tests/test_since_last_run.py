"""`repodoc generate` after a one-file edit re-plans only the pages the edit can alter (the server's
change propagation, from what the last complete run knew: `lastrun`), in the CLI's own entry point;
a damaged or forged state means a full run. Incremental == fresh over random edits:
tests/test_incremental.py."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from pathlib import Path

import pytest
from edits import differences, tree
from helpers import make_workspace

from repodoc_lsp import cli
from repodoc_lsp.pipeline import lastrun
from repodoc_lsp.render.pages import GATHER

FILES = {
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/a.py": "from pkg.b import f\n\n\ndef g():\n    return f()\n",
    "pkg/b.py": '"""B."""\n\n\ndef f():\n    """Eff."""\n',
    "pkg/leaf.py": "def alone():\n    return 1\n",
    "other/c.py": "import os\n\n\nclass C:\n    pass\n",
    "other/d.py": "from other.c import C\n\n\nclass D(C):\n    pass\n",
    "README.md": "# Demo\n",
}


def _cli(*args: str) -> str:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
        code = cli.main(list(args))
    assert code == 0 or (code == 1 and "--check" in args), out.getvalue() + err.getvalue()
    return out.getvalue()


@pytest.fixture
def gathered(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every (kind, subject) whose inputs are gathered from now on (planned or rendered)."""
    seen: list[tuple[str, str]] = []
    for kind, gather in list(GATHER.items()):
        monkeypatch.setitem(GATHER, kind, lambda site, subject, kind=kind, gather=gather:
                            seen.append((kind, subject)) or gather(site, subject))
    return seen


def _generate(root: Path, cache: Path, *flags: str) -> dict:
    return json.loads(_cli("generate", str(root), "--cache-dir", str(cache), "--json", *flags))


def _fresh(root: Path, tmp_path: Path) -> dict[str, bytes]:
    copy = make_workspace(tmp_path / "fresh" / root.name, {rel: (root / rel).read_text() for rel in FILES})
    _cli("generate", str(copy), "--no-cache", "--quiet")
    return tree(copy / "docs")


def test_a_one_file_edit_plans_only_its_pages(tmp_path: Path, gathered: list[tuple[str, str]]) -> None:
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    first = _generate(root, cache)
    assert first["written"] == 2 * 7 + 2 * 3 + 1 and len(gathered) >= first["written"]  # and llms.txt
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    gathered.clear()
    check = _generate(root, cache, "--check")
    stale = {s["path"] for s in check["stale"]}
    assert stale == {"pkg/leaf.py_docs.md"}  # its source is embedded
    # the file's pages, its folder's and their parent's (sub-folder purposes), and llms.txt: not the 21 pages
    assert {subject for _kind, subject in gathered} <= {"pkg/leaf.py", "pkg", ""}, gathered
    gathered.clear()
    again = _generate(root, cache)
    assert set(again["writtenPages"]) == stale and again["unchanged"] == first["written"] - len(stale)
    assert {subject for _kind, subject in gathered} <= {"pkg/leaf.py", "pkg", ""}, gathered
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []
    gathered.clear()
    assert _generate(root, cache, "--check")["stale"] == [] and gathered == []


def _state(root: Path, cache: Path) -> Path:
    return lastrun.state_path(cache, root.resolve(), (root / "docs").resolve())


def test_a_damaged_or_forged_state_means_a_full_run(tmp_path: Path, gathered: list[tuple[str, str]]) -> None:
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    first = _generate(root, cache)
    state = _state(root, cache)
    files = json.loads(gzip.decompress(state.read_bytes()))["files"]
    # well formed, its digests in the cache, but not the tree's: the manifest does not vouch for it
    files["pkg/a.py"], files["other/c.py"] = files["other/c.py"], files["pkg/a.py"]
    for n, damaged in enumerate([b"\x1f\x8b not gzip",
                                 gzip.compress(json.dumps({"version": lastrun.VERSION, "files": files}).encode())]):
        state.write_bytes(damaged)
        (root / "pkg/leaf.py").write_text(f"def alone():\n    return {n + 2}\n")
        gathered.clear()
        _generate(root, cache)
        assert len(set(gathered)) == first["written"]  # every page planned
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []


def test_a_state_is_read_within_bounds(tmp_path: Path) -> None:
    path = tmp_path / "state.json.gz"
    lastrun.save(path, {"a.py": "d1"}, {"a.py": (1, 2, 3, 4), "gone.py": (1, 2, 3, 4)}, 5)
    last = lastrun.load(path)
    assert last is not None and last.files == {"a.py": "d1"} and last.seen.stats == {"a.py": (1, 2, 3, 4)}
    path.write_bytes(gzip.compress(b" " * (lastrun.MAX_BYTES + 1)))  # inflates past the bound
    assert lastrun.load(path) is None
    for table in ({"version": 0, "files": {}}, {"version": lastrun.VERSION, "files": {"a.py": 1}}, []):
        path.write_bytes(gzip.compress(json.dumps(table).encode()))
        assert lastrun.load(path) is None


def test_a_run_reads_only_the_files_whose_stat_moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The state keeps each file's stat as the scan found it: the next scan reads and digests only the files
    whose stat moved, a file written again with its size and modification time put back among them (its
    status change time moved); the tree stays equal to a fresh run's."""
    import os

    from repodoc_lsp.store import scan

    monkeypatch.setattr(scan, "RACY_NS", 0)  # the files were written just now: trusted all the same
    read: list[str] = []
    real = scan.read_regular
    monkeypatch.setattr(scan, "read_regular", lambda path: read.append(Path(path).name) or real(path))
    root, cache = make_workspace(tmp_path / "ws", FILES), tmp_path / "cache"
    _generate(root, cache)
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    b = root / "pkg/b.py"
    before = b.stat()
    b.write_text(b.read_text().replace("Eff", "Fee"))  # the same size
    os.utime(b, ns=(before.st_atime_ns, before.st_mtime_ns))
    read.clear()
    written = _generate(root, cache)["writtenPages"]
    assert sorted(read) == ["b.py", "leaf.py"] and "pkg/b.py_docs.md" in written, (read, written)
    read.clear()
    assert _generate(root, cache)["written"] == 0 and read == []
    monkeypatch.setattr(scan, "read_regular", real)
    assert differences(tree(root / "docs"), _fresh(root, tmp_path)) == []


def _fresh_of(root: Path, tmp_path: Path, name: str) -> dict[str, bytes]:
    """The tree a fresh run writes of `root`'s files as they are now (a copy of the same name)."""
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
             if p.is_file() and "docs" not in p.relative_to(root).parts}
    copy = make_workspace(tmp_path / name / root.name, files)
    _cli("generate", str(copy), "--no-cache", "--quiet")
    return tree(copy / "docs")


def test_folders_of_skipped_files_follow_the_files(tmp_path: Path) -> None:
    """A folder holding only a file read but skipped (binary content) has pages; when that file goes, or
    one appears in a new folder while another file is edited, the next run's tree is a fresh run's (the
    unchanged-run shortcut and the one-file plan kept the gone folder's pages, and missed the new one's)."""
    root = make_workspace(tmp_path / "ws", {**FILES, "data/sub/blob.dat": b"\x00\x01bin\x00"})
    cache = tmp_path / "cache"
    _generate(root, cache)
    assert (root / "docs/data/sub/index.md").is_file()
    (root / "data/sub/blob.dat").unlink()
    _generate(root, cache)
    assert differences(tree(root / "docs"), _fresh_of(root, tmp_path, "f1")) == []
    (root / "pkg/leaf.py").write_text("def alone():\n    return 2\n")
    make_workspace(root, {"more/z.dat": b"\x00z\x00"})
    _generate(root, cache)
    assert (root / "docs/more/index.md").is_file()
    assert differences(tree(root / "docs"), _fresh_of(root, tmp_path, "f2")) == []


def test_a_batch_of_skipped_files_moves_the_folders(tmp_path: Path) -> None:
    """The server's path: a read-but-skipped file that vanishes or appears is a structural change whose
    folders are the scan's (its folder's pages go or come)."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.store.workspace import Workspace
    root = make_workspace(tmp_path / "ws", {**FILES, "data/blob.dat": b"\x00\x01bin\x00"})
    ws = Workspace(root, Settings())
    assert ws.scan()
    assert "data" in ws.folders
    (root / "data/blob.dat").unlink()
    change = ws.update_files(["data/blob.dat"])
    assert change.structural and "data" not in ws.folders
    make_workspace(root, {"more/z.dat": b"\x00z\x00"})
    assert ws.update_files(["more/z.dat"]).structural and "more" in ws.folders
