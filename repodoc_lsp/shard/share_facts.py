"""The facts a page share holds: those of its own folders' files, read with the facts files, and every
other file's left in its facts file, read again (its block alone) when a page needs it (a folder's index
says what a sub-folder of another share is for, llms.txt outlines the most imported files).

`ShareFacts` is the workspace's `FactsStore` in a page job: the other files are pending in it, as
facts the analysis cache holds are in a scan's store, and `FactsSource` plays the cache's part (keyed
by path, not by content digest: two files of one content may differ in facts by their names)."""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from repodoc_lsp.analysis.model import FileFacts, Import
from repodoc_lsp.knowledge.views import Sketch
from repodoc_lsp.shard.facts_file import MOST_BLOCK, FactsReader, Record, ShardError, head_of
from repodoc_lsp.shard.members import BlockError, block_at
from repodoc_lsp.store.cache import FactsCache
from repodoc_lsp.store.facts import FactsStore

# blocks `FactsSource.sketch` keeps the records of (about 80 KB each): a link job's views are made from blocks all
# over the tree, and with 64 held it inflated each block three times (bench/README.md, issue 40)
_BLOCKS_HELD = 1024


class FactsSource(FactsCache):
    """Files' facts read again from the facts files: `where` says, for a file, which of `readers` holds
    it and where its block starts. Read only: nothing is ever stored."""

    def __init__(self, readers: list[FactsReader]) -> None:
        super().__init__(None)
        self._readers = readers
        self._where: dict[str, tuple[int, int, str]] = {}  # path -> (reader, block, digest)
        self.reads = 0  # blocks read again (bench/README.md: a page share's reads)
        self._blocks: OrderedDict[tuple[int, int], list[bytes]] = OrderedDict()  # (reader, block) -> its lines

    def note(self, reader: int, record: Record) -> None:
        """`record`'s facts are in `readers[reader]`, at its block (`record.at`)."""
        self._where[record.path] = (reader, record.at, record.digest)

    @property
    def enabled(self) -> bool:
        return True

    def empty(self) -> bool:
        return not self._where

    def has_many(self, keys: Iterable[str]) -> set[str]:
        return {key for key in keys if key in self._where}

    def get_many(self, keys: Iterable[str]) -> dict[str, FileFacts]:
        """The facts of the files `keys` (paths), each block read once; ShardError when one is damaged."""
        by_block: dict[tuple[int, int], dict[str, str]] = defaultdict(dict)
        for path in keys:
            if (where := self._where.get(path)) is not None:
                by_block[where[:2]][path] = where[2]
        found: dict[str, FileFacts] = {}
        for (index, at), wanted in by_block.items():
            found.update(self._read(self._readers[index], at, wanted))
        return found

    def _lines(self, reader: FactsReader, at: int) -> list[bytes]:
        """The lines of `reader`'s block at `at`, read again."""
        self.reads += 1
        try:
            with open(reader.path, "rb") as raw:
                return reader.lines_of(block_at(raw, at, MOST_BLOCK))
        except (OSError, BlockError) as exc:
            raise reader.damaged(f"its block at {at}: {exc}") from None

    def _read(self, reader: FactsReader, at: int, wanted: dict[str, str]) -> dict[str, FileFacts]:
        lines = self._lines(reader, at)
        heads = [(head_of(path), path) for path in wanted]
        found: dict[str, FileFacts] = {}
        for i, line in enumerate(lines[:-1]):
            path = next((path for head, path in heads if line.startswith(head)), None)
            if path is not None:
                record = reader.record(reader.parse(line), light=True)  # (its line was checked when first read)
                facts = reader.with_facts(record, lines[i + 1]).facts
                if record.path != path or record.digest != wanted[path] or facts is None:
                    raise _not_indexed(reader, path)
                found[path] = facts
        if len(found) < len(wanted):
            raise _not_indexed(reader, min(wanted.keys() - found.keys()))
        return found

    def sketch(self, path: str) -> Sketch:
        """The graph sketch of the file `path` with its imports (its record's line holds both), its block read
        again; ShardError when it is damaged or has none."""
        record = self._record(path, with_sketch=True)
        if record.sketch is None:
            raise _not_indexed(self._readers[self._where[path][0]], path)
        return replace(record.sketch, imports=record.imports)

    def imports(self, path: str) -> tuple[Import, ...]:
        """The imports of the file `path` (a link job's own files': whom it imports), its block read again."""
        return self._record(path, with_sketch=False).imports

    def _record(self, path: str, with_sketch: bool) -> Record:
        reader_index, at, key = self._where[path]
        reader = self._readers[reader_index]
        head = head_of(path)
        line = next((line for line in self._block_lines(reader_index, at) if line.startswith(head)), None)
        record = None if line is None else reader.record(reader.parse(line), with_sketch=with_sketch)
        if record is None or record.digest != key:
            raise _not_indexed(reader, path)
        return record

    def _block_lines(self, reader_index: int, at: int) -> list[bytes]:
        """The records' lines of a block (not their facts'), those of the last `_BLOCKS_HELD` blocks read kept:
        a view made from its block inflated each time cost a graph job a third more CPU on the bench's tree."""
        lines = self._blocks.get((reader_index, at))
        if lines is not None:
            self._blocks.move_to_end((reader_index, at))
            return lines
        lines = self._lines(self._readers[reader_index], at)
        lines = [line for line in lines if line.startswith(b'{"path":')]  # its records, not their facts (2/3)
        self._blocks[(reader_index, at)] = lines
        if len(self._blocks) > _BLOCKS_HELD:
            self._blocks.popitem(last=False)
        return lines

    def get_imports_many(self, keys: Iterable[str]) -> dict:
        return {}

    def put_many(self, items: Iterable) -> bool:
        return False


def _not_indexed(reader: FactsReader, path: str) -> ShardError:
    """The error of a file's lines not as its facts file's index says: a job that reads a block only when it
    needs a file of it (the index alone read first) finds a damaged block there, or the facts file changed."""
    return reader.damaged(f"{path}: its lines are not what the index says (or the facts file changed since it "
                          "was read)")


class ShareFacts(FactsStore):
    """A page share's facts: its own files' held (`own`), the others' pending in `source`. Loading
    "every file's facts" (before a run renders its pages) loads the share's own."""

    def __init__(self, root: Path, source: FactsSource, own: frozenset[str] | None) -> None:
        super().__init__(root, source)
        self.source = source
        self.own = own  # None: every file
        self.paged: frozenset[str] = frozenset()  # the files that have pages of their own (all of them)

    def load_all(self) -> None:
        self.load(self if self.own is None else self.own)

    def imports_of(self, rel: str) -> tuple[Import, ...]:
        """`rel`'s imports: of its facts when held (analysed here), else read again from its facts file."""
        facts = self.loaded(rel)
        return facts.imports if facts is not None else self.source.imports(rel)
