"""Sharding (examples/README.md): `repodoc analyze --shard K/N`, `generate --facts ... --pages K/N` and
`repodoc merge` write the tree one machine writes; shards of another version or tree, missing,
duplicated or damaged ones are refused with an error naming them, and nothing is written."""

from __future__ import annotations

import contextlib
import gzip
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
from helpers import cli_here, make_workspace, read_manifest, run_cli

from repodoc_lsp.output.manifest import MANIFEST
from repodoc_lsp.shard.pages import OLD_SIDECAR, SIDECAR_PREFIX, manifest_copy_name, sidecar_name

if TYPE_CHECKING:
    from repodoc_lsp.shard.share_facts import ShareFacts

FILES = {
    "pyproject.toml": '[project]\nname = "demo"\n',
    "README.md": "# Demo\n\nSee `pkg.a.A`.\n",
    "pkg/__init__.py": '"""Demo package."""\nfrom .a import A\n',
    "pkg/a.py": '"""Module a."""\nimport os\n\nfrom .b import helper\n\n\nclass A:\n    """An A."""\n\n'
                "    def m(self, x: int = 1) -> str:\n        return str(helper() + x)\n",
    "pkg/b.py": "def helper():\n    return eval('1')\n",
    "pkg/sub/c.py": 'from pkg import A\n\n\nclass C(A):\n    """Calls :func:`pkg.b.helper`."""\n',
    "pkg/sub/broken.py": "def broken(:\n    pass\n",
    "tests/test_a.py": "from pkg.a import A\n\n\ndef test_a():\n    assert A\n",
    "data/blob.dat": b"\x00\x01\x02binary\x00" * 20,
    "docs_src/guide.md": "# Guide\n\n## Use\n\nCall `helper`.\n",
}


class Setup:
    """A workspace, the tree one run writes (`single`), and the facts files of a 3-way analysis."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = make_workspace(base / "proj", FILES)
        self.out = self.root / "out"
        self.flags = ["--out", str(self.out), "--cache-dir", str(base / "cache")]
        self.generate()
        self.single = base / "single"
        self.out.rename(self.single)
        self.facts = [str(base / f"f{k}.jsonl.gz") for k in (1, 2, 3)]
        for k, path in enumerate(self.facts, 1):
            self.ok("analyze", str(self.root), "--shard", f"{k}/3", "--output", path, "--out", str(self.out),
                    "--cache-dir", str(base / "analysis-cache"))

    def run(self, *args: str) -> tuple[int, str, str]:
        proc = cli_here(*args)
        return proc.returncode, proc.stdout, proc.stderr

    def ok(self, *args: str) -> str:
        code, out, err = self.run(*args)
        assert code == 0, err
        return out

    def generate(self, *extra: str) -> dict:
        return json.loads(self.ok("generate", str(self.root), *self.flags, "--json", *extra))

    def pages(self, k: int, n: int, facts: list[str] | None = None) -> Path:
        """Page share k/n made in the output folder, then moved aside (as a CI job uploads it)."""
        summary = self.generate("--no-cache", "--facts", *(facts or self.facts), "--pages", f"{k}/{n}")
        assert summary["analysed"] == 0  # every file's facts came from the facts files
        aside = self.base / f"pages{k}-{n}"
        shutil.rmtree(aside, ignore_errors=True)
        self.out.rename(aside)
        return aside


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    return Setup(tmp_path_factory.mktemp("shards"))


def _tree(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != MANIFEST}


def _without_times(manifest: dict) -> dict:
    return {**manifest, "pages": {page: [key, size, digest] for page, (key, size, _mtime, digest)
                                  in manifest["pages"].items()}}


def test_analysed_in_three_paged_in_two_and_merged_is_the_tree_one_run_writes(setup: Setup) -> None:
    shares = [setup.pages(1, 2), setup.pages(2, 2)]
    assert all(_tree(s) for s in shares)  # each share has pages of its own
    assert not set(_tree(shares[0])) & set(_tree(shares[1]))  # (each share's note and manifest copy: its own names)
    setup.ok("merge", *map(str, shares), "--out", str(setup.out))
    assert _tree(setup.out) == _tree(setup.single)
    assert _without_times(read_manifest(setup.out)) == _without_times(read_manifest(setup.single))
    # the merged tree is up to date, for a check from the facts and for a plain one
    assert "up to date" in setup.ok("generate", str(setup.root), *setup.flags, "--facts", *setup.facts, "--check")
    assert "up to date" in setup.ok("generate", str(setup.root), *setup.flags, "--check")
    # merged again over itself: nothing to write
    assert "(0 written, " in setup.ok("merge", *map(str, shares), "--out", str(setup.out))
    shutil.rmtree(setup.out)


def test_a_file_changed_since_its_analysis_is_analysed_again(setup: Setup) -> None:
    b = setup.root / "pkg/b.py"
    before = b.read_text()
    b.write_text("def helper():\n    return 2\n\n\ndef other():\n    pass\n")
    try:
        summary = setup.generate("--no-cache", "--facts", *setup.facts)
        assert summary["analysed"] == 1
        assert "other" in (setup.out / "pkg/b.py_docs.md").read_text()
    finally:
        b.write_text(before)
        shutil.rmtree(setup.out)


def _rewrite_header(source: str, target: Path, **changes: object) -> str:
    lines = gzip.decompress(Path(source).read_bytes()).split(b"\n")
    header = json.loads(lines[0])
    header.update(changes)
    lines[0] = json.dumps(header).encode()
    target.write_bytes(gzip.compress(b"\n".join(lines)))
    return str(target)


def _as_share(source: str, target: Path, share: tuple[int, int]) -> str:
    """The facts file `source` written again, whole and with its index, as the facts file of another share."""
    from repodoc_lsp.shard.facts_file import FactsReader, FactsWriter

    reader = FactsReader(Path(source))
    try:
        records = list(reader.records())
    finally:
        reader.close()
    writer = FactsWriter(target, reader.header.tree, share, len(records))
    for record in records:
        writer.add(record)
    writer.close()
    return str(target)


def _refused(setup: Setup, facts: list[str], *expected: str) -> None:
    code, _out, err = setup.run("generate", str(setup.root), *setup.flags, "--facts", *facts)
    assert code == 2, err
    assert "no page written" in err
    for text in expected:
        assert text in err
    assert not setup.out.exists()


def test_facts_of_another_version_or_tree_are_refused(setup: Setup, tmp_path: Path) -> None:
    f1, f2, f3 = setup.facts
    old = _rewrite_header(f1, tmp_path / "old.jsonl.gz", repodoc="0.0.1")
    _refused(setup, [old, f2, f3], f"{old} (shard 1/3): made by repodoc 0.0.1")
    other = _rewrite_header(f2, tmp_path / "other.jsonl.gz", analysis="0.0.1-1")
    _refused(setup, [f1, other, f3], f"{other} (shard 2/3): made with analysis 0.0.1-1")
    extra = setup.root / "pkg/new.py"  # another commit: one more input
    extra.write_text("x = 1\n")
    try:
        _refused(setup, setup.facts, f"{f1} (shard 1/3): made from another tree: it has 10 input files, this one 11")
    finally:
        extra.unlink()


def test_missing_duplicated_or_mixed_shards_are_refused(setup: Setup) -> None:
    f1, f2, f3 = setup.facts
    _refused(setup, [f1, f3], "shard 2/3 missing")
    _refused(setup, [f1, f2, f3, f1], f"{f1} (shard 1/3) and {f1} are both shard 1/3")
    half = str(setup.base / "half.jsonl.gz")
    setup.ok("analyze", str(setup.root), "--shard", "1/2", "--output", half, "--out", str(setup.out),
             "--cache-dir", str(setup.base / "analysis-cache"))
    _refused(setup, [f1, f2, f3, half], f"{half} (shard 1/2): one of 2 shards, but {f1} (shard 1/3) is one of 3")


def test_damaged_facts_files_are_refused(setup: Setup, tmp_path: Path) -> None:
    f1, f2, f3 = setup.facts
    data = Path(f2).read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) // 2])
    _refused(setup, [f1, str(cut), f3], f"{cut} (shard 2/3): damaged facts file")
    lines = gzip.decompress(data).split(b"\n")
    for name, line in (("short", None), ("wrong", b'{"path": "pkg/a.py", "digest": "x", "size": 1, "facts": '
                                                  b'{"language": "cobol", "lines": 1}}')):
        target = tmp_path / f"{name}.jsonl.gz"
        body = lines[:-2] + lines[-1:] if line is None else [lines[0], line, *lines[2:]]
        target.write_bytes(gzip.compress(b"\n".join(body)))
        _refused(setup, [f1, str(target), f3], f"{target} (shard 2/3): ")
    garbage = tmp_path / "garbage.jsonl.gz"
    garbage.write_bytes(b"not gzip at all")
    _refused(setup, [f1, str(garbage), f3], f"{garbage}: ")
    swapped = _rewrite_header(f3, tmp_path / "swapped.jsonl.gz", shard=[2, 3])  # shard 3's files called 2's
    _refused(setup, [f1, f2, swapped], "are both shard 2/3")
    renamed = _rewrite_header(f2, tmp_path / "renamed.jsonl.gz", shard=[3, 3])
    _refused(setup, [f1, swapped, renamed], f"{swapped} (shard 2/3): holds ")  # not its share's files


def test_merge_refuses_missing_duplicated_or_damaged_page_shares(setup: Setup, tmp_path: Path) -> None:
    one, two = setup.pages(1, 2), setup.pages(2, 2)

    def refused(folders: list[Path], expected: str) -> None:
        code, _out, err = setup.run("merge", *map(str, folders), "--out", str(setup.out))
        assert code == 2, err
        assert expected in err and "nothing written" in err
        assert not setup.out.exists()

    refused([one], "page share 2/2 missing")
    refused([one, one, two], f"{one} and {one} are both pages 1/2")
    bad = tmp_path / "bad"
    shutil.copytree(two, bad)
    page = next(p for p in sorted(bad.rglob("*.md")))
    page.write_bytes(page.read_bytes() + b"edited\n")
    refused([one, bad], f"{bad} (pages 2/2): {page.relative_to(bad).as_posix()}: not the page its run wrote")
    (bad / manifest_copy_name((2, 2))).write_bytes(b"garbage")
    refused([one, bad], f"{bad} (pages 2/2): its manifest is not the one its run wrote")
    (bad / sidecar_name((2, 2))).unlink()
    refused([one, bad], f"{bad}: no {SIDECAR_PREFIX}K-of-N.json")
    (bad / OLD_SIDECAR).write_text('{"format": "repodoc-pages", "version": 1}\n')  # an earlier repodoc's note
    refused([one, bad], f"{bad}: {OLD_SIDECAR}: pages made by an earlier repodoc")
    code, _out, err = setup.run("merge", str(one), str(two), "--out", str(tmp_path / "elsewhere"))
    assert code == 2 and "merge them there" in err
    shutil.rmtree(one)
    shutil.rmtree(two)


def test_the_commands_as_processes(setup: Setup) -> None:
    """The real program: a bad K/N is a usage error; a missing shard exits 2 with the reason."""
    proc = run_cli("analyze", str(setup.root), "--shard", "4/3", "--output", str(setup.base / "x.gz"))
    assert proc.returncode == 2 and "expected K/N" in proc.stderr
    proc = run_cli("generate", str(setup.root), *setup.flags, "--facts", setup.facts[0], setup.facts[2])
    assert proc.returncode == 2
    assert "repodoc: error: shard 2/3 missing" in proc.stderr


def test_a_page_share_holds_the_facts_of_its_own_folders_only(setup: Setup, tmp_path: Path) -> None:
    """Share 2/2 (`pkg`, `pkg/sub`, `tests`: the split weighs folders by their files) renders from its own
    files' facts and every file's graph sketch; share 1/2's pages read a few of the others' facts again
    (the root's index says what `pkg` is for, llms.txt outlines the main files), from their blocks."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.shard.pages import generate_sharded
    from repodoc_lsp.shard.share_facts import ShareFacts
    from repodoc_lsp.store.workspace import Workspace

    def share(k: int) -> ShareFacts:
        ws = Workspace(setup.root, Settings(output=str(tmp_path / f"out{k}")), use_cache=False, incremental=False)
        summary = generate_sharded(ws, facts=setup.facts, share=(k, 2))
        assert summary.written and not summary.errors and isinstance(ws.facts, ShareFacts)
        return ws.facts

    second = share(2)
    held = {rel for rel in second if second.loaded(rel) is not None}
    assert held == {"pkg/__init__.py", "pkg/a.py", "pkg/b.py", "pkg/sub/c.py", "pkg/sub/broken.py", "tests/test_a.py"}
    assert second.source.reads == 0
    first = share(1)
    assert first.source.reads > 0 and first.loaded("pkg/__init__.py") is not None


def test_a_page_share_holds_the_imports_of_its_own_files_and_every_files_importers(setup: Setup) -> None:
    """A page share's relations: its own files' imports as the whole tree's relations hold them, the other files
    only as importers (who imports each file is the whole tree's)."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.shard.pages import take_facts
    from repodoc_lsp.store.workspace import Workspace

    def relations(share: tuple[int, int] | None) -> Any:
        ws = Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False)
        take_facts(ws, setup.facts, share=share)
        return ws.relations, ws.facts
    whole, _facts = relations(None)
    importers = {rel: users for rel, users in whole.imported_by.items() if users}
    assert importers["pkg/a.py"] == {"pkg/__init__.py", "tests/test_a.py"}
    left_out: set[str] = set()
    for k in (1, 2):
        mine, facts = relations((k, 2))
        assert {rel: users for rel, users in mine.imported_by.items() if users} == importers
        for rel in whole.files:
            expected = whole.imports_of(rel) if rel in facts.own else ()
            assert mine.imports_of(rel) == expected and mine.links[rel] == (whole.links[rel] if expected else ())
        left_out |= {rel for rel in whole.files - facts.own if whole.imports_of(rel)}
    assert {"pkg/__init__.py", "tests/test_a.py"} <= left_out  # (by one share or the other)


def test_sketches_of_another_renderer_and_damaged_records_are_refused(setup: Setup, tmp_path: Path) -> None:
    f1, f2, f3 = setup.facts
    other = _rewrite_header(f2, tmp_path / "other.jsonl.gz", sketches="0123 other.rule")
    _refused(setup, [f1, other, f3], f"{other} (shard 2/3): its graph sketches were made by another renderer")
    lines = gzip.decompress(Path(f1).read_bytes()).split(b"\n")
    at = next(i for i, line in enumerate(lines) if b'"sketch":[' in line)
    for name, bad in (("imports", [{"module": 1}]), ("sketch", [1, 2])):
        record = json.loads(lines[at])
        record[name] = bad
        line = json.dumps(record, separators=(",", ":")).encode()
        target = tmp_path / f"{name}.jsonl.gz"
        target.write_bytes(gzip.compress(b"\n".join([*lines[:at], line, *lines[at + 1:]])))
        _refused(setup, [str(target), f2, f3], f"{target} (shard 1/3): damaged facts file: ",
                 "its imports or its sketch are of the wrong form")
        links = tmp_path / f"links-{name}"  # a link job reads a file's imports with its view: refused there
        code, _out, err = setup.run("graph", str(setup.root), "--out", str(setup.out), "--facts", str(target), f2,
                                    f3, "--link", "1/1", "--pages", "1", "--output", str(links))
        assert code == 2 and f"{target} (shard 1/3): damaged facts file: " in err and "no answers written" in err
        assert not links.exists() or not any(links.iterdir())


def test_a_page_damaged_at_its_size_stops_the_merge_there(setup: Setup, tmp_path: Path) -> None:
    one, two = setup.pages(1, 2), setup.pages(2, 2)
    page = next(p for p in sorted(two.rglob("*.md")))
    data = page.read_bytes()
    page.write_bytes(data[:-2] + b"X\n")
    code, _out, err = setup.run("merge", str(one), str(two), "--out", str(setup.out))
    assert code == 2
    assert f"{two} (pages 2/2): {page.relative_to(two).as_posix()}: not the page its run wrote" in err
    assert "the tree is not vouched for" in err
    assert "up to date" not in setup.run("generate", str(setup.root), *setup.flags, "--facts", *setup.facts,
                                         "--check")[1]
    for folder in (one, two, setup.out):
        shutil.rmtree(folder)


def test_a_check_of_an_up_to_date_tree_decodes_no_facts(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    """`generate --facts ... --check` of the merged tree: the inputs stamp from each file's digest alone."""
    from repodoc_lsp.cli import _parser, _settings
    from repodoc_lsp.shard import facts_file
    from repodoc_lsp.shard.pages import generate_sharded
    from repodoc_lsp.store.workspace import Workspace

    shares = [setup.pages(1, 2), setup.pages(2, 2)]
    setup.ok("merge", *map(str, shares), "--out", str(setup.out))

    def refused(*_args: object) -> None:
        raise AssertionError("decoded")
    for name in ("structure_imports", "facts_from_json"):
        monkeypatch.setattr(facts_file, name, refused)
    monkeypatch.setattr(facts_file.sketches, "decode", refused)
    args = _parser().parse_args(["generate", str(setup.root), *setup.flags, "--facts", *setup.facts, "--check"])
    settings = _settings(setup.root, args)  # as the command line reads them: the manifest's stamp has them
    assert settings is not None
    ws = Workspace(setup.root, settings, incremental=False)
    summary = generate_sharded(ws, facts=setup.facts, check=True)
    assert summary.complete() and summary.unchanged == len(read_manifest(setup.out)["pages"]) and not summary.written
    for folder in (*shares, setup.out):
        shutil.rmtree(folder)


def test_the_check_reads_each_facts_file_on_a_worker_process(setup: Setup, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    """A check of a large tree reads each facts file and digests its files on disk on worker processes (its
    per-file work was one core's: bench/README.md); a file changed since, a damaged facts file, one of another
    share are found there all the same."""
    from repodoc_lsp.cli import _parser, _settings
    from repodoc_lsp.pipeline.runtime import enter_cli
    from repodoc_lsp.shard import check
    from repodoc_lsp.shard.facts_file import ShardError
    from repodoc_lsp.store.workspace import Workspace

    shares = [setup.pages(1, 2), setup.pages(2, 2)]
    setup.ok("merge", *map(str, shares), "--out", str(setup.out))
    sent: list[list[str]] = []
    chunks = check.run_chunks

    def counted(fn: Any, paths: list[str], **kwargs: Any) -> Any:
        sent.append(paths)
        return chunks(fn, paths, **kwargs)
    monkeypatch.setattr(check, "run_chunks", counted)
    monkeypatch.setattr(check, "PARALLEL_FILES", 1)  # this small tree checked as a large one is
    args = _parser().parse_args(["generate", str(setup.root), *setup.flags, "--facts", *setup.facts, "--check"])
    settings = _settings(setup.root, args)
    assert settings is not None

    def checked(facts: list[str]) -> Any:
        ws = Workspace(setup.root, settings, incremental=False, runtime=enter_cli())
        return check.up_to_date(ws, facts, jobs=2)
    summary = checked(setup.facts)
    assert summary is not None and summary.unchanged == len(read_manifest(setup.out)["pages"])
    assert sent == [setup.facts]  # every facts file to the workers, one each
    with _changed_since(setup.root / "pkg/b.py"):
        assert checked(setup.facts) is None  # then the check says which pages are stale
        assert "up to date" not in setup.run("generate", str(setup.root), *setup.flags, "--facts", *setup.facts,
                                             "--check")[1]
    cut = tmp_path / "cut.jsonl.gz"
    data = Path(setup.facts[1]).read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ShardError, match=f"{cut} \\(shard 2/3\\): damaged facts file"):
        checked([setup.facts[0], str(cut), setup.facts[2]])
    renamed = _as_share(setup.facts[1], tmp_path / "renamed.jsonl.gz", (3, 3))
    swapped = _as_share(setup.facts[2], tmp_path / "swapped.jsonl.gz", (2, 3))
    with pytest.raises(ShardError, match=r"(swapped|renamed).jsonl.gz \(shard [23]/3\): holds '.*', which is not"):
        checked([setup.facts[0], swapped, renamed])
    for folder in (*shares, setup.out):
        shutil.rmtree(folder)


def _answers(setup: Setup, m: int) -> Path:
    """The graph job's answers of `m` page shares."""
    folder = setup.base / f"graph-{m}"
    setup.ok("graph", str(setup.root), "--out", str(setup.out), "--facts", *setup.facts, "--pages", str(m),
             "--output", str(folder), "-q")
    return folder


def _page_shares(setup: Setup, graph: Path, name: str) -> list[Path]:
    """The three page shares, each made by a page job given `graph` (`--graph`), moved to `name`1..3."""
    shares = []
    for k in (1, 2, 3):
        setup.generate("--no-cache", "--facts", *setup.facts, "--pages", f"{k}/3", "--graph", str(graph))
        shares.append(setup.out.rename(setup.base / f"{name}{k}"))
    return shares


def _merged_is_one_run(setup: Setup, shares: list[Path]) -> None:
    """Links across shares (a subclass, inherited members, a docstring's mention) on the shares' pages, and
    the shares merged into the tree one run writes."""
    assert "- [`C`](sub/c.py_docs.md#class-C) in `pkg/sub/c.py`" in (shares[1] / "pkg/a.py_docs.md").read_text()
    c = (shares[2] / "pkg/sub/c.py_docs.md").read_text()
    assert "from [`A`](../a.py_docs.md#class-A) in `pkg/a.py`: `m`" in c and "(../b.py_docs.md#function-helper)" in c
    setup.ok("merge", *map(str, shares), "--out", str(setup.out))
    assert _tree(setup.out) == _tree(setup.single)
    assert _without_times(read_manifest(setup.out)) == _without_times(read_manifest(setup.single))


def test_page_shares_from_the_graph_jobs_answers_merge_to_the_tree_one_run_writes(
        setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    """`repodoc graph --pages 3` answers once what the pages ask of the symbol graph; each page job given
    them decodes no sketch and builds no graph, and the merged shares are the single run's tree (a class
    and its subclass, a docstring naming a function, in three different shares)."""
    from repodoc_lsp.knowledge import once
    from repodoc_lsp.shard import facts_file

    graph = _answers(setup, 3)
    assert sorted(p.name for p in graph.iterdir()) == [f"answers-{k}-of-3.jsonl.gz" for k in (1, 2, 3)]

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a page job given the answers built the graph")
    monkeypatch.setattr(facts_file.sketches, "decode", refused)
    monkeypatch.setattr(once.BuiltOnce, "__init__", refused)
    shares = _page_shares(setup, graph, "answered")
    monkeypatch.undo()
    _merged_is_one_run(setup, shares)
    for folder in (*shares, setup.out):
        shutil.rmtree(folder)


@contextlib.contextmanager
def _changed_since(path: Path) -> Iterator[None]:
    """`path` changed (a function added) while the block runs, then put back as it was."""
    before = path.read_text()
    path.write_text(before + "\n\ndef other():\n    pass\n")
    try:
        yield
    finally:
        path.write_text(before)


def test_graph_answers_of_another_run_missing_or_damaged_are_refused(setup: Setup, tmp_path: Path) -> None:
    graph = _answers(setup, 2)

    def refused(folder: Path, share: str, *expected: str) -> None:
        code, _out, err = setup.run("generate", str(setup.root), *setup.flags, "--no-cache", "--facts", *setup.facts,
                                    "--pages", share, "--graph", str(folder))
        assert code == 2, err
        for text in expected:
            assert text in err
        assert "no page written" in err
        assert not (setup.out / MANIFEST).exists()

    refused(graph, "1/3", f"{graph / 'answers-1-of-3.jsonl.gz'}: no graph answers for page share 1/3")
    one = graph / "answers-1-of-2.jsonl.gz"
    data = one.read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    (other / one.name).write_bytes(data[:-8] + bytes(b ^ 0xFF for b in data[-8:]))  # its checksum broken
    refused(other, "1/2", f"{other / one.name}: damaged graph answers")
    lines = gzip.decompress(data).split(b"\n")
    header = json.loads(lines[0])
    for change, expected in (({"repodoc": "0.0.1"}, "made by repodoc 0.0.1"),
                             ({"inputs": "0" * 40}, "made from other facts files or other file contents"),
                             ({"pages": [2, 2]}, "the answers of page share [2, 2], not of [1, 2]")):
        (other / one.name).write_bytes(gzip.compress(b"\n".join([json.dumps({**header, **change}).encode(),
                                                                  *lines[1:]])))
        refused(other, "1/2", f"{other / one.name}: {expected}")
    last = max(i for i, line in enumerate(lines) if line.startswith(b'{"file":'))
    (other / one.name).write_bytes(gzip.compress(b"\n".join([*lines[:last], lines[-2], b""])))  # its last file left out
    refused(other, "1/2", f"{other / one.name}: damaged graph answers: it ends after")
    with _changed_since(setup.root / "pkg/b.py"):  # the page job of its folder reads it: not the one analysed
        refused(graph, "2/2", "pkg/b.py: changed since its analysis")
    proc = run_cli("generate", str(setup.root), *setup.flags, "--facts", *setup.facts, "--graph", str(graph))
    assert proc.returncode == 2 and "--graph is the answers of page shares" in proc.stderr
    shutil.rmtree(graph)


def test_a_page_share_with_answers_writes_into_a_folder_holding_the_whole_tree(setup: Setup) -> None:
    """A page share keys only its own folders' pages of the manifest it finds (it has no graph answer for
    the others'): given the answers, it runs in a folder holding a whole tree as in an empty one."""
    graph = _answers(setup, 3)
    shutil.copytree(setup.single, setup.out)
    summary = setup.generate("--no-cache", "--facts", *setup.facts, "--pages", "2/3", "--graph", str(graph))
    assert not summary["errors"] and not summary["written"]
    assert (setup.out / sidecar_name((2, 3))).is_file() and (setup.out / manifest_copy_name((2, 3))).is_file()
    for folder in (graph, setup.out):
        shutil.rmtree(folder)


def test_the_graph_job_reads_no_files_facts(setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph job builds the graph from the facts files' sketches: no file's facts are decoded."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.shard import facts_file
    from repodoc_lsp.shard.graph_job import write_answers
    from repodoc_lsp.store.workspace import Workspace

    def refused(*_args: object) -> None:
        raise AssertionError("decoded")
    monkeypatch.setattr(facts_file, "facts_from_json", refused)
    ws = Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False)
    summary = write_answers(ws, setup.facts, 2, tmp_path / "graph")
    assert summary.files == 9 and summary.shares == 2
    written = sorted(p.name for p in (tmp_path / "graph").iterdir())
    assert written == ["answers-1-of-2.jsonl.gz", "answers-2-of-2.jsonl.gz"]


def _linked(setup: Setup, n: int, m: int) -> list[Path]:
    """The output folders of `n` link jobs, each writing what each of `m` page shares reads of its links."""
    folders = [setup.base / f"links-{k}-of-{n}-for-{m}" for k in range(1, n + 1)]
    for k, folder in enumerate(folders, 1):
        setup.ok("graph", str(setup.root), "--out", str(setup.out), "--facts", *setup.facts, "--link", f"{k}/{n}",
                 "--pages", str(m), "--output", str(folder), "-q")
    return folders


def _link_shares(setup: Setup, n: int) -> dict[str, int]:
    """input -> its link share of `n` (whole folders)."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.render.paths import folder_of
    from repodoc_lsp.shard.graph_job import link_shares
    from repodoc_lsp.store.discover import discover

    found = discover(setup.root, Settings(output=str(setup.out)))
    shares = link_shares(found, n)
    return {rel: shares[folder_of(rel)] for rel in found.files}


def _inflated(folder: Path) -> dict[str, bytes]:
    return {p.name: gzip.decompress(p.read_bytes()) for p in sorted(folder.iterdir())}


def test_link_jobs_and_a_job_per_page_share_answer_as_the_graph_job_and_merge_to_the_tree(setup: Setup) -> None:
    """Three link jobs (a class's file and its subclass's, a package re-exporting the class and the file
    importing it through the package, in different link shares), then a graph job per page share: the
    answers are the single graph job's, byte for byte; page jobs given the link records answer their own
    share the same way, and merge to the tree one run writes (inherited members, a docstring link and a
    subclass across page shares)."""
    share = _link_shares(setup, 3)
    assert share["pkg/a.py"] == share["pkg/__init__.py"] != share["pkg/sub/c.py"]
    links = _linked(setup, 3, 3)
    answers = setup.base / "answers-by-share"
    for j in (1, 2, 3):
        setup.ok("graph", str(setup.root), "--out", str(setup.out), "--facts", *setup.facts, "--pages", f"{j}/3",
                 "--links", *map(str, links), "--output", str(answers), "-q")
    assert _inflated(answers) == _inflated(_answers(setup, 3))
    together = setup.base / "links-together"  # every link job's records in one folder, as a page job downloads them
    for folder in links:
        shutil.copytree(folder, together, dirs_exist_ok=True)
    shares = _page_shares(setup, together, "linked")  # each page job answers its share from the records
    _merged_is_one_run(setup, shares)
    for folder in (*shares, setup.out, answers, together, *links):
        shutil.rmtree(folder)


def test_link_and_share_jobs_holding_one_view_at_a_time_answer_the_same(
        setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Views dropped and made again from the facts files when read (one held at a time): the same answers."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.knowledge import held
    from repodoc_lsp.shard.graph_job import write_links, write_share_answers
    from repodoc_lsp.store.workspace import Workspace

    made: list[held.HeldViews] = []
    real = held.HeldViews.__init__

    def noted(self: held.HeldViews, *args: Any) -> None:
        real(self, *args)
        made.append(self)
    monkeypatch.setattr(held.HeldViews, "__init__", noted)

    def workspace() -> Workspace:
        return Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False)
    for k in (1, 2, 3):
        write_links(workspace(), setup.facts, (k, 3), 2, tmp_path / f"l{k}", held=1)
    for j in (1, 2):
        write_share_answers(workspace(), setup.facts, (j, 2), [tmp_path / f"l{k}" for k in (1, 2, 3)],
                            tmp_path / "answers", held=1)
    assert _inflated(tmp_path / "answers") == _inflated(_answers(setup, 2))
    assert any(views.made > len(views) for views in made[:3])  # views dropped, made again when read
    assert made[-1].made > len(made[-1])


def test_a_link_job_reads_only_its_own_files_on_disk(setup: Setup, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A link job compares the files of its link share with the checkout, the others' digests are the facts
    files' (reading the whole checkout was every link job's per-file work): a file changed since its analysis
    makes the page jobs refuse the other link jobs' records (naming them), never a wrong tree."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.shard.graph_job import write_links
    from repodoc_lsp.store.workspace import Workspace

    share = _link_shares(setup, 3)

    read = _reads_on_disk(monkeypatch)
    links = tmp_path / "links"
    write_links(Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False),
                setup.facts, (1, 3), 2, links)
    assert read and all(share[rel] == 1 for rel in read)
    monkeypatch.undo()
    changed = next(rel for rel in ("pkg/b.py", "pkg/a.py", "pkg/sub/c.py") if share[rel] != 1)
    with _changed_since(setup.root / changed):  # the other link jobs take its digest from the facts files
        for k in (1, 2, 3):
            setup.ok("graph", str(setup.root), "--out", str(setup.out), "--facts", *setup.facts, "--link",
                     f"{k}/3", "--pages", "2", "--output", str(links), "-q")
        code, _out, err = setup.run("generate", str(setup.root), *setup.flags, "--facts", *setup.facts,
                                    "--pages", "1/2", "--graph", str(links))
    assert code == 2 and "made from other facts files or other file contents" in err, err
    assert not (setup.out / MANIFEST).exists()


def _reads_on_disk(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files a link job reads on disk (its own share's), in the order read."""
    from repodoc_lsp.shard import pages

    read: list[str] = []
    real = pages._as_on_disk

    def noted(root: Path, record: Any, *args: Any) -> Any:
        read.append(record.path)
        return real(root, record, *args)
    monkeypatch.setattr(pages, "_as_on_disk", noted)
    return read


def test_link_jobs_link_whole_folders_each_file_once(setup: Setup, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Link shares are whole folders (as page shares are), not the analysis split: a share's files consult
    mostly their own share's views. Over the N link jobs every input is linked (read on disk) exactly once,
    and the files of a folder by one job."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.render.paths import folder_of
    from repodoc_lsp.shard.graph_job import write_links
    from repodoc_lsp.store.workspace import Workspace

    read = _reads_on_disk(monkeypatch)
    for n in (2, 3):
        by_job: dict[str, int] = {}
        for k in range(1, n + 1):
            read.clear()
            ws = Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False)
            write_links(ws, setup.facts, (k, n), 2, tmp_path / f"l{k}-of-{n}")
            for rel in read:
                assert rel not in by_job, f"{rel} linked by jobs {by_job[rel]} and {k} of {n}"
                by_job[rel] = k
        assert set(by_job) >= {rel for rel in FILES if rel.endswith(".py")}
        jobs_of: dict[str, set[int]] = {}
        for rel, k in by_job.items():
            jobs_of.setdefault(folder_of(rel), set()).add(k)
        assert all(len(jobs) == 1 for jobs in jobs_of.values()), jobs_of
        assert len({k for jobs in jobs_of.values() for k in jobs}) > 1  # (the folders are spread over the jobs)


def _counting(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[object]]:
    """Each `HeldViews` made and each import list decoded from the facts files, as they come."""
    from repodoc_lsp.knowledge import held
    from repodoc_lsp.shard import facts_file

    made: list[held.HeldViews] = []
    real_init, real_imports = held.HeldViews.__init__, facts_file.structure_imports
    decoded: list[object] = []

    def noted(self: held.HeldViews, *args: Any) -> None:
        real_init(self, *args)
        made.append(self)

    def counted(value: Any) -> Any:
        decoded.append(value)
        return real_imports(value)
    monkeypatch.setattr(held.HeldViews, "__init__", noted)
    monkeypatch.setattr(facts_file, "structure_imports", counted)
    return made, decoded


def test_link_and_share_jobs_read_a_files_imports_only_with_its_view(
        setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link job and a page share's answer job decode a file's imports only when its view is made (from its
    facts file's block, with its sketch), and a link job each of its own files' once more (whom it imports,
    for the page jobs); their relations are the files' module names alone."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.shard.graph_job import write_links, write_share_answers
    from repodoc_lsp.shard.split import file_share
    from repodoc_lsp.store.workspace import Workspace

    made, decoded = _counting(monkeypatch)
    ws = Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False)
    write_links(ws, setup.facts, (1, 2), 2, tmp_path / "l1")
    mine = [rel for rel in ws.digests if file_share(rel, 2) == 1]
    assert len(decoded) == made[-1].made + len(mine) and made[-1].made < len(ws.digests)
    assert ws.relations.module_of["pkg/a.py"] == "pkg.a" and not ws.relations.imported_by
    assert not any(ws.relations.imports_of(rel) for rel in ws.digests)
    write_links(Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False),
                setup.facts, (2, 2), 2, tmp_path / "l2")
    decoded.clear()
    ws = Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False)
    write_share_answers(ws, setup.facts, (1, 2), [tmp_path / "l1", tmp_path / "l2"], tmp_path / "answers")
    assert len(decoded) == made[-1].made and not ws.relations.imported_by


def test_a_page_job_given_link_records_decodes_no_other_files_imports(
        setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page job given the link records knows its own files' importers and tests, and how many files import
    every file (a file of one share imported only by files of another, by relative imports, by a test), as the
    whole tree's relations say, without decoding another file's imports but with its view's."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.shard.graph_job import write_links
    from repodoc_lsp.shard.pages import take_facts
    from repodoc_lsp.store.workspace import Workspace

    def workspace() -> Workspace:
        return Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False)
    whole = workspace()
    take_facts(whole, setup.facts)
    for k in (1, 2):
        write_links(workspace(), setup.facts, (k, 2), 3, tmp_path)
    made, decoded = _counting(monkeypatch)
    imported_elsewhere = False
    for j in (1, 2, 3):
        decoded.clear()
        ws = workspace()
        take_facts(ws, setup.facts, share=(j, 3), answers=tmp_path)
        own = cast("ShareFacts", ws.facts).own or frozenset()
        assert len(decoded) == len(own & ws.digests.keys()) + made[-1].made
        for rel in whole.digests:
            assert ws.relations.importer_count(rel) == whole.relations.importer_count(rel), (j, rel)
            if rel in own:
                assert ws.relations.importers(rel) == whole.relations.importers(rel), (j, rel)
                assert ws.relations.tests_of(rel) == whole.relations.tests_of(rel), (j, rel)
                imported_elsewhere |= bool(set(whole.relations.importers(rel)) - own)
            else:
                assert not ws.relations.imports_of(rel)
    assert imported_elsewhere
    assert whole.relations.tests_of("pkg/a.py") == ["tests/test_a.py"]


def test_link_records_missing_of_another_run_or_damaged_are_refused(setup: Setup, tmp_path: Path) -> None:
    links = _linked(setup, 2, 2)
    answers = tmp_path / "answers"

    def refused(folders: list[Path], share: str, *expected: str) -> None:
        code, _out, err = setup.run("graph", str(setup.root), "--out", str(setup.out), "--facts", *setup.facts,
                                    "--pages", share, "--links", *map(str, folders), "--output", str(answers))
        assert code == 2, err
        for text in expected:
            assert text in err
        assert "no answers written" in err
        assert not answers.exists() or not any(answers.iterdir())

    refused(links[:1], "1/2", "link job 2/2 missing: no links-for-1-of-2-from-2-of-2.jsonl.gz")
    refused(links, "1/3", "no link records for page share 1/3")
    code, _out, err = setup.run("generate", str(setup.root), *setup.flags, "--no-cache", "--facts", *setup.facts,
                                "--pages", "1/2", "--graph", str(links[0]))  # a page job answering its share
    assert code == 2 and "link job 2/2 missing" in err and "no page written" in err, err
    assert not (setup.out / MANIFEST).exists()
    one = links[1] / "links-for-1-of-2-from-2-of-2.jsonl.gz"  # (link share 1/2 has no Python file)
    data = one.read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    (other / one.name).write_bytes(data[:-8] + bytes(b ^ 0xFF for b in data[-8:]))  # its checksum broken
    refused([other, links[0]], "1/2", f"{other / one.name}: damaged link records")
    lines = gzip.decompress(data).split(b"\n")
    header = json.loads(lines[0])
    files, counted = header["files"], header["counted"]
    assert files and counted
    for change, expected in (({"repodoc": "0.0.1"}, "made by repodoc 0.0.1"),
                             ({"version": 2}, "link records format version 2, this repodoc reads version 3"),
                             ({"counted": 7}, f"damaged link records: it ends after {files} of {files} files and "
                                             f"{counted} of 7 counts"),
                             ({"inputs": "0" * 40}, "made from other facts files or other file contents"),
                             ({"link": [2, 3]}, "")):
        (other / one.name).write_bytes(gzip.compress(b"\n".join([json.dumps({**header, **change}).encode(),
                                                                  *lines[1:]])))
        refused([other, links[0]], "1/2", f"{other / one.name}: {expected}" if expected else
                f"made by link job 1/2, but {other / one.name} by one of 3")
    (other / one.name).write_bytes(gzip.compress(b"\n".join([*lines[:1], *lines[2:]])))  # a file left out
    refused([other, links[0]], "1/2", f"{other / one.name}: damaged link records: it ends after")
    counts = next(i for i, line in enumerate(lines) if line.startswith(b'{"counts"'))
    for damage in (b'{"counts":[["pkg/a.py",0]]}', b'{"counts":[["pkg/a.py"]]}', b'{"counts":{}}'):
        (other / one.name).write_bytes(gzip.compress(b"\n".join([*lines[:counts], damage, *lines[counts + 1:]])))
        refused([other, links[0]], "1/2", f"{other / one.name}: damaged link records: a counts line of the wrong form")
    imports = next(i for i, line in enumerate(lines) if b'"imports":' in line)
    damaged = lines[imports].replace(b'"imports":[]', b'"imports":[1]').replace(b'"imports":["', b'"imports":[1,"')
    (other / one.name).write_bytes(gzip.compress(b"\n".join([*lines[:imports], damaged, *lines[imports + 1:]])))
    for path in links[0].iterdir():  # a page job's folder: every link job's records
        shutil.copy(path, other)
    code, _out, err = setup.run("generate", str(setup.root), *setup.flags, "--no-cache", "--facts", *setup.facts,
                                "--pages", "1/2", "--graph", str(other))
    assert code == 2 and f"{other / one.name}: damaged link records: a file's line" in err, err
    assert not (setup.out / MANIFEST).exists()
    refused([links[0], links[0], links[1]], "1/2", "are both of link job 1/2")
    with _changed_since(setup.root / "pkg/b.py"):  # the link jobs' records are not this checkout's
        refused(links, "2/2", "made from other facts files or other file contents")
    for folder in links:
        shutil.rmtree(folder)


def test_a_page_job_reads_its_own_files_sources_and_the_final_check_the_others(setup: Setup) -> None:
    """A page job given the link records reads the sources of its own folders' files only: with a file changed
    since the analysis, the page job of its folder refuses, naming it, and the other one writes its pages from
    the facts files; the merge job's `--check` proves the contents of every file (a tree merged before the
    change is then not up to date, its file's page named)."""
    links = _linked(setup, 2, 2)
    together = setup.base / "links-for-2"
    for folder in links:
        shutil.copytree(folder, together, dirs_exist_ok=True)
    shares = _page_shares_of(setup, together, 2)
    setup.ok("merge", *map(str, shares), "--out", str(setup.out))
    merged = setup.out.rename(setup.base / "merged")
    with _changed_since(setup.root / "pkg/b.py"):
        codes = {}
        for k in (1, 2):
            codes[k], _out, err = setup.run("generate", str(setup.root), *setup.flags, "--no-cache", "--facts",
                                            *setup.facts, "--pages", f"{k}/2", "--graph", str(together))
            if codes[k]:
                assert "pkg/b.py: changed since its analysis" in err and "no page written" in err, err
            shutil.rmtree(setup.out, ignore_errors=True)
        assert sorted(codes.values()) == [0, 2], codes
        merged.rename(setup.out)
        code, out, err = setup.run("generate", str(setup.root), *setup.flags, "--facts", *setup.facts, "--check")
        assert code == 1 and "pkg/b.py_docs.md" in out + err, out + err
    for folder in (*shares, *links, together, setup.out):
        shutil.rmtree(folder)


def _page_shares_of(setup: Setup, graph: Path, m: int) -> list[Path]:
    shares = []
    for k in range(1, m + 1):
        setup.generate("--no-cache", "--facts", *setup.facts, "--pages", f"{k}/{m}", "--graph", str(graph))
        shares.append(setup.out.rename(setup.base / f"own{k}"))
    return shares


def test_a_link_job_reads_the_index_and_the_blocks_it_consults_only(
        setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link job reads each facts file's index, and a file's block only when its share's linking needs it (a view
    consulted, its own files' imports): a damaged block of a file it does not need changes nothing of its records
    (reading every block was most of what every link job paid per file of the tree, bench/README.md, issue 40).
    The link job of that file's share and the page job of its folder refuse the facts file, naming it."""
    from repodoc_lsp.config import Settings
    from repodoc_lsp.shard import members
    from repodoc_lsp.shard.facts_file import FactsReader, ShardError
    from repodoc_lsp.shard.graph_job import write_links
    from repodoc_lsp.shard.split import file_share, folder_shares, folder_weights
    from repodoc_lsp.store.discover import discover
    from repodoc_lsp.store.workspace import Workspace

    def workspace() -> Workspace:
        return Workspace(setup.root, Settings(output=str(setup.out)), use_cache=False, incremental=False)
    guide = "docs_src/guide.md"  # (no view: no resolution consults it) of the second facts file and link share 1
    assert file_share(guide, 3) == 2 and file_share(guide, 2) == 1
    monkeypatch.setattr(members, "BLOCK", 1)  # a block per file
    apart = _as_share(setup.facts[1], tmp_path / "apart.jsonl.gz", (2, 3))
    monkeypatch.undo()
    reader = FactsReader(Path(apart))
    try:
        at = next(r.at for r in reader.indexed(lambda _rel: False) if r.path == guide)
    finally:
        reader.close()
    data = bytearray(Path(apart).read_bytes())
    data[at + 30] ^= 0xFF  # its block's deflated bytes
    damaged = tmp_path / "damaged.jsonl.gz"
    damaged.write_bytes(data)
    facts = [setup.facts[0], str(damaged), setup.facts[2]]
    write_links(workspace(), setup.facts, (2, 2), 2, tmp_path / "intact")
    write_links(workspace(), facts, (2, 2), 2, tmp_path / "links")
    assert _inflated(tmp_path / "links") == _inflated(tmp_path / "intact")
    with pytest.raises(ShardError, match=f"{damaged} \\(shard 2/3\\): damaged facts file: "):
        write_links(workspace(), facts, (1, 2), 2, tmp_path / "mine")
    write_links(workspace(), setup.facts, (1, 2), 2, tmp_path / "links")
    found = discover(setup.root, Settings(output=str(setup.out)))
    share = folder_shares(folder_weights(found.files, found.folders), 2)["docs_src"]
    code, _out, err = setup.run("generate", str(setup.root), *setup.flags, "--no-cache", "--facts", *facts,
                                "--pages", f"{share}/2", "--graph", str(tmp_path / "links"))
    assert code == 2 and f"{damaged} (shard 2/3): damaged facts file: " in err and "no page written" in err, err
    assert not (setup.out / MANIFEST).exists()
