"""writer.Writer's rules, with their outcomes as values: a page is written whole and only when
it changed; a person's file, a person's edit, a link out of the folder are conflicts, never
overwritten or deleted (force: copied aside first); check mode writes nothing."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import recorded

from repodoc_lsp import MARKER
from repodoc_lsp.output.manifest import MANIFEST
from repodoc_lsp.output.writer import EDITED, UNRECORDED, Outcome, Writer


def page(text: str) -> str:
    return f"{MARKER}\n{text}\n"


def _write(out: Path, pages: dict[str, str], **kwargs: bool) -> dict[str, tuple[Outcome, str]]:
    writer = Writer(out, **kwargs)
    with writer.hold():
        results = {p: writer.write(p, text, key=text) for p, text in pages.items()}
        writer.save_manifest()
    return {p: (r.outcome, r.reason) for p, r in results.items()}


def test_written_then_unchanged_and_not_rewritten(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    assert _write(out, {"a_kw.md": page("one"), "sub/b_kw.md": page("two")}) == {
        "a_kw.md": (Outcome.WRITTEN, ""), "sub/b_kw.md": (Outcome.WRITTEN, "")}
    assert (out / "sub/b_kw.md").read_text() == page("two") and (out / MANIFEST).is_file()
    before = (out / "a_kw.md").stat().st_mtime_ns
    assert _write(out, {"a_kw.md": page("one")}) == {"a_kw.md": (Outcome.UNCHANGED, "")}
    assert (out / "a_kw.md").stat().st_mtime_ns == before
    writer = Writer(out)
    assert writer.unchanged("a_kw.md", page("one")) and not writer.unchanged("a_kw.md", "another key")
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_a_persons_file_is_never_overwritten_or_deleted(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "index.md").write_text("# My Sphinx index\n")
    (out / "folder.md").mkdir()
    results = _write(out, {"index.md": page("ours"), "folder.md": page("x"), "c_kw.md": page("c")})
    assert results["index.md"] == (Outcome.CONFLICT, "a file repodoc did not generate is in the way")
    assert results["folder.md"] == (Outcome.CONFLICT, "a folder is in the way")
    assert (out / "index.md").read_text() == "# My Sphinx index\n"
    writer = Writer(out)
    with writer.hold():
        removed, conflicts = writer.remove_stale(keep=set())
        writer.save_manifest()
    assert removed == ["c_kw.md"] and conflicts == []
    assert (out / "index.md").read_text() == "# My Sphinx index\n" and not (out / "c_kw.md").exists()


def test_an_edited_page_is_kept_until_forced_then_copied_aside(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    _write(out, {"a_kw.md": page("one"), "b_kw.md": page("b")})
    edited = page("one") + "A note a person added.\n"
    (out / "a_kw.md").write_text(edited)
    (outcome, reason), = _write(out, {"a_kw.md": page("two")}).values()
    assert outcome is Outcome.CONFLICT and reason.startswith(EDITED)
    assert (out / "a_kw.md").read_text() == edited
    assert _write(out, {"a_kw.md": page("two")}, check=True)["a_kw.md"][0] is Outcome.CONFLICT  # reported again
    assert _write(out, {"a_kw.md": page("two")}, force=True) == {
        "a_kw.md": (Outcome.WRITTEN, f"{EDITED}: copied to a_kw.md.orig")}
    assert (out / "a_kw.md").read_text() == page("two") and (out / "a_kw.md.orig").read_text() == edited
    (out / "b_kw.md").write_text(page("b") + "mine\n")  # an edited page whose source is gone
    writer = Writer(out)
    with writer.hold():
        removed, conflicts = writer.remove_stale(keep={"a_kw.md"})
    assert removed == [] and [c.page for c in conflicts] == ["b_kw.md"] and (out / "b_kw.md").exists()
    writer = Writer(out, force=True)
    with writer.hold():
        removed, _ = writer.remove_stale(keep={"a_kw.md"})
    assert removed == ["b_kw.md"] and (out / "b_kw.md.orig").read_text() == page("b") + "mine\n"


_HUGE_PAGES = """
import resource, sys
from pathlib import Path
from repodoc_lsp.output.writer import Writer
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GB: a huge page read whole fails
writer = Writer(Path(sys.argv[1]), force=sys.argv[2] == "force")
with writer.hold():
    result = writer.write("a_kw.md", sys.argv[3], key="two")
    removed, conflicts = writer.remove_stale(keep={"a_kw.md"})
    writer.save_manifest()
print(result.outcome.name, result.reason, removed, [c.page for c in conflicts], sep="|")
"""


def test_a_huge_file_behind_a_pages_marker_is_a_persons_and_never_read(tmp_path: Path) -> None:
    """A repository may ship a multi-gigabyte file (sparse here) where a page is, starting with the
    marker line: it is an edited page, kept, and with force moved aside whole, never read (before:
    read whole to compare it and copied aside, MemoryError under a 1 GB address-space limit)."""
    out = tmp_path / "docs"
    _write(out, {"a_kw.md": page("one"), "b_kw.md": page("b")})
    for name in ("a_kw.md", "b_kw.md"):
        with open(out / name, "r+b") as fh:
            fh.truncate(8 << 30)  # 8 GB past the marker line, no blocks
    size = (out / "a_kw.md").stat().st_size

    def run(force: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", _HUGE_PAGES, str(out), force, page("two")],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().split("|")

    outcome, reason, removed, conflicts = run("")
    assert outcome == "CONFLICT" and reason.startswith(EDITED) and removed == "[]" and conflicts == "['b_kw.md']"
    assert (out / "a_kw.md").stat().st_size == (out / "b_kw.md").stat().st_size == size  # kept
    outcome, reason, removed, conflicts = run("force")
    assert (outcome, reason, removed, conflicts) == (
        "WRITTEN", f"{EDITED}: copied to a_kw.md.orig", "['b_kw.md']", "[]")
    assert (out / "a_kw.md").read_text() == page("two") and not (out / "b_kw.md").exists()
    assert (out / "a_kw.md.orig").stat().st_size == (out / "b_kw.md.orig").stat().st_size == size  # whole


def test_check_mode_compares_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    _write(out, {"a_kw.md": page("one"), "gone_kw.md": page("g")})
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    results = _write(out, {"a_kw.md": page("changed"), "new_kw.md": page("n")}, check=True)
    assert results == {"a_kw.md": (Outcome.STALE, "differs"), "new_kw.md": (Outcome.STALE, "missing")}
    writer = Writer(out, check=True)
    assert writer.remove_stale(keep={"a_kw.md", "new_kw.md"}) == (["gone_kw.md"], [])
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_pages_with_the_marker_the_manifest_does_not_know_are_kept(tmp_path: Path) -> None:
    """A page with the marker but no digest recorded (a deleted manifest, a copy a person made) is not
    known to be as repodoc wrote it: no longer generated, it is a conflict and kept; force moves it
    aside. Before, the marker alone let it be deleted."""
    out = tmp_path / "docs"
    _write(out, {"a_kw.md": page("a"), "sub/old_kw.md": page("old")})
    (out / "notes.md").write_text("mine\n")
    (out / MANIFEST).unlink()
    writer = Writer(out)
    with writer.hold():
        removed, conflicts = writer.remove_stale(keep={"a_kw.md"})
        writer.save_manifest()
    assert removed == [] and [(c.page, c.reason.split(" (")[0]) for c in conflicts] == [
        ("sub/old_kw.md", f"no longer generated, but {UNRECORDED}")]
    assert (out / "sub/old_kw.md").read_text() == page("old") and "sub/old_kw.md" not in Writer(out).manifest
    writer = Writer(out, force=True)
    with writer.hold():
        assert writer.remove_stale(keep={"a_kw.md"}) == (["sub/old_kw.md"], [])
    assert (out / "sub/old_kw.md.orig").read_text() == page("old") and not (out / "sub/old_kw.md").exists()
    assert (out / "notes.md").read_text() == "mine\n"


def test_nothing_is_written_through_a_link_out_of_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("theirs\n")
    out.mkdir()
    os.symlink(elsewhere, out / "pkg")
    os.symlink(elsewhere / "x.md", out / "link.md")
    results = _write(out, {"pkg/a_kw.md": page("a"), "link.md": page("l")})
    assert results["pkg/a_kw.md"] == (Outcome.CONFLICT, "its folder links outside the output folder")
    assert results["link.md"] == (Outcome.CONFLICT, "a symbolic link is in the way")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["x.md"] and (elsewhere / "x.md").read_text() == "theirs\n"


def test_a_page_must_carry_the_marker(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="marker"):
        Writer(tmp_path / "docs").write("a_kw.md", "no marker\n", key="k")


def test_a_folder_is_opened_once_per_run_yet_another_one_put_there_meanwhile_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's folder is opened (no link followed, from the output folder down) once per folder, not for
    each of its pages; a folder moved away and replaced by another, or by a link out of the output
    folder, is opened again (and the link refused)."""
    out, elsewhere = tmp_path / "docs", tmp_path / "elsewhere"
    elsewhere.mkdir()
    opened: list[str] = []
    plain = os.open

    def counted(path: str, *args: object, **kwargs: object) -> int:
        opened.append(os.fspath(path))
        return plain(path, *args, **kwargs)  # type: ignore[arg-type]

    writer = Writer(out)
    with writer.hold():
        monkeypatch.setattr(os, "open", counted)
        for i in range(10):
            if i == 1:  # (the first page's folder: opened, not there, made, opened)
                opened.clear()
            assert writer.write(f"pkg/p{i}.md", page(str(i)), "k").outcome is Outcome.WRITTEN
        assert opened.count("pkg") == 0
        (out / "pkg").rename(tmp_path / "moved")
        (out / "pkg").mkdir()
        assert writer.write("pkg/q.md", page("q"), "k").outcome is Outcome.WRITTEN
        assert opened.count("pkg") == 1 and (out / "pkg/q.md").read_text() == page("q")
        (out / "pkg").rename(tmp_path / "moved2")
        (out / "pkg").symlink_to(elsewhere, target_is_directory=True)
        result = writer.write("pkg/r.md", page("r"), "k")
        assert (result.outcome, result.reason) == (Outcome.CONFLICT, "its folder links outside the output folder")
    assert list(elsewhere.iterdir()) == []


def test_folders_are_made_once_per_run_yet_a_link_put_there_meanwhile_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run makes each folder once (not again for each of its pages: 5,427 pages on PyTorch), and
    still checks for each page that its folder is the one it opened: a folder replaced by a link out
    of it meanwhile is a conflict, one removed meanwhile is made again."""
    out, elsewhere = tmp_path / "docs", tmp_path / "elsewhere"
    elsewhere.mkdir()
    writer = Writer(out)
    with writer.hold():
        made = recorded(monkeypatch, os, "mkdir", key=os.fspath)
        for i in range(10):
            assert writer.write(f"pkg/sub/p{i}.md", page(str(i)), "k").outcome is Outcome.WRITTEN
        assert [m for m in made if not os.path.isabs(m)] == ["pkg", "sub"]  # (and the output folder)
        shutil.rmtree(out / "pkg")
        (out / "pkg").symlink_to(elsewhere, target_is_directory=True)
        for name in ("pkg/sub/x.md", "pkg/y.md"):  # its folder would have to be made out there; is out there
            result = writer.write(name, page("x"), "k")
            assert (result.outcome, result.reason) == (Outcome.CONFLICT, "its folder links outside the output folder")
        (out / "pkg").unlink()
        assert writer.write("pkg/sub/z.md", page("z"), "k").outcome is Outcome.WRITTEN
        writer.save_manifest()
    assert list(elsewhere.iterdir()) == []
    assert (out / "pkg/sub/z.md").read_text() == page("z")


def test_the_output_folder_is_checked_once_not_again_for_each_new_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The output folder is made (or found to be one) when the run takes it; a page in a new folder makes that
    folder only, from the output folder's open descriptor, and its pages are written there."""
    out = tmp_path / "docs"
    writer = Writer(out)
    with writer.hold():
        made = recorded(monkeypatch, os, "mkdir", key=os.fspath)
        for i in range(5):
            assert writer.write(f"p{i}/a_kw.md", page(str(i)), "k").outcome is Outcome.WRITTEN
        assert made == [f"p{i}" for i in range(5)]
        writer.save_manifest()
    assert [(out / f"p{i}/a_kw.md").read_text() for i in range(5)] == [page(str(i)) for i in range(5)]


@pytest.mark.parametrize("call", ["open", "mkdir"])
def test_a_folder_the_system_will_not_open_or_make_is_an_error_not_a_link(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str) -> None:
    """A page's folder that the system refuses to open (permissions, no descriptor left) or to make (a full or
    read-only disk): an error saying why, not a conflict claiming a link out of the output folder."""
    out = tmp_path / "docs"
    (out / "pkg").mkdir(parents=True) if call == "open" else out.mkdir()
    plain, code = getattr(os, call), errno.EACCES if call == "open" else errno.EROFS

    def refused(path: str, *args: object, **kwargs: object) -> object:
        if os.fspath(path) == "pkg":
            raise OSError(code, os.strerror(code), path)
        return plain(path, *args, **kwargs)

    writer = Writer(out)
    with writer.hold():
        monkeypatch.setattr(os, call, refused)
        result = writer.write("pkg/a_kw.md", page("a"), "k")
    assert (result.outcome, result.reason) == (Outcome.ERROR, f"cannot write: {os.strerror(code)}")
    assert not (out / "pkg/a_kw.md").exists()


@pytest.mark.parametrize("away", ["moved inside", "deleted"])
def test_a_folder_swapped_for_a_link_between_check_and_write_cannot_redirect_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, away: str) -> None:
    """The folder of a page is replaced by a link out of the output folder after the writer found it
    inside, before it writes (here: while it appends to its journal): the page is written in the
    folder it opened, or (that folder deleted) not at all, never through the link."""
    out, elsewhere = tmp_path / "docs", tmp_path / "elsewhere"
    elsewhere.mkdir()
    writer = Writer(out)
    with writer.hold():
        assert writer.write("pkg/a_kw.md", page("a"), "k").outcome is Outcome.WRITTEN
        note = writer.state.note

        def swap(page_name: str, digest: str) -> None:
            if page_name == "pkg/b_kw.md" and not (out / "pkg").is_symlink():
                if away == "deleted":
                    shutil.rmtree(out / "pkg")
                else:
                    (out / "pkg").rename(out / "old")
                (out / "pkg").symlink_to(elsewhere, target_is_directory=True)
            note(page_name, digest)
        monkeypatch.setattr(writer.state, "note", swap)
        result = writer.write("pkg/b_kw.md", page("b"), "k")
    assert list(elsewhere.iterdir()) == []
    if away == "deleted":
        assert (result.outcome, result.reason) == (Outcome.CONFLICT, "its folder links outside the output folder")
    else:
        assert result.outcome is Outcome.WRITTEN and (out / "old/b_kw.md").read_text() == page("b")


def test_a_large_manifest_is_deflated_in_pieces_at_once_as_one_gzip_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON longer than a piece is deflated a piece per thread (`manifest._gzip`): one gzip stream that
    gzip and `decode_manifest` read whole, the same bytes each time; up to a piece, zlib's own bytes."""
    import gzip
    import json
    import threading
    import zlib

    from repodoc_lsp.output import manifest as manifest_module
    from repodoc_lsp.output.manifest import decode_manifest, encode_manifest

    table: dict[str, object] = {"generator": "repodoc-lsp test", "pages": {
        f"pkg/m{i}.py_docs.md": [f"{i * 7919:032x}", i, i * 1000003, f"{i * 104729:032x}"] for i in range(3000)}}
    data = json.dumps(table, separators=(",", ":"), ensure_ascii=False).encode()
    assert encode_manifest(table) == zlib.compress(data, level=1, wbits=31)  # one piece
    monkeypatch.setattr(manifest_module, "_PIECE", len(data) // 3 + 1)  # three pieces: two threads
    threads: list[str] = []
    start = threading.Thread.start

    def counted(self: threading.Thread) -> None:
        threads.append(self.name)
        start(self)
    monkeypatch.setattr(threading.Thread, "start", counted)
    encoded = encode_manifest(table)
    assert threads == ["repodoc-manifest-deflate"] * 2
    assert encoded != zlib.compress(data, level=1, wbits=31) and encoded == encode_manifest(table)
    assert gzip.decompress(encoded) == data and decode_manifest(encoded) == table
    assert encoded[:10] == zlib.compress(data, level=1, wbits=31)[:10]  # the same header


def test_a_piece_that_cannot_be_deflated_leaves_no_hole_in_the_manifest(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread's deflate that fails (MemoryError) would have left its piece out of the gzip
    stream: a manifest gzip cannot read. The piece is then deflated again: the same bytes."""
    import gzip
    import json
    import threading
    import zlib

    from repodoc_lsp.output import manifest as manifest_module
    from repodoc_lsp.output.manifest import encode_manifest

    table: dict[str, object] = {"pages": {f"m{i}.md": [f"{i:032x}", i] for i in range(3000)}}
    data = json.dumps(table, separators=(",", ":"), ensure_ascii=False).encode()
    monkeypatch.setattr(manifest_module, "_PIECE", len(data) // 3 + 1)
    whole = encode_manifest(table)  # three pieces, none failing
    real = zlib.compressobj

    def failing(*args: object) -> object:
        if threading.current_thread() is not threading.main_thread():
            raise MemoryError
        return real(*args)  # type: ignore[arg-type]
    monkeypatch.setattr(zlib, "compressobj", failing)
    encoded = encode_manifest(table)
    assert gzip.decompress(encoded) == data
    assert encoded == whole


def test_the_writer_and_the_manifest_know_nothing_of_rendering() -> None:
    """The output reads what a page is named and what the manifest keeps of its anchors
    (`anchor_state.py`), never how pages are rendered (`render/anchors.py` was imported for the state)."""
    from test_layout import import_graph

    graph = import_graph()
    for module in ("repodoc_lsp.output.writer", "repodoc_lsp.output.manifest"):
        assert {m for m in graph[module] if m.startswith("repodoc_lsp.render.")} <= {"repodoc_lsp.render.parts"}, module
    assert "repodoc_lsp.output.manifest" not in graph["repodoc_lsp.anchor_state"]


def test_a_large_manifest_is_encoded_as_it_is_streamed_with_the_same_bytes(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest of a large tree (a merge of a million files' shares) was encoded whole: a JSON-ready copy
    of every record and anchors, their JSON, then gzip, 2 to 3 times its JSON held at once. It is now made a
    batch of entries at a time, deflated a piece at a time: the bytes are those of the whole table's JSON
    deflated in the same pieces, and less than its JSON is held while it is encoded."""
    import json
    import tracemalloc
    import zlib

    from repodoc_lsp import __version__
    from repodoc_lsp.anchor_state import AnchorState
    from repodoc_lsp.output import manifest as manifest_module
    from repodoc_lsp.output.manifest import Manifest

    manifest = Manifest(tmp_path)
    for i in range(20000):
        page = f"pkg/é{i % 97}/m{i}.py_docs.md"  # not ASCII: pieces cut inside a character
        manifest.pages[page] = (f"{i * 7919:032x}", i, i * 1000003, f"{i * 104729:032x}")
        if i % 3 == 0:
            manifest.anchors[page] = AnchorState(src=f"pkg/m{i}.py", defs=f"function-f{i}:1f2e3d4c", aliases={"a": "b"})
    manifest.anchors["gone.py_docs.md"] = AnchorState(src="gone.py")  # no page: left out
    manifest.inputs = "f" * 32
    table = {"generator": f"repodoc-lsp {__version__}", "pages": dict(sorted(manifest.pages.items())),
             "inputs": manifest.inputs, "anchors": {page: state.as_json() for page, state
                                                    in sorted(manifest.anchors.items()) if page in manifest.pages}}
    data = json.dumps(table, separators=(",", ":"), ensure_ascii=False).encode()
    piece = 1 << 16
    monkeypatch.setattr(manifest_module, "_PIECE", piece)
    header = bytes((0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 4, 3))
    deflated = []
    for start in range(0, len(data), piece):  # as the whole JSON was deflated before
        deflate = zlib.compressobj(1, zlib.DEFLATED, -15)
        last = start + piece >= len(data)
        deflated.append(deflate.compress(data[start:start + piece]) +
                        deflate.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH))
    whole = b"".join((header, *deflated, (zlib.crc32(data)).to_bytes(4, "little"), len(data).to_bytes(4, "little")))
    del table, deflated
    tracemalloc.start()
    try:
        encoded = manifest.encoded()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert encoded == whole
    assert peak < len(data), (peak, len(data))  # whole, about 4 times its JSON
