"""`repodoc graph [ROOT] --facts FILE... --pages M --output DIR`: the symbol graph of the whole tree built
once, from the facts files' sketches (no file's facts read), and what each page share's pages ask of it
written to that share's answers file (`answers.py`): a page job given them holds no graph."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from repodoc_lsp.analysis.model import FileFacts, Language, Symbol, SymbolKind
from repodoc_lsp.render.gather import graph_reads
from repodoc_lsp.render.paths import folder_of
from repodoc_lsp.render.site import Site
from repodoc_lsp.shard.answers import AnswersWriter, Recorder, answers_path, inputs_digest
from repodoc_lsp.shard.facts_file import tree_of
from repodoc_lsp.shard.pages import take_facts
from repodoc_lsp.shard.split import folder_shares, folder_weights
from repodoc_lsp.store.workspace import ProgressFn, Workspace

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.graph import Graph
    from repodoc_lsp.shard.share_facts import ShareFacts


@dataclass
class GraphSummary:
    files: int = 0  # input files analysed (each has a line in its share's answers)
    shares: int = 0


def write_answers(ws: Workspace, facts: Sequence[str], pages: int, output: Path,
                  progress: ProgressFn | None = None) -> GraphSummary:
    """The answers of each of `pages` page shares, written to `output` (a folder); ShardError when the
    facts files are not the whole of this tree's analysis."""
    take_facts(ws, facts, progress, none_held=True)
    graph = ws.graph()
    recorder = Recorder(graph)
    paged = cast("ShareFacts", ws.facts).paged  # which files have pages: the facts files say, not the bases
    site = Site(ws.project, ws.root.as_posix(), ws.out.as_posix(), 0, ws.relations, _ClassBases(graph), {}, [],
                symbols=cast("Graph", recorder), known_paged=paged)
    shares = folder_shares(folder_weights({*ws.digests, *ws.read_skipped}, ws.folders), pages)
    of_share: dict[int, list[str]] = {k: [] for k in range(1, pages + 1)}
    for rel in sorted(ws.digests):
        of_share[shares.get(folder_of(rel), 1)].append(rel)
    tree = tree_of(ws.root, sorted({*ws.digests, *ws.read_skipped}))
    inputs = inputs_digest(ws.digests)
    output.mkdir(parents=True, exist_ok=True)
    done = 0
    for k, files in of_share.items():
        writer = AnswersWriter(answers_path(output, (k, pages)), tree, (k, pages), inputs, len(files))
        try:
            for rel in files:
                recorder.reads = {}
                graph_reads(site, rel)
                writer.add(rel, recorder.reads)
                done += 1
                if progress and (done % 256 == 0 or done == len(ws.digests)):
                    progress("graph", done, len(ws.digests), folder_of(rel))
            writer.close()
        except BaseException:
            writer.discard()
            raise
    return GraphSummary(len(ws.digests), pages)


class _ClassBases(Mapping[str, FileFacts]):
    """Each file's facts as far as `graph_reads` reads them (its classes' base names, as the graph read
    them): the graph job holds no file's facts, and a class's bases name the same definitions either way."""

    def __init__(self, graph: Graph) -> None:
        self._graph = graph

    def __getitem__(self, rel: str) -> FileFacts:
        sketch = self._graph.sketch(rel)
        if sketch is None:
            raise KeyError(rel)
        bases = sketch.own[4]
        return FileFacts(Language.PYTHON, 0, symbols=tuple(
            Symbol(q.rpartition(".")[2], q, SymbolKind.CLASS, 0, 0, 0, "", bases=names) for q, names in bases.items()))

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0
