"""The manifest (`docs/.repodoc-manifest.json.gz`) arrives with a checkout: it is data, never orders.
A key that is not a page repodoc writes (`../..`, absolute) makes it damaged (one warning, rebuilt);
a page is deleted only as repodoc wrote it (its digest recorded); its size and structure are bounded
by the pages on disk. Through the CLI's entry point (`cli_here`), and arbitrary manifests
(hypothesis) at `generate`, `--check` and `check`."""

from __future__ import annotations

import gzip
import json
import logging
import os
import resource
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from helpers import cli_here, make_workspace, read_manifest, write_manifest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repodoc_lsp import MARKER
from repodoc_lsp.output.manifest import MANIFEST, content_digest, decode_manifest, encode_manifest, is_page_name
from repodoc_lsp.output.writer import UNRECORDED

WARNING = "damaged manifest ("


def _run(caplog: pytest.LogCaptureFixture, *args: str,
         env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], str]:
    """`repodoc ARGS` through the CLI's entry point, and what it said on stderr (the CLI prints the
    package's logged warnings there; caplog has them too when a command prints none)."""
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        proc = cli_here(*args, env=env)
    return proc, proc.stderr if "warning" in proc.stderr else proc.stderr + caplog.text


def _tree(root: Path, env: dict[str, str]) -> Path:
    """A generated workspace (two sources, a folder) and its output folder."""
    make_workspace(root, {"a.py": "def f():\n    return 1\n", "pkg/b.py": "class B:\n    pass\n"})
    assert cli_here("generate", str(root), env=env).returncode == 0
    return root / "docs"


def _bait(folder: Path) -> dict[Path, bytes]:
    """Pages with repodoc's marker in another project's docs, next to the workspace: never touched."""
    pages = {folder / "index.md": f"{MARKER}\nTheirs.\n".encode(), folder / "sub/x.py_kw.md": f"{MARKER}\nx\n".encode()}
    for path, data in pages.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return pages


def _intact(files: dict[Path, bytes]) -> bool:
    return all(path.is_file() and path.read_bytes() == data for path, data in files.items())


def test_a_manifest_naming_pages_outside_the_output_folder_is_damaged_and_deletes_nothing(
        tmp_path: Path, cache_env: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    """Finding 1 and 9: a checked-in manifest lists another project's page (its digest that page's
    own); its source is gone. Before: `remove` walked out/../../other/docs and unlinked it (then pruned
    the emptied folders up the `..` path); an absolute key ended every command in a RecursionError.
    Now: one damaged-manifest warning per command, nothing outside touched, no traceback."""
    docs = _tree(tmp_path / "ws", cache_env)
    bait = _bait(tmp_path / "other/docs")
    good = read_manifest(docs)
    digest = content_digest(bait[tmp_path / "other/docs/index.md"])
    for key, command in (("../../other/docs/index.md", ["generate", "--check"]),
                         (f"{tmp_path}/other/docs/index.md", ["check"]),
                         ("pkg/../../../other/docs/index.md", ["generate"]),
                         (f"{tmp_path}/other/docs/sub/x.py_kw.md", ["generate"])):
        table = json.loads(json.dumps(good))
        table["pages"][key] = [*table["pages"]["index.md"][:3], digest]
        write_manifest(docs, table)
        proc, said = _run(caplog, *command, str(tmp_path / "ws"), env=cache_env)
        assert "Traceback" not in said and proc.returncode == 0, (command, proc.stdout, said)
        assert said.count(WARNING) == 1 and "(1 page names repodoc does not write)" in said, said
        assert _intact(bait), command
    assert read_manifest(docs)["pages"].keys() == good["pages"].keys()  # rebuilt
    assert cli_here("generate", "--check", str(tmp_path / "ws"), env=cache_env).returncode == 0


def test_a_page_of_a_deleted_source_is_deleted_only_as_repodoc_wrote_it(tmp_path: Path,
                                                                       cache_env: dict[str, str]) -> None:
    """Finding 1: an empty digest counted as "not edited", so a page a person edited was deleted when
    its source went. Now a page goes only when its bytes are the digest recorded: the edited one whose
    digest is empty is kept (a conflict, reported again), the unedited one beside it goes."""
    root = tmp_path / "ws"
    docs = _tree(root, cache_env)
    table = read_manifest(docs)
    table["pages"]["pkg/b.py_kw.md"][3] = ""
    write_manifest(docs, table)
    kw = docs / "pkg/b.py_kw.md"
    edited = kw.read_text() + "\nA note a person added.\n"
    kw.write_text(edited)
    (root / "pkg/b.py").unlink()
    for command in (["generate", "--check"], ["generate"], ["generate"]):
        proc = cli_here(*command, str(root), "--json", env=cache_env)
        assert "Traceback" not in proc.stderr, proc.stderr
        summary = json.loads(proc.stdout)
        assert [(c["path"], c["reason"].split(" (")[0]) for c in summary["conflicts"]] == [
            ("pkg/b.py_kw.md", f"no longer generated, but {UNRECORDED}")], summary
        assert kw.read_text() == edited
    assert not (docs / "pkg/b.py_docs.md").exists()


def _padded(table: dict, junk: bytes) -> bytes:
    """`table` with `junk` (JSON) under an unknown key, padded with incompressible text so that it
    inflates less than 64 times its size (under the old caps), gzip-compressed."""
    pad = os.urandom(len(junk) // 100).hex().encode()
    text = json.dumps(table).encode()[:-1] + b',"junk":' + junk + b',"pad":"' + pad + b'"}'
    return zlib.compress(text, level=1, wbits=31)


_PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode; "
         "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def test_a_manifest_inflating_past_what_its_pages_need_is_damaged_and_costs_no_memory(
        tmp_path: Path, cache_env: dict[str, str]) -> None:
    """Finding 5: 1.1 MB of manifest inflating to 62 MB of `[]` under an unknown key cost 1.7 GB on
    every run (`--check` passes and never rewrites it). Here 12 MB of `[]` in 0.2 MB (the process
    peaked at 339 MB, 66 MB now): the manifest is inflated only as far as the pages on disk can
    need, then it is damaged. The real process, its peak resident memory."""
    root = tmp_path / "ws"
    docs = _tree(root, cache_env)
    (docs / MANIFEST).write_bytes(_padded(read_manifest(docs), b"[" + b"[]," * 4_000_000 + b"[]]"))
    # Its peak through a small parent of its own: a process forked from this one (pytest, with every
    # module its earlier tests imported) would count this process's pages in its own peak.
    proc = subprocess.run([sys.executable, "-c", _PEAK, sys.executable, "-m", "repodoc_lsp", "generate", "--check",
                           str(root)], env=cache_env, capture_output=True, text=True, check=False)
    code, peak = (int(n) for n in proc.stdout.split())
    err = proc.stderr
    assert code == 0 and err.count(WARNING) == 1 and "larger than its pages can need" in err, err
    assert peak < 150 << 10, f"{peak:,} kB"


def test_what_a_manifest_can_be(tmp_path: Path) -> None:
    """Page names repodoc writes, and what else a key can be; lists and tables past one per 24 bytes
    of JSON are never parsed; the room the pages on disk give grows with them."""
    for name in ("index.md", "doc.md", "a.py_docs.md", "a.py_kw.md", "p/q r/é.py_docs.part2.md", ".github/x.yml_kw.md",
                 "a\\b.py_kw.md", "x_docs.md.md_kw.md"):
        assert is_page_name(name), name
    for name in ("", "/etc/hostname", "/abs/index.md", "../x/index.md", "a/../index.md", "./index.md", "a//index.md",
                 "a/index.md/", "a\0.py_kw.md", "notes.md", "_docs.md", "_kw.md", "a.py_docs", "a/\udcff\ud800_kw.md",
                 ".repodoc-manifest.json.gz", "x" * 5000 + "_kw.md", 3, None, ["index.md"]):
        assert not is_page_name(name), name
    empty_lists = b'{"pages":{},"junk":[' + b"[]," * 10_000 + b"[]]}"
    with pytest.raises(ValueError, match="more lists and tables"):
        decode_manifest(gzip.compress(empty_lists))
    with pytest.raises(ValueError, match="more lists and tables"):
        decode_manifest(b"[" * 5000 + b"]" * 5000, compressed=False)
    good = {"pages": {"a_kw.md": ["k", 1, 2, "d"]}}
    assert decode_manifest(gzip.compress(json.dumps(good).encode())) == good
    large = {"pages": {f"p{i}/m{i}.py_docs.md": ["k" * 32, i, i, "d" * 32] for i in range(30_000)}}
    assert decode_manifest(encode_manifest(large), room=lambda n: True) == large  # inflated in steps
    big = gzip.compress(b'{"pages":{},"pad":"' + os.urandom(3 << 19).hex().encode() + b'"}')
    asked: list[int] = []

    def room(n: int) -> bool:
        asked.append(n)
        return n <= 2 << 20
    with pytest.raises(ValueError, match="larger than its pages can need"):
        decode_manifest(big, room=room)
    assert max(asked) <= 3 << 20  # never inflated whole


# -- arbitrary manifests -----------------------------------------------------------------------------

_KEYS = st.one_of(
    st.sampled_from(["index.md", "doc.md", "a.py_docs.md", "a.py_kw.md", "gone.py_kw.md", "pkg/index.md",
                     "../other/docs/index.md", "../../other/docs/index.md", "../../other/docs/sub/x.py_kw.md",
                     "pkg/../../../other/docs/index.md", "/etc/hostname", "{other}/docs/index.md", "notes.md",
                     "a.py_kw.md\0", "..", "", "/", "pkg\\..\\..\\index.md", "mine_kw.md"]),
    st.text(max_size=30))
_DIGESTS = st.one_of(st.just(""), st.just("{bait}"), st.text(max_size=40))  # {bait}: the sibling's page's digest
_ENTRY = st.one_of(st.tuples(st.text(max_size=8), st.integers(), st.integers(), _DIGESTS).map(list),
                   st.lists(st.integers() | st.text(max_size=5), max_size=5), st.none(), st.integers(), st.text())
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                 max_size=4),
                     max_leaves=20)
def _huge(lists: int, key: int) -> dict:
    """A manifest of many empty lists (each costs 30 times its JSON parsed) and a long key."""
    return {"pages": {"a" * key + "_kw.md": ["k", 1, 1, ""]}, "junk": [[]] * lists}


_MANIFESTS = st.one_of(
    st.binary(max_size=200),  # any bytes, compressed or not
    st.builds(_huge, st.integers(0, 2_000_000), st.integers(0, 1 << 20)),
    st.builds(lambda pages, rest: {"pages": pages, **rest},
              st.dictionaries(_KEYS, _ENTRY, max_size=6),
              st.dictionaries(st.sampled_from(["generator", "inputs", "anchors", "junk"]), _JSON, max_size=3)),
    _JSON,
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A generated workspace `ws` (with a person's notes and a page a person copied and edited, the
    source of `gone.py` deleted since), and a sibling project `other` with pages with the marker."""
    base = tmp_path_factory.mktemp("template")
    env = {**os.environ, "REPODOC_CACHE_DIR": str(base / "cache")}
    root = base / "ws"
    make_workspace(root, {"a.py": "def f():\n    return 1\n", "gone.py": "g = 1\n", "pkg/__init__.py": ""})
    assert cli_here("generate", str(root), env=env).returncode == 0
    (root / "gone.py").unlink()
    (root / "docs/notes.md").write_text("mine\n")
    (root / "docs/mine_kw.md").write_text(f"{MARKER}\nA page a person wrote, starting as repodoc's do.\n")
    (root / "docs/gone.py_kw.md").write_text((root / "docs/gone.py_kw.md").read_text() + "A person's note.\n")
    _bait(base / "other/docs")
    return base, env


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@settings(max_examples=int(os.environ.get("REPODOC_MANIFEST_EXAMPLES", "8")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(manifest=_MANIFESTS, compressed=st.booleans(), command=st.sampled_from(["generate", "--check", "check"]))
def test_any_manifest_deletes_and_writes_nothing_outside_and_loses_no_persons_file(
        template: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory,
        caplog: pytest.LogCaptureFixture, manifest: object, compressed: bool, command: str) -> None:
    """Whatever the manifest (any bytes, any JSON, keys with `..`, absolute, NUL): no traceback, the
    sibling project's pages and the person's files (notes, a copy with the marker, an edited page of
    a deleted source) stay as they are, nothing appears outside the output folder, memory bounded."""
    base, env = template
    work = tmp_path_factory.mktemp("run")
    shutil.copytree(base / "ws", work / "ws")
    shutil.copytree(base / "other", work / "other")
    docs = work / "ws/docs"
    outside = {"other": _snapshot(work / "other"), "ws": {k: v for k, v in _snapshot(work / "ws").items()
                                                       if not k.startswith("docs/")}}
    mine = {p: docs.joinpath(p).read_bytes() for p in ("notes.md", "mine_kw.md", "gone.py_kw.md")}
    if isinstance(manifest, bytes):
        raw = manifest
    else:
        text = json.dumps(manifest).replace("{other}", str(work / "other")) \
            .replace("{bait}", content_digest(outside["other"]["docs/index.md"]))
        raw = text.encode("utf-8", "surrogatepass")
        if len(raw) > 1 << 20:  # random text besides: inflating less than 64 times its size (the old caps)
            raw = raw[:-1] + b',"pad":"' + os.urandom(len(raw) // 100).hex().encode() + b'"}'
    (docs / MANIFEST).write_bytes(zlib.compress(raw, level=1, wbits=31) if compressed else raw)
    args = {"generate": ["generate"], "--check": ["generate", "--check"], "check": ["check"]}[command]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    proc, said = _run(caplog, *args, str(work / "ws"), env=env)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # kB: past the peak of this process
    assert "Traceback" not in said and proc.returncode in (0, 1), (proc.stdout, said)
    assert said.count(WARNING) <= 1, said
    assert _snapshot(work / "other") == outside["other"]
    assert {k: v for k, v in _snapshot(work / "ws").items() if not k.startswith("docs/")} == outside["ws"]
    assert sorted(p.name for p in work.iterdir()) == ["other", "ws"]
    assert {p: docs.joinpath(p).read_bytes() for p in mine} == mine
    assert grown < 100 << 10, f"{grown:,} kB"
    shutil.rmtree(work)


def test_a_manifest_past_the_fixed_bound_is_read_when_the_pages_on_disk_can_need_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A tree of 1,000,000 files has a manifest of hundreds of MB, past `MAX_MANIFEST_BYTES` (64 MB): it is
    read when the pages on disk can need that many bytes of JSON (the bound of its inflated JSON); the same
    file beside no pages is damaged, never read. (Both bounds lowered to a few KB here: the same rule.)"""
    from repodoc_lsp.output import manifest
    from repodoc_lsp.output.writer import Writer

    out = tmp_path / "docs"
    pages = {}
    for i in range(300):
        page = out / f"pkg{i % 7}/m{i}.py_docs.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        data = f"{MARKER}\n{'page text ' * 50}{i}\n".encode()
        page.write_bytes(data)
        st = page.stat()
        pages[page.relative_to(out).as_posix()] = [f"{i:064x}", st.st_size, st.st_mtime_ns, content_digest(data)]
    write_manifest(out, {"pages": pages, "inputs": "a" * 40})
    size = (out / MANIFEST).stat().st_size
    monkeypatch.setattr(manifest, "MAX_MANIFEST_BYTES", size // 4)
    monkeypatch.setattr(manifest, "ROOM_FIXED", size // 4)
    writer = Writer(out)
    assert len(writer.manifest) == 300 and writer.inputs == "a" * 40 and writer.intact()
    for path in out.rglob("*.md"):
        path.unlink()
    with caplog.at_level(logging.WARNING):
        assert not Writer(out).manifest
    assert f"{WARNING}unreadable: too large ({size:,} bytes; at most {size // 4:,} are read)" in caplog.text
