"""The symbol graph's answers, computed once by the graph job (`repodoc graph`, `graph_job.py`) and read by
each page job for its own share of the pages: a page job then holds no graph of the whole tree.

A page's view reads the graph only through its gather function (`render/gather.py`), and for a file
those reads are `gather.graph_reads(site, rel)`'s. The graph job calls that for every input file with
the graph behind a `Recorder`, which notes each query and its answer; a page job's `Answers` answers
the same queries from those notes. Gathering is deterministic, so the page job asks exactly what was
noted (a query that was not is an error, never a guess).

The answers file of page share K of M (`answers-K-of-M.jsonl.gz` in the graph job's folder; format
version 1, examples/README.md): JSON lines in gzip blocks (`members.py`), data only, like a facts file:

    {"format": "repodoc-graph", "version": 1, "repodoc": "0.1.0", "analysis": "...", "sketches": "...",
     "tree": {...}, "pages": [K, M], "inputs": "<digest of every input's path and content digest>",
     "files": 411}                                                   <- the header
    {"file": "pkg/a.py", "reads": 2}                                 <- each input file, then
    <query>\t<answer>                                                 <- each of its reads
    <query>\t<answer>
    {"end": 411}

A query is the JSON of `[method, args, keyword args]` (compact JSON holds no tab); an answer is JSON,
read when a page asks (a page job holds its share's answers as their bytes), where a list is a list,
`{"t": [...]}` a tuple, `{"m": [[key, value], ...]}` a mapping (in its order) and `{"D": [file,
qualname, kind, line]}` a definition: the page's key is a digest of exactly those types.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from repodoc_lsp import __version__
from repodoc_lsp.knowledge.graph import Def
from repodoc_lsp.shard.facts_file import (
    MOST_BLOCK,
    ShardError,
    Tree,
    analysis_version,
    check_made_alike,
    sketch_stamp,
    tree_from_json,
)
from repodoc_lsp.shard.members import BlockError, BlockWriter, blocks, compact_json, json_table

FORMAT = "repodoc-graph"
FORMAT_VERSION = 1
Share = tuple[int, int]

_json = compact_json


def answers_path(folder: Path, share: Share) -> Path:
    """Where the graph job writes the answers of page share `share` in its output `folder`."""
    return folder / f"answers-{share[0]}-of-{share[1]}.jsonl.gz"


def inputs_digest(digests: Mapping[str, str]) -> str:
    """A digest of the inputs as a job took them: each analysed file's path and content digest."""
    h = hashlib.blake2b(digest_size=20)
    for rel in sorted(digests):
        h.update(f"{rel}\x00{digests[rel]}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def query(name: str, args: tuple, kwargs: Mapping[str, Any]) -> str:
    """A graph query as the answers file keys it."""
    return _json([name, args, sorted(kwargs.items())])


def encode(value: object) -> object:
    """A graph answer as JSON that `decode` turns back into a value of the same types."""
    if value is None or isinstance(value, str | int):
        return value
    if isinstance(value, tuple):
        return {"t": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, Def):
        return {"D": [value.rel, value.qualname, value.kind, value.line]}
    if isinstance(value, Mapping):
        return {"m": [[k, encode(v)] for k, v in value.items()]}
    raise TypeError(f"a graph answer of type {type(value).__name__}")


def decode(value: object) -> Any:
    """`encode`'s value back; ValueError when `value` is not of that form."""
    if value is None or isinstance(value, str | int):
        return value
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict) and len(value) == 1:
        (tag, items), = value.items()
        if isinstance(items, list):
            if tag == "t":
                return tuple(decode(v) for v in items)
            if tag == "m" and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in items):
                return {k: decode(v) for k, v in items}
            if tag == "D" and len(items) == 4 and all(isinstance(x, str) for x in items[:3]) \
                    and type(items[3]) is int:
                return Def(items[0], items[1], items[2], items[3])
    raise ValueError("an answer of the wrong form")


class Recorder:
    """The graph, each query answered by it and noted in `reads` (encoded)."""

    def __init__(self, graph: object) -> None:
        self._graph = graph
        self.reads: dict[str, str] = {}  # query -> the JSON of its answer

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        method = getattr(self._graph, name)

        def noted(*args: Any, **kwargs: Any) -> Any:
            value = method(*args, **kwargs)
            self.reads[query(name, args, kwargs)] = _json(encode(value))
            return value
        return noted


class Answers:
    """A page share's graph: each query answered from the answers file `name`'s notes (`reads`)."""

    def __init__(self, reads: dict[str, bytes], name: str) -> None:
        self._reads = reads
        self._name = name

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def answer(*args: Any, **kwargs: Any) -> Any:
            asked = query(name, args, kwargs)
            if asked not in self._reads:
                raise ShardError(f"{self._name}: no answer to {asked} (the page jobs and the graph job must run "
                                 "the same repodoc on the same facts files)")
            try:
                return decode(json.loads(self._reads[asked]))
            except (ValueError, RecursionError):
                raise ShardError(f"{self._name}: damaged graph answers: {asked}") from None
        return answer


class AnswersWriter(BlockWriter):
    """Writes one share's answers file: `add` each file's reads, then `close` (renamed into place then)."""

    def __init__(self, path: Path, tree: Tree, share: Share, inputs: str, files: int) -> None:
        super().__init__(path, {"format": FORMAT, "version": FORMAT_VERSION, "repodoc": __version__,
                                "analysis": analysis_version(), "sketches": sketch_stamp(), "tree": tree.as_json(),
                                "pages": list(share), "inputs": inputs, "files": files})

    def add(self, rel: str, reads: Mapping[str, str]) -> None:
        """`rel`'s reads: query -> the JSON of its answer (`Recorder.reads`)."""
        self.line(_json({"file": rel, "reads": len(reads)}))
        for asked, answer in reads.items():
            self.line(f"{asked}\t{answer}")
        self.end_record()


def read_answers(folder: Path, share: Share, tree: Tree, inputs: str, files: Iterable[str]) -> Answers:
    """The answers of page share `share` from the graph job's output `folder`, checked against this run:
    its version, tree, inputs (`inputs_digest`) and `files` (the share's input files, each once).
    ShardError naming the file when it is missing, of another run, or damaged."""
    path = answers_path(folder, share)
    name = str(path)
    reads: dict[str, bytes] = {}
    expected = set(files)
    total = len(expected)
    try:
        with open(path, "rb") as raw:
            lines = (line for _at, data in blocks(raw, MOST_BLOCK) for line in data.split(b"\n")[:-1])
            header = _parse(next(lines, b""), name)
            _check_header(header, name, share, tree, inputs, total)
            for line in lines:
                value = _parse(line, name)
                if "end" in value:
                    if value != {"end": total} or expected or next(lines, None) is not None:
                        raise ShardError(f"{name}: damaged graph answers: it ends after {total - len(expected)} "
                                         f"of {total} files")
                    return Answers(reads, name)
                rel, noted = value.get("file"), value.get("reads")
                if not (isinstance(rel, str) and type(noted) is int and noted >= 0 and rel in expected):
                    raise ShardError(f"{name}: damaged graph answers: a file's line of the wrong form")
                expected.discard(rel)
                for _ in range(noted):
                    asked, tab, answer = next(lines, b"").partition(b"\t")
                    if not (tab and asked.startswith(b"[")):
                        raise ShardError(f"{name}: damaged graph answers: {rel}: a read of the wrong form")
                    reads[asked.decode("utf-8", "surrogatepass")] = answer
    except FileNotFoundError:
        raise ShardError(f"{name}: no graph answers for page share {share[0]}/{share[1]} (run `repodoc graph "
                         f"--pages {share[1]}` and give its output folder)") from None
    except (OSError, BlockError, UnicodeDecodeError) as exc:
        raise ShardError(f"{name}: damaged graph answers: {exc}") from None
    raise ShardError(f"{name}: damaged graph answers: cut short")


def _parse(line: bytes, name: str) -> dict[str, Any]:
    return json_table(line, lambda why: ShardError(f"{name}: damaged graph answers: {why}"))


def _check_header(header: dict[str, Any], name: str, share: Share, tree: Tree, inputs: str, files: int) -> None:
    check_made_alike(header, name, "graph answers", FORMAT, FORMAT_VERSION)
    made = tree_from_json(header.get("tree"))
    if made is None:
        raise ShardError(f"{name}: damaged graph answers: its header is of the wrong form")
    if why := tree.differs(made):
        raise ShardError(f"{name}: made from another tree: {why}")
    if header.get("pages") != list(share):
        raise ShardError(f"{name}: the answers of page share {header.get('pages')}, not of {list(share)}")
    if header.get("inputs") != inputs or header.get("files") != files:
        raise ShardError(f"{name}: made from other facts files or other file contents: give the page jobs the "
                         "facts files the graph job read, on the same checkout")
