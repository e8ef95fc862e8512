"""A page share's graph answers, made from what the symbol graph is given (the whole graph, or every link
job's records for the share): the graph reads each of the share's files makes (`render/gather.graph_reads`),
noted with their answers (`answers.Recorder`). Used by the graph job (`graph_job.py`) and by a page job that
makes its own share's answers from the link records (`pages.take_facts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from repodoc_lsp.analysis.model import FileFacts, Language, Symbol, SymbolKind
from repodoc_lsp.knowledge.graph import Link
from repodoc_lsp.knowledge.held import HeldViews
from repodoc_lsp.knowledge.once import BuiltOnce
from repodoc_lsp.knowledge.views import LaterSketch, Sketch
from repodoc_lsp.pipeline.runtime import no_cycle_collection
from repodoc_lsp.render.gather import graph_reads
from repodoc_lsp.render.paths import folder_of
from repodoc_lsp.render.site import Site
from repodoc_lsp.shard.answers import Answers, Recorder, inputs_digest
from repodoc_lsp.shard.facts_file import Share, Tree, tree_of
from repodoc_lsp.shard.links import Records
from repodoc_lsp.shard.split import folder_shares, folder_weights
from repodoc_lsp.store.workspace import ProgressFn, Workspace

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.graph import Graph
    from repodoc_lsp.shard.share_facts import ShareFacts


# Views a link or answer job keeps made at a time (each made again from its facts file's block when read
# after it was dropped): their memory is bounded by this, not by the tree (bench/README.md, issue 40)
VIEWS_HELD = 2048


def run_of(ws: Workspace) -> tuple[Tree, str]:
    """The tree and the inputs' digest (`inputs_digest`) a graph job's or link job's output is made from,
    and checked against when read."""
    return tree_of(ws.root, sorted({*ws.digests, *ws.read_skipped})), inputs_digest(ws.digests)


def answered(ws: Workspace, sketched: Mapping[str, tuple[str, Sketch | LaterSketch | None]], share: Share,
             links: Sequence[Path], records: Records, held: int = VIEWS_HELD) -> Answers:
    """Page share `share`'s answers, made in its page job from every link job's records for it in `links`
    (`generate --pages J/M --graph DIR`, DIR holding them; `records`: as `links.read_records` read them, their
    links taken): `write_share_answers` without the file."""
    graph = graph_of(ws, sketched, held, only=(), linked=records.take_links())
    found: dict[str, bytes] = {}
    for _rel, noted in reads(ws, graph, share_files(ws, share[1], share[0])):
        found.update((asked, answer.encode("utf-8", "surrogatepass")) for asked, answer in noted.items())
    return Answers(found, f"the answers of page share {share[0]}/{share[1]} made from the link records in "
                          f"{', '.join(map(str, links))}")


def graph_of(ws: Workspace, sketched: Mapping[str, tuple[str, Sketch | LaterSketch | None]], held: int, *,
             only: Iterable[str] | None = None, linked: Mapping[str, Link] | None = None) -> BuiltOnce:
    """The symbol graph of `ws` (taken from the facts files, `take_facts(later=True)`), at most `held` of
    its views made at a time; `only`, `linked`: as `Graph`'s."""
    files: list[tuple[str, FileFacts | Sketch | LaterSketch]] = [
        (rel, sketch) for rel, (_key, sketch) in sketched.items() if sketch is not None]
    files += [(rel, ws.facts[rel]) for rel in ws.digests if rel not in sketched]  # analysed here
    with no_cycle_collection(keep=False):
        return BuiltOnce(ws.relations, files, parts=ws.parts, views=HeldViews(ws.relations, held), only=only,
                         linked=linked)


def page_shares(ws: Workspace, pages: int) -> dict[str, int]:
    """folder -> its page share (of `pages`)."""
    return folder_shares(folder_weights({*ws.digests, *ws.read_skipped}, ws.folders), pages)


def share_files(ws: Workspace, pages: int, share: int) -> list[str]:
    """The input files of page share `share` of `pages`, in path order."""
    shares = page_shares(ws, pages)
    return [rel for rel in sorted(ws.digests) if shares.get(folder_of(rel), 1) == share]


def reads(ws: Workspace, graph: Graph, files: Sequence[str],
          progress: ProgressFn | None = None) -> Iterator[tuple[str, dict[str, str]]]:
    """(file, its graph reads: query -> the JSON of the answer) of each of `files` (a page share's)."""
    recorder = Recorder(graph)
    paged = cast("ShareFacts", ws.facts).paged  # which files have pages: the facts files say, not the bases
    site = Site(ws.project, ws.root.as_posix(), ws.out.as_posix(), 0, ws.relations, _ClassBases(graph), {}, [],
                symbols=cast("Graph", recorder), known_paged=paged)
    for done, rel in enumerate(files, 1):
        recorder.reads = {}
        graph_reads(site, rel)
        yield rel, recorder.reads
        if progress and (done % 256 == 0 or done == len(files)):
            progress("graph", done, len(files), folder_of(rel))


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
