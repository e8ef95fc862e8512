"""The command line of sharding: `repodoc analyze`, `repodoc merge`, and `generate`'s `--facts` and
`--pages` (examples/README.md). `cli.py` registers them (`register`) and calls `run_analyze` and
`run_merge` with the settings it read."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from repodoc_lsp.config import Settings
from repodoc_lsp.console import say
from repodoc_lsp.exits import EXIT_BUSY, EXIT_INTERRUPTED, EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, EXIT_WORKERS, interrupted
from repodoc_lsp.shard.split import Share, ShareError, parse_share
from repodoc_lsp.words import plural


def share_arg(text: str) -> Share:
    try:
        return parse_share(text)
    except ShareError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction, generate: argparse.ArgumentParser) -> None:
    """Add `analyze` and `merge` to the subcommands, and `--facts` and `--pages` to `generate`."""
    generate.add_argument("--facts", nargs="+", metavar="FILE",
                          help="take the analysis from these facts files (one per `repodoc analyze --shard K/N`) "
                               "instead of analysing; a file changed since is analysed again")
    generate.add_argument("--pages", type=share_arg, metavar="K/N",
                          help="write only share K of N of the pages (whole folders), for `repodoc merge`")
    generate.add_argument("--graph", metavar="DIR",
                          help="with --pages: the symbol graph's answers from `repodoc graph --output DIR`, or "
                               "the records of every `repodoc graph --link K/N` job (this share's answers made "
                               "from them here), instead of building the graph of the whole tree here")
    ana = sub.add_parser("analyze", help="analyse one share of the files into a facts file (a CI matrix job)",
                         description="Analyse share K of N of ROOT's input files (split by path) and write their "
                                     "facts to FILE, for `repodoc generate --facts`. README \"Sharding\".")
    ana.add_argument("root", nargs="?", default=".", help="workspace folder (default: .)")
    ana.add_argument("--shard", type=share_arg, required=True, metavar="K/N", help="this job's share, e.g. 2/3")
    ana.add_argument("--output", required=True, metavar="FILE", help="the facts file to write")
    ana.add_argument("--out", metavar="DIR", help="the output folder `generate` will write, left out of the inputs "
                                                  "(default: as generate chooses)")
    ana.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default: cores)")
    ana.add_argument("--include", action="append", metavar="PATTERN", help="only these files (repeatable)")
    ana.add_argument("--exclude", action="append", metavar="PATTERN", help="leave these out (repeatable)")
    ana.add_argument("--cache-dir", metavar="DIR", help="analysis cache folder (default: the user cache folder)")
    ana.add_argument("--no-cache", action="store_true", help="analyse every file again")
    ana.add_argument("--quiet", "-q", action="store_true", help="no summary line")
    ana.set_defaults(templates=None, embed_source_max_bytes=None, project_name=None)
    gra = sub.add_parser("graph", help="build the symbol graph once and write each page share's answers "
                                       "(between the analyze and the page jobs)",
                         description="Build the symbol graph of ROOT from the facts files and write what the pages "
                                     "of each of M page shares ask of it to DIR, for `repodoc generate --facts "
                                     "FILE... --pages K/M --graph DIR`. README \"Sharding\".")
    gra.add_argument("root", nargs="?", default=".", help="workspace folder (default: .)")
    gra.add_argument("--facts", nargs="+", required=True, metavar="FILE", help="the facts file of every analyze job")
    gra.add_argument("--pages", type=_pages_arg, required=True, metavar="M",
                     help="how many page jobs there are; with --links: J/M, the one page share to answer")
    gra.add_argument("--link", type=share_arg, metavar="K/N",
                     help="a link job: link share K of N of the files and write what each page share reads of "
                          "their links (a tree too large for one graph job)")
    gra.add_argument("--links", nargs="+", metavar="DIR",
                     help="with --pages J/M: answer page share J from the output folders of every link job")
    gra.add_argument("--output", required=True, metavar="DIR", help="the folder to write the answers to")
    gra.add_argument("--out", metavar="DIR", help="the output folder the page jobs write (default: as generate "
                                                  "chooses)")
    gra.add_argument("--include", action="append", metavar="PATTERN", help="only these files (repeatable)")
    gra.add_argument("--exclude", action="append", metavar="PATTERN", help="leave these out (repeatable)")
    gra.add_argument("--quiet", "-q", action="store_true", help="no summary line")
    gra.set_defaults(templates=None, embed_source_max_bytes=None, project_name=None, cache_dir=None, jobs=None)
    mrg = sub.add_parser("merge", help="join the output folders of `generate --pages K/N` into one tree",
                         description="Join the page shares' output folders into --out, with one manifest: the tree "
                                     "one `repodoc generate` writes. README \"Sharding\".")
    mrg.add_argument("folders", nargs="*", metavar="DIR", help="the output folder of each page share")
    mrg.add_argument("--out", required=True, metavar="DIR",
                     help="the merged tree's folder: the output folder the pages were made for")
    mrg.add_argument("--in-place", action="store_true",
                     help="every page share was downloaded into --out itself (no DIR): its pages are verified where "
                          "they are and the manifests joined, no page linked or copied")


def _pages_arg(text: str) -> int | Share:
    return share_arg(text) if "/" in text else int(text)


def _err(message: str) -> None:
    say(f"repodoc: error: {message}", sys.stderr)


def run_analyze(args: argparse.Namespace, settings: Settings | None) -> int:
    from repodoc_lsp.pipeline.pool import WorkersLost
    from repodoc_lsp.pipeline.runtime import enter_cli
    from repodoc_lsp.shard.analyze import analyze

    if settings is None:
        return EXIT_USAGE
    output = Path(args.output)
    cancel = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    try:
        summary = analyze(Path(args.root), settings, args.shard, output, runtime=enter_cli(), jobs=args.jobs,
                          use_cache=not args.no_cache, cancel=cancel)
    except WorkersLost as exc:
        _err(f"{exc}; run again (with fewer --jobs if memory is short)")
        return EXIT_WORKERS
    except OSError as exc:
        _err(f"{output}: cannot write the facts file: {exc.strerror or exc}")
        return EXIT_OUTPUT
    finally:
        signal.signal(signal.SIGINT, previous)
    if summary.cancelled:
        say("repodoc: interrupted: no facts file written (what was analysed is in the cache)", sys.stderr)
        return EXIT_INTERRUPTED
    if not args.quiet:
        k, n = args.shard
        say(f"repodoc: shard {k}/{n}: {plural(summary.files, 'file')} ({summary.analysed} parsed, "
            f"{summary.cached} from cache, {len(summary.skipped)} skipped) -> {output}")
    return EXIT_OK


def run_graph(args: argparse.Namespace, settings: Settings | None) -> int:
    from repodoc_lsp.output.writer import OutputError
    from repodoc_lsp.pipeline.runtime import enter_cli
    from repodoc_lsp.shard.facts_file import ShardError
    from repodoc_lsp.shard.graph_job import write_answers, write_links, write_share_answers
    from repodoc_lsp.store.workspace import Workspace

    if settings is None:
        return EXIT_USAGE
    pages = args.pages[1] if isinstance(args.pages, tuple) else args.pages
    if not 1 <= pages <= 10_000:
        _err(f"--pages {pages}: expected 1 to 10000 page shares")
        return EXIT_USAGE
    if isinstance(args.pages, tuple) != bool(args.links) or (args.link and args.links):
        _err("--links takes --pages J/M (the page share to answer), --link and the single graph job --pages M")
        return EXIT_USAGE
    output = Path(args.output)
    try:
        ws = Workspace(Path(args.root), settings, use_cache=False, runtime=enter_cli(), incremental=False)
        if args.link:
            summary = write_links(ws, args.facts, args.link, pages, output)
        elif args.links:
            summary = write_share_answers(ws, args.facts, args.pages, [Path(f) for f in args.links], output)
        else:
            summary = write_answers(ws, args.facts, pages, output)
    except ShardError as exc:
        _err(f"{exc}; no answers written")
        return EXIT_USAGE
    except (OSError, OutputError) as exc:
        _err(f"{output}: cannot write the graph's answers: {getattr(exc, 'strerror', None) or exc}")
        return EXIT_OUTPUT
    if args.quiet:
        pass
    elif args.link:
        say(f"repodoc: link share {args.link[0]}/{args.link[1]}: {plural(summary.files, 'file')} linked, records of "
            f"{plural(summary.shares, 'page share')} -> {output}")
    else:
        say(f"repodoc: graph of {plural(summary.files, 'file')}: answers of {plural(summary.shares, 'page share')} "
            f"-> {output}")
    return EXIT_OK


def run_merge(args: argparse.Namespace) -> int:
    from repodoc_lsp.output.writer import OutputBusy, OutputError
    from repodoc_lsp.shard.facts_file import ShardError
    from repodoc_lsp.shard.inplace import merge_in_place
    from repodoc_lsp.shard.merge import MergeStopped, merge

    if bool(args.folders) == args.in_place:
        _err("merge: give the output folder of each page share, or --in-place (the shares downloaded into --out)")
        return EXIT_USAGE
    signal.signal(signal.SIGINT, interrupted(
        "merge interrupted: the folder's manifest is the merged one only once every page was verified: merge again"
        if args.in_place else "merge interrupted: the pages merged so far are in the folder, the tree is not "
        "vouched for: merge again"))
    try:
        summary = merge_in_place(Path(args.out)) if args.in_place else merge([Path(f) for f in args.folders],
                                                                               Path(args.out))
    except MergeStopped as exc:
        _err(f"{exc}; the pages merged before it are written, the tree is not vouched for: merge again")
        return EXIT_USAGE
    except ShardError as exc:
        _err(f"{exc}; nothing written")
        return EXIT_USAGE
    except OutputBusy as exc:
        _err(str(exc))
        return EXIT_BUSY
    except OutputError as exc:
        _err(str(exc))
        return EXIT_OUTPUT
    if summary.in_place:
        say(f"repodoc: {plural(summary.shares, 'page share')} merged in place: {plural(summary.pages, 'page')} "
            f"verified, none written -> {summary.out}")
        return EXIT_OK
    for e in summary.errors:
        _err(f"{Path(summary.out, e.page)}: {e.reason}")
    for c in summary.conflicts:
        say(f"repodoc: conflict: {Path(summary.out, c.page)}: {c.reason} (left as it is)", sys.stderr)
    say(f"repodoc: {plural(summary.shares, 'page share')} merged: {plural(summary.pages, 'page')} "
        f"({len(summary.written)} written, {summary.unchanged} unchanged), {len(summary.removed)} removed, "
        f"{plural(len(summary.conflicts), 'conflict')}, {plural(len(summary.errors), 'error')} -> {summary.out}")
    return EXIT_OUTPUT if summary.errors else EXIT_OK
