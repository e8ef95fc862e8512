"""`repodoc graph [ROOT] --facts FILE... --pages M --output DIR`: the symbol graph of the whole tree built
once, from the facts files' sketches (no file's facts read), and what each page share's pages ask of it
written to that share's answers file (`answers.py`): a page job given them holds no graph.

A tree whose graph one job cannot hold is split twice instead: N link jobs (`--link K/N --pages M`), each
linking the files of its share and writing what each page share reads of their links (`links.py`), then
a job per page share (`--pages J/M --links DIR...`) writing share J's answers from those records. Neither
holds the whole graph: their views are made from the facts files when read, at most `VIEWS_HELD` at a
time (`knowledge/held.py`), and each holds the users of its share's files (or of its links) alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
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
from repodoc_lsp.shard.answers import Answers, AnswersWriter, Recorder, answers_path, inputs_digest
from repodoc_lsp.shard.facts_file import Share, tree_of
from repodoc_lsp.shard.links import LinksWriter, cut, links_path, read_links
from repodoc_lsp.shard.pages import take_facts
from repodoc_lsp.shard.split import file_share, folder_shares, folder_weights
from repodoc_lsp.store.workspace import ProgressFn, Workspace

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.graph import Graph
    from repodoc_lsp.shard.share_facts import ShareFacts


# Views a link or answer job keeps made at a time (each made again from its facts file's block when read
# after it was dropped): their memory is bounded by this, not by the tree (bench/README.md, issue 40)
VIEWS_HELD = 2048


@dataclass
class GraphSummary:
    files: int = 0  # input files analysed (each has a line in its share's answers) or linked
    shares: int = 0


def write_answers(ws: Workspace, facts: Sequence[str], pages: int, output: Path,
                  progress: ProgressFn | None = None) -> GraphSummary:
    """The answers of each of `pages` page shares, written to `output` (a folder), from the whole graph held
    (a tree it fits: the fastest; else link jobs, `write_links`, and a job per page share,
    `write_share_answers`); ShardError when the facts files are not the whole of this tree's analysis."""
    take_facts(ws, facts, progress, none_held=True)
    return _answer(ws, ws.graph(), pages, range(1, pages + 1), output, progress)


def write_links(ws: Workspace, facts: Sequence[str], link: Share, pages: int, output: Path,
                progress: ProgressFn | None = None, held: int = VIEWS_HELD) -> GraphSummary:
    """Link job `link`: the files of its share (the analysis split) linked, what each page share of
    `pages` reads of their links written to `output` (`links.py`)."""
    sketched = take_facts(ws, facts, progress, none_held=True, later=True)
    mine = [rel for rel in ws.digests if file_share(rel, link[1]) == link[0]]
    linked = _graph(ws, sketched, held, only=mine).links()
    folders = _page_shares(ws, pages)

    def share_of(rel: str) -> int:
        return folders.get(folder_of(rel), 1)
    tree, inputs = tree_of(ws.root, sorted({*ws.digests, *ws.read_skipped})), inputs_digest(ws.digests)
    output.mkdir(parents=True, exist_ok=True)
    for share in range(1, pages + 1):
        cuts = {rel: c for rel in sorted(linked) if (c := cut(linked[rel], share_of, share_of(rel) == share,
                                                             share)) is not None}
        writer = LinksWriter(links_path(output, (share, pages), link), tree, (share, pages), link, inputs, len(cuts))
        try:
            for rel, c in cuts.items():
                writer.add(rel, c)
            writer.close()
        except BaseException:
            writer.discard()
            raise
    return GraphSummary(len(linked), pages)


def write_share_answers(ws: Workspace, facts: Sequence[str], share: Share, links: Sequence[Path], output: Path,
                        progress: ProgressFn | None = None, held: int = VIEWS_HELD) -> GraphSummary:
    """The answers of page share `share` alone, from every link job's records for it in `links` (folders):
    its files' users, subclasses and mentions, every class's workspace bases; no file linked here."""
    sketched = take_facts(ws, facts, progress, none_held=True, later=True)
    tree, inputs = tree_of(ws.root, sorted({*ws.digests, *ws.read_skipped})), inputs_digest(ws.digests)
    taken = read_links(links, share, tree, inputs)
    graph = _graph(ws, sketched, held, only=(), linked=taken)
    return _answer(ws, graph, share[1], (share[0],), output, progress)


def answered(ws: Workspace, sketched: Mapping[str, tuple[str, Sketch | LaterSketch | None]], share: Share,
             links: Sequence[Path], held: int = VIEWS_HELD) -> Answers:
    """Page share `share`'s answers, made in its page job from every link job's records for it in `links`
    (`generate --pages J/M --graph DIR`, DIR holding them): `write_share_answers` without the file."""
    tree, inputs = tree_of(ws.root, sorted({*ws.digests, *ws.read_skipped})), inputs_digest(ws.digests)
    graph = _graph(ws, sketched, held, only=(), linked=read_links(links, share, tree, inputs))
    reads: dict[str, bytes] = {}
    for _rel, noted in _reads(ws, graph, share[1], share[0]):
        reads.update((asked, answer.encode("utf-8", "surrogatepass")) for asked, answer in noted.items())
    return Answers(reads, f"the answers of page share {share[0]}/{share[1]} made from the link records in "
                          f"{', '.join(map(str, links))}")


def _graph(ws: Workspace, sketched: Mapping[str, tuple[str, Sketch | LaterSketch | None]], held: int, *,
           only: Iterable[str] | None = None, linked: Mapping[str, Link] | None = None) -> BuiltOnce:
    """The symbol graph of `ws` (taken from the facts files, `take_facts(later=True)`), at most `held` of
    its views made at a time; `only`, `linked`: as `Graph`'s."""
    files: list[tuple[str, FileFacts | Sketch | LaterSketch]] = [
        (rel, sketch) for rel, (_key, sketch) in sketched.items() if sketch is not None]
    files += [(rel, ws.facts[rel]) for rel in ws.digests if rel not in sketched]  # analysed here
    with no_cycle_collection(keep=False):
        return BuiltOnce(ws.relations, files, parts=ws.parts, views=HeldViews(ws.relations, held), only=only,
                         linked=linked)


def _page_shares(ws: Workspace, pages: int) -> dict[str, int]:
    """folder -> its page share (of `pages`)."""
    return folder_shares(folder_weights({*ws.digests, *ws.read_skipped}, ws.folders), pages)


def _answer(ws: Workspace, graph: Graph, pages: int, which: Iterable[int], output: Path,
            progress: ProgressFn | None) -> GraphSummary:
    """The answers of page shares `which` (of `pages`) from `graph`, written to `output`."""
    tree = tree_of(ws.root, sorted({*ws.digests, *ws.read_skipped}))
    inputs = inputs_digest(ws.digests)
    output.mkdir(parents=True, exist_ok=True)
    files = 0
    for k in which:
        count = len(_share_files(ws, pages, k))
        writer = AnswersWriter(answers_path(output, (k, pages)), tree, (k, pages), inputs, count)
        try:  # each file's reads written as they are made (never the share's held)
            for rel, noted in _reads(ws, graph, pages, k, progress):
                writer.add(rel, noted)
            writer.close()
        except BaseException:
            writer.discard()
            raise
        files += count
    return GraphSummary(files, len(list(which)))


def _share_files(ws: Workspace, pages: int, share: int) -> list[str]:
    """The input files of page share `share` of `pages`, in path order."""
    shares = _page_shares(ws, pages)
    return [rel for rel in sorted(ws.digests) if shares.get(folder_of(rel), 1) == share]


def _reads(ws: Workspace, graph: Graph, pages: int, share: int,
           progress: ProgressFn | None = None) -> Iterator[tuple[str, dict[str, str]]]:
    """(file, its graph reads: query -> the JSON of the answer) of each input file of page share `share`."""
    recorder = Recorder(graph)
    paged = cast("ShareFacts", ws.facts).paged  # which files have pages: the facts files say, not the bases
    site = Site(ws.project, ws.root.as_posix(), ws.out.as_posix(), 0, ws.relations, _ClassBases(graph), {}, [],
                symbols=cast("Graph", recorder), known_paged=paged)
    files = _share_files(ws, pages, share)
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
