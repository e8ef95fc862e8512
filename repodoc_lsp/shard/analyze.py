"""`repodoc analyze [ROOT] --shard K/N --output FILE`: the facts of one share of the inputs, written to
a facts file. Facts the analysis cache holds for a file's content are taken from it, the others are
analysed (in worker processes for many) and cached: a re-run on a warm cache costs the changes."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.treesitter import set_blank_macros
from repodoc_lsp.config import Settings, cache_dir
from repodoc_lsp.pipeline.pool import run_chunks
from repodoc_lsp.pipeline.runtime import Runtime, default_jobs
from repodoc_lsp.shard.facts_file import FactsWriter, Record, Share, tree_of
from repodoc_lsp.shard.split import files_of_share
from repodoc_lsp.store.cache import Encoded, FactsCache, digest
from repodoc_lsp.store.discover import discover
from repodoc_lsp.store.facts import Analysed, analyse_chunk, analyse_path
from repodoc_lsp.store.regular import read_regular
from repodoc_lsp.store.scan import PARALLEL_THRESHOLD, STORE_BATCH
from repodoc_lsp.store.workspace import CancelToken, ProgressFn

BATCH = 500  # files whose cached facts are asked for (and written out) together


@dataclass
class AnalyzeSummary:
    files: int = 0  # the share's inputs
    analysed: int = 0
    cached: int = 0
    skipped: list[Record] = field(default_factory=list)
    cancelled: bool = False


def analyze(root: Path, settings: Settings, share: Share, output: Path, *, runtime: Runtime,
            jobs: int | None = None, use_cache: bool = True, progress: ProgressFn | None = None,
            cancel: CancelToken | None = None) -> AnalyzeSummary:
    """Write the facts of share `share` of the inputs under `root` to `output` (nothing when cancelled)."""
    root = root.resolve()
    set_blank_macros(settings.blank_macros)  # before the cache opens and the workers start (as `Workspace`)
    found = discover(root, settings)
    mine = files_of_share(found.files, share)
    summary = AnalyzeSummary(files=len(mine))
    cache = FactsCache(cache_dir(settings) if use_cache else None)
    writer = FactsWriter(output, tree_of(root, found.files), share, len(mine))
    try:
        todo: list[str] = []
        for record in _cached(root, mine, cache, todo):
            _add(writer, record, summary)
            summary.cached += 1
            if progress:
                progress("analyse", writer.count, len(mine), "")
        rows: list[tuple[str, FileFacts | Encoded]] = []  # new cache rows, written in batches
        for result in _analysed(root, todo, settings, runtime, jobs, cancel):
            if result.facts is not None:
                rows.append((result.digest, result.row or result.facts))
                summary.analysed += 1
                if len(rows) >= STORE_BATCH:
                    cache.put_many(rows)
                    rows.clear()
            _add(writer, Record(result.rel, result.digest, result.size, result.facts, result.skip_reason), summary)
            if progress:
                progress("analyse", writer.count, len(mine), "")
        cache.put_many(rows)
        if cancel is not None and cancel.is_set():
            summary.cancelled = True
            writer.discard()
        else:
            writer.close()
    except BaseException:
        writer.discard()
        raise
    finally:
        cache.close()
    return summary


def _add(writer: FactsWriter, record: Record, summary: AnalyzeSummary) -> None:
    writer.add(record)
    if record.facts is None:
        summary.skipped.append(record)


def _cached(root: Path, rels: list[str], cache: FactsCache, todo: list[str]) -> Iterator[Record]:
    """The records of the files among `rels` whose content's facts the cache holds (or that cannot be
    read), a batch at a time; the others are put in `todo`."""
    for start in range(0, len(rels), BATCH):
        read: dict[str, tuple[str, int]] = {}
        for rel in rels[start : start + BATCH]:
            try:
                data = read_regular(root / rel)
            except OSError as exc:
                yield Record(rel, skipped=f"unreadable: {exc.strerror or exc}")
                continue
            read[rel] = (digest(data, rel), len(data))
        found = cache.get_many({key for key, _ in read.values()}) if cache.enabled else {}
        for rel, (key, size) in read.items():
            if key in found:
                yield Record(rel, key, size, found[key])
            else:
                todo.append(rel)


def _analysed(root: Path, todo: list[str], settings: Settings, runtime: Runtime, jobs: int | None,
              cancel: CancelToken | None) -> Iterator[Analysed]:
    """Each file of `todo` analysed: in worker processes when there are enough of them."""
    workers = min(default_jobs(settings, jobs), max(1, len(todo) // 8))
    if workers > 1 and len(todo) >= PARALLEL_THRESHOLD:
        chunk = max(4, min(32, len(todo) // (workers * 8) or 1))
        chunks = [todo[i : i + chunk] for i in range(0, len(todo), chunk)]
        for results in run_chunks(functools.partial(analyse_chunk, str(root)), chunks, workers=workers,
                                  context=runtime.context(), initializer=runtime.worker_setup(), cancel=cancel,
                                  what="analysis"):
            yield from results
        return
    for rel in todo:
        if cancel is not None and cancel.is_set():
            return
        yield analyse_path(str(root), rel)
