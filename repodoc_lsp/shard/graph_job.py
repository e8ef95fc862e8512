"""`repodoc graph [ROOT] --facts FILE... --pages M --output DIR`: the symbol graph of the whole tree built
once, from the facts files' sketches (no file's facts read), and what each page share's pages ask of it
written to that share's answers file (`answers.py`): a page job given them holds no graph.

A tree whose graph one job cannot hold is split twice instead: N link jobs (`--link K/N --pages M`), each
linking the files of its share (whole folders, `link_shares`) and writing what each page share reads of their
links (`links.py`), then a job per page share (`--pages J/M --links DIR...`) writing share J's answers from
those records. Neither holds the whole graph: their views are made from the facts files when read, at most
`VIEWS_HELD` at a time (`knowledge/held.py`), and each holds the users of its share's files (or of its links)
alone. Neither holds every file's imports: a view's are read with its sketch, the relations are the module
names, and a link job resolves its own files' imports one at a time, to write who imports each page share's files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from repodoc_lsp.render.paths import folder_of
from repodoc_lsp.shard.answering import VIEWS_HELD, graph_of, page_shares, reads, run_of, share_files
from repodoc_lsp.shard.answers import AnswersWriter, answers_path
from repodoc_lsp.shard.facts_file import Share, Tree
from repodoc_lsp.shard.links import cut, imported, links_path, read_links, write_share
from repodoc_lsp.shard.pages import take_facts
from repodoc_lsp.shard.split import folder_shares, folder_weights
from repodoc_lsp.store.discover import Discovery
from repodoc_lsp.store.workspace import ProgressFn, Workspace

if TYPE_CHECKING:
    from repodoc_lsp.knowledge.graph import Graph
    from repodoc_lsp.shard.share_facts import ShareFacts


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
    return _answer(ws, ws.graph(), pages, range(1, pages + 1), output, progress, run_of(ws))


def write_links(ws: Workspace, facts: Sequence[str], link: Share, pages: int, output: Path,
                progress: ProgressFn | None = None, held: int = VIEWS_HELD) -> GraphSummary:
    """Link job `link`: the files of its share (whole folders, `link_shares`) linked, what each page share of
    `pages` reads of their links written to `output` (`links.py`)."""
    shares: dict[str, int] = {}

    def linked_here(rel: str) -> bool:
        return shares.get(folder_of(rel), 1) == link[0]

    def on_disk(found: Discovery) -> Callable[[str], bool]:
        shares.update(link_shares(found, link[1]))
        return linked_here
    # its own files read on disk, the others' digests taken from the facts files: reading the whole checkout was
    # every link job's per-file work (bench/README.md, issue 40); a file changed since its analysis in another
    # share makes the page jobs refuse these records (their inputs digest differs), never a wrong tree
    sketched = take_facts(ws, facts, progress, none_held=True, later=True, on_disk=on_disk)
    mine = [rel for rel in ws.digests if linked_here(rel)]
    linked = graph_of(ws, sketched, held, only=mine).links()
    folders = page_shares(ws, pages)

    def share_of(rel: str) -> int:
        return folders.get(folder_of(rel), 1)
    tree, inputs = run_of(ws)
    output.mkdir(parents=True, exist_ok=True)
    imports = imported(cast("ShareFacts", ws.facts), ws.relations, mine)  # who imports whom, for the page jobs
    for share in range(1, pages + 1):
        cuts = {rel: c for rel in sorted(linked) if (c := cut(linked[rel], share_of, share_of(rel) == share,
                                                             share)) is not None}
        write_share(links_path(output, (share, pages), link), (tree, (share, pages), link, inputs), cuts, imports,
                    share_of)
    return GraphSummary(len(linked), pages)


def link_shares(found: Discovery, links: int) -> dict[str, int]:
    """folder -> its link share (of `links`): whole folders, as page shares are, not the analysis split (a file's
    names are mostly of its folder's and package's files: a share's linking consults fewer others' views)."""
    return folder_shares(folder_weights(found.files, found.folders), links)


def write_share_answers(ws: Workspace, facts: Sequence[str], share: Share, links: Sequence[Path], output: Path,
                        progress: ProgressFn | None = None, held: int = VIEWS_HELD) -> GraphSummary:
    """The answers of page share `share` alone, from every link job's records for it in `links` (folders):
    its files' users, subclasses and mentions, every class's workspace bases; no file linked here."""
    sketched = take_facts(ws, facts, progress, none_held=True, later=True)
    run = run_of(ws)
    graph = graph_of(ws, sketched, held, only=(), linked=read_links(links, share, *run))
    return _answer(ws, graph, share[1], (share[0],), output, progress, run)


def _answer(ws: Workspace, graph: Graph, pages: int, which: Sequence[int], output: Path,
            progress: ProgressFn | None, run: tuple[Tree, str]) -> GraphSummary:
    """The answers of page shares `which` (of `pages`) from `graph`, written to `output`; `run`: `run_of(ws)`."""
    tree, inputs = run
    output.mkdir(parents=True, exist_ok=True)
    files = 0
    for k in which:
        mine = share_files(ws, pages, k)
        writer = AnswersWriter(answers_path(output, (k, pages)), tree, (k, pages), inputs, len(mine))
        try:  # each file's reads written as they are made (never the share's held)
            for rel, noted in reads(ws, graph, mine, progress):
                writer.add(rel, noted)
            writer.close()
        except BaseException:
            writer.discard()
            raise
        files += len(mine)
    return GraphSummary(files, len(which))
