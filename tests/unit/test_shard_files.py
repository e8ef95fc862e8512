"""The facts file (shard/facts_file.py) and the shares (shard/split.py), in process."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.render.pages import Page
from repodoc_lsp.shard.facts_file import FactsReader, FactsWriter, Record, ShardError, tree_of
from repodoc_lsp.shard.split import ShareError, file_share, folder_weights, page_folder, pages_of_share, parse_share
from repodoc_lsp.store.cache import INT_MAX, INT_MIN, encode

TREE = tree_of(Path("/x/proj"), ["a.py", "b/c.py"])
# Text as a file's facts can hold it (JSON carries any code point; lone surrogates too, passed through)
TEXT = st.text(st.characters(codec="utf-8"), max_size=12)


def _int32(value: object) -> bool:
    """Every integer of facts as the analysis makes them (lines, columns, counts) fits 32 bits."""
    if isinstance(value, dict):
        return all(map(_int32, value.values()))
    if isinstance(value, list):
        return all(map(_int32, value))
    return not isinstance(value, int) or isinstance(value, bool) or INT_MIN <= value <= INT_MAX


def _round_trip(path: Path, records: list[Record]) -> list[Record]:
    writer = FactsWriter(path, TREE, (2, 3), len(records))
    for record in records:
        writer.add(record)
    writer.close()
    reader = FactsReader(path)
    assert reader.header.tree == TREE and reader.header.shard == (2, 3)
    try:  # what was written of each
        return [Record(r.path, r.digest, r.size, r.facts, r.skipped) for r in reader.records()]
    finally:
        reader.close()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(facts=st.from_type(FileFacts).filter(lambda f: _int32(json.loads(encode(f).data))), path=TEXT.filter(bool),
       reason=TEXT)
def test_any_facts_come_back_equal(tmp_path: Path, facts: FileFacts, path: str, reason: str) -> None:
    records = [Record(path, "d" * 40, 12, facts), Record(path + "2", "e" * 40, 3, None, reason),
               Record(path + "3", skipped=reason)]
    assert _round_trip(tmp_path / "f.jsonl.gz", records) == records


def test_analysed_files_come_back_equal(tmp_path: Path) -> None:
    sources = {
        "m.py": b'"""Doc."""\nimport os\nfrom .x import y as z\n\n\nclass A(B):\n    """A."""\n    x: int = 1\n\n'
                b"    async def f(self, a=1) -> int:\n        return eval(a)\n\n\nif __name__ == '__main__':\n"
                b"    A()\n",
        "broken.py": b"def f(:\n    pass\n",
        "notes.md": "# T\u00e9\n\n## Part\n\ntext `code`\n".encode(),
        "x.c": b"#include <stdio.h>\n/** Adds. */\nint add(int a, int b) { return a + b; }\n",
    }
    records = [Record(name, "d" * 40, len(data), analyse_source(name, data)) for name, data in sources.items()]
    assert _round_trip(tmp_path / "f.jsonl.gz", records) == records


def test_a_reader_refuses_what_is_not_a_facts_file(tmp_path: Path) -> None:
    path = tmp_path / "f.gz"
    path.write_bytes(b"")
    with pytest.raises(ShardError, match="damaged facts file: empty"):
        FactsReader(path)
    with pytest.raises(ShardError, match="not a file"):
        FactsReader(tmp_path)


def test_a_writer_leaves_nothing_when_it_fails(tmp_path: Path) -> None:
    writer = FactsWriter(tmp_path / "f.jsonl.gz", TREE, (1, 1), 1)
    writer.discard()
    assert list(tmp_path.iterdir()) == []


def test_shares_are_parsed_strictly() -> None:
    assert parse_share("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "3", "a/b", "-1/2", "1/0", " 1/2"):
        with pytest.raises(ShareError):
            parse_share(bad)


def test_files_and_pages_are_split_whole_and_once() -> None:
    files = [f"f{i // 7}/m{i}.py" for i in range(60)] + ["top.py"]
    assert sorted(r for k in (1, 2, 3) for r in files if file_share(r, 3) == k) == sorted(files)
    assert len({file_share(r, 3) for r in files}) == 3
    pages = [Page(kind, rel, "") for rel in files for kind in ("docs", "kw")]
    pages += [Page(kind, folder, "") for folder in {"", *(r.rsplit("/", 1)[0] for r in files if "/" in r)}
              for kind in ("index", "doc")] + [Page("llms", "", "")]
    weights = folder_weights(files, {page_folder(p) for p in pages})
    shares = [pages_of_share(pages, (k, 4), weights) for k in (1, 2, 3, 4)]
    assert sorted(p.path for s in shares for p in s) == sorted(p.path for p in pages)
    folders = [{page_folder(p) for p in s} for s in shares]
    assert all(not (a & b) for i, a in enumerate(folders) for b in folders[i + 1:])  # a folder in one share
    largest = max(sum(page_folder(p) == f for p in pages) for f in set().union(*folders))
    assert all(abs(len(s) - len(pages) / 4) <= largest for s in shares), [len(s) for s in shares]  # about even


def test_the_workflow_example_runs_commands_that_exist() -> None:
    """examples/ci-matrix.yml (examples/README.md): each repodoc command in it is one the CLI takes."""
    import re
    import shlex

    import yaml

    from repodoc_lsp.cli import _parser

    workflow = yaml.safe_load((Path(__file__).parents[2] / "examples/ci-matrix.yml").read_text())
    commands = [step["run"] for job in workflow["jobs"].values() for step in job["steps"]
                if "repodoc " in step.get("run", "")]
    assert [c.split()[1] for c in commands] == ["analyze", "graph", "generate", "merge", "generate"]
    assert "--link " in commands[1] and '--graph "$RUNNER_TEMP/links"' in commands[2]
    jobs = workflow["jobs"]
    assert [jobs[j].get("needs") for j in ("link", "pages", "merge")] == ["analyze", "link", "pages"]
    for command in commands:
        text = re.sub(r"\$\{\{ *matrix\.\w+ *\}\}", "1", command).replace("$ANALYZE_SHARDS", "4")
        text = text.replace("$PAGE_SHARES", "2").replace("$LINK_SHARES", "2").replace('"$RUNNER_TEMP"', "/tmp")
        text = text.replace("$RUNNER_TEMP", "/tmp")
        _parser().parse_args(shlex.split(text)[1:])  # exits (SystemExit) on a flag it does not take


def test_an_interrupted_analysis_writes_no_facts_file(tmp_path: Path) -> None:
    import threading

    from repodoc_lsp.config import Settings
    from repodoc_lsp.pipeline.runtime import LIBRARY
    from repodoc_lsp.shard.analyze import analyze

    root = tmp_path / "ws"
    root.mkdir()
    for i in range(3):
        (root / f"m{i}.py").write_text(f"def f{i}():\n    pass\n")
    cancel = threading.Event()
    cancel.set()
    summary = analyze(root, Settings(), (1, 1), tmp_path / "f.gz", runtime=LIBRARY, use_cache=False, cancel=cancel)
    assert summary.cancelled and summary.analysed == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ws"]  # no facts file, no temporary one


def test_facts_left_in_the_file_are_read_again_from_their_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    """A reader that decodes no file's facts notes where each block starts; `FactsSource` reads any file's
    facts again from its block alone (blocks of a few records here), equal to those written."""
    from repodoc_lsp.shard import members
    from repodoc_lsp.shard.share_facts import FactsSource

    monkeypatch.setattr(members, "BLOCK", 600)  # the writer's (`members.BlockWriter`)
    sources = {f"p{i}/m,{i}.py": f'"""Module {i}."""\nimport os\n\n\ndef f{i}(x):\n    return x\n'.encode()
               for i in range(40)}
    records = [Record(rel, f"{i:040x}", len(data), analyse_source(rel, data)) for i, (rel, data) in
               enumerate(sources.items())]
    path = tmp_path / "f.jsonl.gz"
    writer = FactsWriter(path, TREE, (1, 1), len(records))
    for record in records:
        writer.add(record)
    writer.close()
    reader = FactsReader(path)
    source = FactsSource([reader])
    read = list(reader.records(lambda rel: False))
    assert len({r.at for r in read}) > 5 and all(r.facts is None and r.sketch is not None for r in read)
    for r in read:
        source.note(0, r)
    wanted = [records[3].path, records[4].path, records[37].path]
    assert source.get_many(wanted) == {r.path: r.facts for r in records if r.path in wanted}
    assert source.reads <= 3


def test_graph_answers_come_back_of_the_same_types() -> None:
    """A page's key is a digest of the exact types its gather function returns (`marshal`): tuples stay
    tuples, lists lists, mappings keep their order, definitions come back as definitions."""
    import marshal

    from repodoc_lsp.knowledge.graph import Def
    from repodoc_lsp.shard.answers import decode, encode

    value = [("a.py", "A", {"b.py": (1, 2), "a.py": ()}), None, ("x", ("y", "z")), Def("a.py", "A.m", "method", 3),
             {"zeta": ("a.py", "A"), "alpha": ("b.py", "")}, [], 7, True, "s"]
    back = decode(json.loads(json.dumps(encode(value))))
    assert back == value and type(back[3]) is Def and list(back[4]) == ["zeta", "alpha"]
    plain = [v for v in value if not isinstance(v, Def)]  # (marshal takes plain data only)
    assert marshal.dumps([v for v in back if not isinstance(v, Def)], 2) == marshal.dumps(plain, 2)
    for bad in ({"t": 1}, {"x": []}, {"D": ["a", "b", "c", "3"]}, {"m": [["k"]]}, 1.5, {"t": [], "m": []}):
        with pytest.raises(ValueError):
            decode(bad)


def _indexed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Record]]:
    """A facts file of 30 analysed files and a skipped one, a few records a block."""
    from repodoc_lsp.shard import members

    monkeypatch.setattr(members, "BLOCK", 600)
    sources = {f"p{i}/m{i}.py": f'"""Module {i}."""\nimport os\n\n\ndef f{i}(x):\n    return x\n'.encode()
               for i in range(30)}
    records = [Record(rel, f"{i:040x}", len(data), analyse_source(rel, data)) for i, (rel, data) in
               enumerate(sources.items())]
    records.append(Record("z/blob.bin", "f" * 40, 9, None, "not text"))
    path = tmp_path / "f.jsonl.gz"
    writer = FactsWriter(path, TREE, (1, 1), len(records))
    for record in records:
        writer.add(record)
    writer.close()
    return path, records


def test_a_reader_of_the_index_decodes_the_lines_of_the_files_wanted_only(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file's record comes from the index as a reader of every line reads it without imports and sketch
    (digest, size, pages, sketch or not, its block; a skipped file's reason); only the files wanted have their
    lines decoded, with their facts, from their blocks alone."""
    from repodoc_lsp.shard import facts_file

    path, records = _indexed_file(tmp_path, monkeypatch)
    reader = FactsReader(path)
    every = list(reader.records(lambda rel: False, light=True))
    decoded: list[str] = []
    real = facts_file.FactsReader.record

    def noted(self: FactsReader, value: dict, *args: object, **kwargs: object) -> Record:
        decoded.append(value["path"])
        return real(self, value, *args, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr(facts_file.FactsReader, "record", noted)
    wanted = {records[4].path, records[17].path}
    read = list(FactsReader(path).indexed(wanted.__contains__, with_sketch=False))
    assert sorted(decoded) == sorted(wanted)
    assert [r for r in read if r.path not in wanted] == [r for r in every if r.path not in wanted]
    assert {r.path: r.facts for r in read if r.path in wanted} == {r.path: r.facts for r in records if r.path in wanted}
    assert all(r.imports for r in read if r.path in wanted) and read[-1].skipped == "not text"


def _with_index(path: Path, change: Callable[[bytes], bytes]) -> Path:
    """`path` with its index's lines changed by `change` (every block before it as it was)."""
    from repodoc_lsp.shard.facts_file import TAIL

    data = path.read_bytes()
    at = json.loads(gzip.decompress(data[-TAIL:]))["index"]
    damaged = path.with_name("damaged.jsonl.gz")
    damaged.write_bytes(data[:at] + gzip.compress(change(gzip.decompress(data[at:-TAIL]))) + data[-TAIL:])
    return damaged


def test_an_index_that_does_not_say_what_the_records_say_is_refused(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path, records = _indexed_file(tmp_path, monkeypatch)
    other = records[5]
    damaged = _with_index(path, lambda index: index.replace(other.digest.encode(), b"0" * 40))
    with pytest.raises(ShardError, match="damaged facts file: its index does not say what its records say"):
        list(FactsReader(damaged).records())  # a reader of every line
    with pytest.raises(ShardError, match=f"damaged facts file: {other.path}: its index row does not say what"):
        list(FactsReader(damaged).indexed({other.path}.__contains__))  # the page job of its folder
    assert len(list(FactsReader(damaged).indexed(lambda rel: False))) == len(records)  # another page job's
    blob = b',["z/blob.bin","' + b"f" * 40 + b'",9,"not text"]'
    for change, why in ((lambda index: index.replace(blob, b""), "its index does not hold its 31 files"),
                        (lambda index: index[: len(index) // 2], "a block is cut short"),
                        (lambda index: index.replace(b'"index":[', b'"index":[7,'), "a row of its index")):
        with pytest.raises(ShardError, match=f"damaged facts file: {why}"):
            list(FactsReader(_with_index(path, change)).indexed(lambda rel: False))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ShardError, match="damaged facts file: "):
        list(FactsReader(cut).indexed(lambda rel: False))
