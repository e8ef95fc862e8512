"""`repodoc merge` links a share's page into the merged folder (a second name of the same file, nothing
written again) where no file is in its place; otherwise the writer's rules decide: a person's edited page
is a conflict and kept, a page of another mode or on another file system is written. A page found damaged
after others were linked stops the merge there, the damaged page not left in the tree."""

from __future__ import annotations

import errno
import itertools
import os
import shutil
import stat
from pathlib import Path

import pytest
from helpers import read_manifest
from test_shards import Setup, _tree, _without_times

from repodoc_lsp.output.manifest import MANIFEST
from repodoc_lsp.output.modes import PAGE_MODE
from repodoc_lsp.shard import merge as merging
from repodoc_lsp.shard.merge import MergeStopped, merge
from repodoc_lsp.shard.pages import manifest_copy_name


class Shares:
    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.folders = [setup.pages(1, 2), setup.pages(2, 2)]

    def copies(self, base: Path) -> list[Path]:
        """Copies of the two shares (a test that damages one works on its own); no merged folder yet."""
        shutil.rmtree(self.setup.out, ignore_errors=True)
        return [shutil.copytree(f, base / f.name, symlinks=True) for f in self.folders]


@pytest.fixture(scope="module")
def shares(tmp_path_factory: pytest.TempPathFactory) -> Shares:
    return Shares(Setup(tmp_path_factory.mktemp("merge-links")))


def _pages(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.md"))


def _share_of(folders: list[Path], page: str) -> Path:
    return next(f / page for f in folders if (f / page).exists())


def _complete_tree(setup: Setup, out: Path) -> None:
    assert _tree(out) == _tree(setup.single)
    assert _without_times(read_manifest(out)) == _without_times(read_manifest(setup.single))


def test_merged_pages_are_the_shares_files_linked_and_the_shares_left_whole(shares: Shares, tmp_path: Path) -> None:
    setup, folders = shares.setup, shares.copies(tmp_path)
    before = [_tree(f) for f in folders]
    out = setup.out
    setup.ok("merge", *map(str, folders), "--out", str(out))
    _complete_tree(setup, out)
    pages = _pages(out)
    assert pages and all(os.path.samefile(out / page, _share_of(folders, page)) for page in pages)
    assert all(stat.S_IMODE((out / page).stat().st_mode) == PAGE_MODE for page in pages)
    assert [_tree(f) for f in folders] == before  # the shares are left whole: merged again, nothing to write
    assert "(0 written, " in setup.ok("merge", *map(str, folders), "--out", str(out))
    assert "up to date" in setup.ok("generate", str(setup.root), *setup.flags, "--facts", *setup.facts, "--check")
    shutil.rmtree(out)


def test_a_merge_whose_manifest_cannot_be_written_fails(shares: Shares, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The merged tree is its manifest: a merge that cannot write it (a full disk) says so, never reports a merge
    whose tree no later `--check` or run can vouch for (the writer's failure was silent)."""
    from repodoc_lsp.output import writer
    from repodoc_lsp.output.writer import OutputError

    folders, out = shares.copies(tmp_path), shares.setup.out
    real = writer.write_atomically

    def full_disk(folder: int, name: str, data: bytes) -> os.stat_result:
        if name == MANIFEST:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(folder, name, data)
    monkeypatch.setattr(writer, "write_atomically", full_disk)
    with pytest.raises(OutputError, match="cannot write the merged manifest"):
        merge(folders, out)
    shutil.rmtree(out)


def test_pages_the_writer_decides_are_not_linked(shares: Shares, tmp_path: Path) -> None:
    """A person's edited page in the output folder: a conflict, kept; a share's page of another mode: written."""
    setup, folders = shares.setup, shares.copies(tmp_path)
    out = setup.out
    merge(folders, out)
    edited, other_mode = _pages(out)[:2]
    (out / edited).unlink()  # an editor's save: a new file in its place (the share's page is not touched)
    (out / edited).write_text((setup.single / edited).read_text() + "A person's note.\n")
    person = (out / edited).read_bytes()
    (out / other_mode).unlink()
    _share_of(folders, other_mode).chmod(0o600)
    summary = merge(folders, out)
    assert [c.page for c in summary.conflicts] == [edited] and summary.written == [other_mode]
    assert (out / edited).read_bytes() == person  # never lost
    assert not os.path.samefile(out / other_mode, _share_of(folders, other_mode))
    assert stat.S_IMODE((out / other_mode).stat().st_mode) == PAGE_MODE
    assert (out / other_mode).read_bytes() == (setup.single / other_mode).read_bytes()
    assert not read_manifest(out).get("inputs")  # a conflict: not the complete tree
    shutil.rmtree(out)


def test_no_links_between_the_folders_writes_every_page(shares: Shares, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another file system (EXDEV): one link tried per share, then the writer writes; the same tree."""
    setup, folders = shares.setup, shares.copies(tmp_path)
    tried: list[str] = []

    def no_link(src: str, *_args: object, **_kwargs: object) -> None:
        tried.append(src)
        raise OSError(errno.EXDEV, "Invalid cross-device link")
    monkeypatch.setattr(merging.os, "link", no_link)
    summary = merge(folders, setup.out)
    assert len(tried) == 2 and len(summary.written) == summary.pages
    _complete_tree(setup, setup.out)
    assert not any(os.path.samefile(setup.out / p, _share_of(folders, p)) for p in _pages(setup.out))
    shutil.rmtree(setup.out)


def test_a_page_damaged_after_pages_were_linked_stops_the_merge_there(shares: Shares, tmp_path: Path) -> None:
    setup, (one, two) = shares.setup, shares.copies(tmp_path)
    out = setup.out
    damaged = _pages(two)[-1]
    data = (two / damaged).read_bytes()
    (two / damaged).write_bytes(data[:-2] + b"X\n")  # its size is right: found as it is merged
    with pytest.raises(MergeStopped, match=f"{two} \\(pages 2/2\\): {damaged}: not the page its run wrote"):
        merge([one, two], out)
    assert not (out / damaged).exists()  # the link undone
    merged = read_manifest(out)
    assert not merged.get("inputs") and damaged not in merged["pages"]
    assert set(_pages(out)) <= set(merged["pages"])  # the pages linked before it stopped, recorded
    assert _pages(out) and all(os.path.samefile(out / p, _share_of([one, two], p)) for p in _pages(out))
    (two / damaged).write_bytes(data)
    merge([one, two], out)  # merged again once the share is whole: the complete tree
    _complete_tree(setup, out)
    assert (out / MANIFEST).exists() and read_manifest(out)["inputs"]
    shutil.rmtree(out)


def test_a_merge_interrupted_says_so_and_the_next_one_completes_the_tree(shares: Shares, tmp_path: Path) -> None:
    """Ctrl-C during a merge: one line saying what is left (not "before any work"), exit 130; merged again,
    the tree is complete. The interrupt is sent by the process itself once the first page is linked."""
    import subprocess
    import sys

    setup, folders = shares.setup, shares.copies(tmp_path)
    script = ("import os, signal, sys\n"
              "from repodoc_lsp.shard import merge as m\n"
              "real = m._linked\n"
              "def linked(*a, **k):\n"
              "    result = real(*a, **k)\n"
              "    os.kill(os.getpid(), signal.SIGINT)\n"
              "    return result\n"
              "m._linked = linked\n"
              "from repodoc_lsp.cli import main\n"
              "sys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", script, "merge", *map(str, folders), "--out", str(setup.out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert "merge interrupted" in proc.stderr and "before any work" not in proc.stderr
    assert not (setup.out / MANIFEST).exists() or not read_manifest(setup.out).get("inputs")  # not vouched for
    setup.ok("merge", *map(str, folders), "--out", str(setup.out))
    _complete_tree(setup, setup.out)


def test_each_shares_manifest_is_read_once_and_a_new_folder_is_not_walked(shares: Shares, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The serial part of a merge: each share's manifest decoded once (the check before writing holds it for the
    merge), the merged folder walked for stale pages only when it held something before; a stale page of a
    folder merged into again is still deleted."""
    from repodoc_lsp.output.manifest import Manifest
    from repodoc_lsp.output.writer import Writer

    setup, folders = shares.setup, shares.copies(tmp_path)
    loads: list[Path] = []
    walks: list[Path] = []
    real_load, real_unknown = Manifest.load, Writer._unknown_pages

    def load(self: Manifest) -> None:
        loads.append(self.out)
        real_load(self)

    def unknown(self: Writer, keep: set[str]) -> list[str]:
        walks.append(self.out)
        return real_unknown(self, keep)
    monkeypatch.setattr(Manifest, "load", load)
    monkeypatch.setattr(Writer, "_unknown_pages", unknown)
    out = setup.out
    merge(folders, out)
    _complete_tree(setup, out)
    assert sorted(p for p in loads if p != out) == sorted(folders) and not walks
    stale = out / "pkg/gone.py_docs.md"
    shutil.copy(out / "pkg/a.py_docs.md", stale)  # a page of a file since deleted, as repodoc wrote it
    manifest = Writer(out)
    manifest.manifest["pkg/gone.py_docs.md"] = manifest.manifest["pkg/a.py_docs.md"]
    manifest.inputs = ""
    manifest.save_manifest()
    summary = merge(folders, out)
    assert walks == [out.resolve()] and summary.removed == ["pkg/gone.py_docs.md"] and not stale.exists()
    _complete_tree(setup, out)
    shutil.rmtree(out)


def test_the_journal_is_written_a_folder_of_pages_at_a_time(shares: Shares, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Before a folder's pages are linked (those in a row in the share's order), their digests go to the writer's
    journal in one write (a write per page was a third of a merged page's system calls); every page is in it."""
    from repodoc_lsp.output.manifest import Manifest

    setup, folders = shares.setup, shares.copies(tmp_path)
    writes: list[list[str]] = []
    real = Manifest.note_many

    def noted(self: Manifest, pages: object) -> None:
        held = list(pages)  # type: ignore[call-overload]
        writes.append([page for page, _digest in held])
        real(self, held)
    monkeypatch.setattr(Manifest, "note_many", noted)
    merge(folders, setup.out)
    _complete_tree(setup, setup.out)
    merged = sorted(read_manifest(setup.out)["pages"])
    assert sorted(p for w in writes for p in w) == merged
    parents = [[page.rpartition("/")[0] for page in sorted(read_manifest(f)["pages"])] for f in folders]
    runs = sum(1 + sum(a != b for a, b in itertools.pairwise(p)) for p in parents)  # a folder's pages in a row
    assert len(writes) == runs < len(merged)
    shutil.rmtree(setup.out)


def _downloaded(folders: list[Path], out: Path) -> dict[str, int]:
    """The shares copied into one folder as a CI's `merge-multiple` downloads them (one share's manifest over
    another's); each file's inode."""
    for folder in folders:
        shutil.copytree(folder, out, dirs_exist_ok=True)
    return {p.relative_to(out).as_posix(): p.stat().st_ino for p in out.rglob("*") if p.is_file()}


def test_shares_downloaded_into_one_folder_merge_in_place_to_the_tree_one_run_writes(shares: Shares,
                                                                                     tmp_path: Path) -> None:
    setup, folders = shares.setup, shares.copies(tmp_path)
    out = setup.out
    inodes = _downloaded(folders, out)
    code, _out, err = setup.run("merge", str(out), "--out", str(tmp_path / "elsewhere"))
    assert code == 2 and "holds the notes of 2 page shares (downloaded into one folder: merge it with --in-place" in err
    said = setup.ok("merge", "--in-place", "--out", str(out))
    assert f"2 page shares merged in place: {len(read_manifest(out)['pages'])} pages verified, none written" in said
    _complete_tree(setup, out)  # the notes and manifest copies gone, the manifest the merged one
    assert all((out / page).stat().st_ino == inodes[page] for page in _pages(out))  # no page written again
    assert "up to date" in setup.ok("generate", str(setup.root), *setup.flags, "--facts", *setup.facts, "--check")
    code, _out, err = setup.run("merge", str(folders[0]), "--in-place", "--out", str(out))
    assert code == 2 and "or --in-place" in err
    shutil.rmtree(out)


def test_merge_in_place_refuses_a_missing_share_a_damaged_page_or_a_file_of_no_share(shares: Shares,
                                                                                    tmp_path: Path) -> None:
    """Each refused naming the share or the file, nothing written: the folder keeps the manifest the download
    left (a share's, which vouches for no tree) and the notes, so once what is missing is there it merges."""
    setup, (one, two) = shares.setup, shares.copies(tmp_path)
    out = setup.out

    def refused(*expected: str) -> None:
        before = (out / MANIFEST).read_bytes()
        code, _out, err = setup.run("merge", "--in-place", "--out", str(out))
        assert code == 2, err
        assert all(e in err for e in expected) and "nothing written" in err, err
        assert (out / MANIFEST).read_bytes() == before and not read_manifest(out).get("inputs")

    _downloaded([one], out)
    refused("page share 2/2 missing")
    _downloaded([two], out)
    page = _pages(two)[-1]
    data = (out / page).read_bytes()
    (out / page).unlink()  # (a file of its own: the share's copy stays whole)
    (out / page).write_bytes(data[:-2] + b"X\n")  # its size is right
    refused(f"{out.resolve()} (pages 2/2): {page}: not the page its run wrote (damaged)")
    assert setup.run("generate", str(setup.root), *setup.flags, "--facts", *setup.facts, "--check")[0] != 0
    (out / page).unlink()
    refused(f"{out.resolve()} (pages 2/2): {page}: cannot be read")
    (out / page).write_bytes(data)
    (out / "pkg/gone.py_docs.md").write_bytes(data)  # a page of an earlier tree, in no share's manifest
    refused("1 page of no page share's manifest (pkg/gone.py_docs.md)")
    (out / "pkg/gone.py_docs.md").unlink()
    (out / "pkg/notes.txt").write_text("a person's\n")  # not named as a page: left as it is
    copy = out / manifest_copy_name((1, 2))
    kept = copy.read_bytes()
    copy.write_bytes(b"garbage")
    refused(f"{out.resolve()} (pages 1/2): its manifest is not the one its run wrote")
    copy.write_bytes(kept)
    setup.ok("merge", "--in-place", "--out", str(out))
    (out / "pkg/notes.txt").unlink()
    _complete_tree(setup, out)
    shutil.rmtree(out)


def test_more_page_shares_than_folders_merge_in_place_too(shares: Shares, tmp_path: Path) -> None:
    """A share of no page (more shares than folders) still leaves its note and an empty manifest's copy; every
    share downloaded into one folder merges to the tree."""
    setup = shares.setup
    folders = [setup.pages(k, 9) for k in range(1, 10)]
    assert any(not _pages(f) for f in folders)
    _downloaded(folders, setup.out)
    setup.ok("merge", "--in-place", "--out", str(setup.out))
    _complete_tree(setup, setup.out)
    shutil.rmtree(setup.out)
    setup.ok("merge", *map(str, folders), "--out", str(setup.out))
    _complete_tree(setup, setup.out)
    shutil.rmtree(setup.out)
    for folder in folders:
        shutil.rmtree(folder)
