"""Scale: repodoc on 17,150 files of 14 packages (bench/corpus_large.py) beside PyTorch, in one run.

    python bench/bench_scale.py [--corpora scale,torch] [--limit N] [--warm-runs 3] [--no-peer] [--keep]

Per corpus (each a workspace of hard links to the cached sources, in a temporary folder):

- the floor (read + `ast.parse` of every file, one process) alternating with cold
  `repodoc generate` runs, then warm runs (nothing changed): bench_generate.cold_and_warm; peak
  RSS sum and PSS of the CLI's process tree;
- the generated tree on disk (allocated blocks and apparent bytes) against the sources';
- `repodoc generate`'s analyse phase alone with an empty cache (bench_lsp.analyse_seconds);
- `repodoc serve` with an empty cache: launch -> end of its indexing progress (against that
  analyse phase), 20 workspace/symbol queries (median, p95), hovers at 20 positions in PyTorch's
  files (the second pass: median), peak RSS sum and PSS of its tree (bench_lsp.run_session);
- the peer, jedi-language-server, on the same workspace: the same hovers (no symbol queries:
  it takes seconds each on PyTorch alone).

Then on PyTorch: a cold `repodoc serve` hovered at the 20 positions one after another from the
start of its indexing progress to its end (after one warming pass), then as many passes on the
idle server: the median of each and their ratio.

`--limit N` takes N files spread over the corpus (plus the hovered files): a quick check of the
script, not a measurement. Prints a table, writes bench/results/scale-*.json.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt_mb, fmt_s, median, scratch_folder, table, verdict, write_results
from bench_generate import cold_and_warm
from bench_lsp import HOVER_FILES, HoverPoint, Session, _progress, analyse_seconds, hover_points, run_session, summarise
from corpus import ensure_corpus, python_files, stats
from corpus_large import ensure_large_corpus

TARGET_COLD = 1.5  # cold generate / floor
TARGET_WARM = 0.1  # warm generate / floor
TARGET_MEMORY = 1.5e9  # bytes, the CLI's process tree
TARGET_INDEXING = 2.0  # server indexing complete / the CLI's analyse phase
TARGET_SYMBOL_P95 = 0.030
TARGET_SERVER_MEMORY = 1.0e9  # bytes, the server's process tree
TARGET_INDEXING_HOVER = 1.5  # hover median during cold indexing / idle
TARGET_TREE = 1.5  # generated tree on disk / the sources


def workspace_copy(corpus: Path, dest: Path, limit: int | None, keep: list[str]) -> None:
    """Every .py file of `corpus` (or `limit` of them spread evenly, plus `keep`) under `dest`,
    hard-linked where the file system allows (nothing here writes to a source file), else copied."""
    files = python_files(corpus)
    if limit and limit < len(files):
        step = len(files) / limit
        chosen = {files[int(i * step)] for i in range(limit)} | {corpus / k for k in keep if (corpus / k).is_file()}
        files = sorted(chosen)
    for path in files:
        target = dest / path.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)


def disk_size(folder: Path, pattern: str = "*") -> dict[str, int]:
    """Files matching `pattern` under `folder`: count, apparent bytes, bytes allocated on disk (as du counts)."""
    files = apparent = allocated = 0
    for path in folder.rglob(pattern):
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            files += 1
            apparent += st.st_size
            allocated += st.st_blocks * 512
    return {"files": files, "apparent": apparent, "allocated": allocated}


def _torch_points(root: Path, torch: Path) -> list[HoverPoint]:
    """bench_lsp's 20 hover positions in PyTorch's files, relative to `root` (which holds `torch`)."""
    prefix = torch.relative_to(root).as_posix()
    return [dataclasses.replace(p, rel=f"{prefix}/{p.rel}" if prefix != "." else p.rel) for p in hover_points(torch)]


def _session(label: str, server: str, command: str, root: Path, tmp: Path, points: list[HoverPoint],
             **kw: Any) -> Session:
    """One server session (bench_lsp.run_session) with an empty analysis cache and output folder in `tmp`."""
    env = {**os.environ, "REPODOC_CACHE_DIR": str(tmp / f"cache-{server}")}
    cwd = tmp / "cwd"  # not the workspace: `python -m` would put it first on sys.path
    cwd.mkdir(exist_ok=True)
    settings = {"outputDir": str(tmp / f"out-{server}")} if server == "repodoc" else {}
    session = asyncio.run(run_session(label, server, command.split(), root, cwd=cwd, env=env, settings=settings,
                                      points=points, save=None, out=None, rounds=0, **kw))
    _progress(session)
    return session


def measure_corpus(label: str, corpus: Path, tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Generation, the analyse phase, the server and the peer on one corpus."""
    root = tmp / "ws" / corpus.name
    torch = root / "torch" if (corpus / "torch").is_dir() else root
    workspace_copy(corpus, root, args.limit, [f"{torch.relative_to(root).as_posix()}/{f}" for f in HOVER_FILES])
    st = stats(root)
    print(f"{label}: {root}: {st.files} files, {st.lines:,} lines, {st.bytes / 1e6:.1f} MB", flush=True)
    runs = cold_and_warm(root, tmp, floor_runs=1, cold_runs=1, warm_runs=args.warm_runs, jobs=args.jobs)
    record: dict[str, Any] = {
        "corpus": {"path": str(corpus), "files": st.files, "lines": st.lines, "bytes": st.bytes},
        **{k: runs[k] for k in ("floor", "cold", "warm", "notes")},
        "sources": disk_size(root, "*.py"),
        "tree": disk_size(runs["out"]),
        "cache": disk_size(runs["cache"]),
    }
    print(f"{label}: tree {record['tree']}, sources {record['sources']}", flush=True)
    shutil.rmtree(runs["out"], ignore_errors=True)
    record["analyse"] = analyse_seconds(root, tmp)
    print(f"{label}: analyse phase, cold: {record['analyse']}", flush=True)
    points = _torch_points(root, torch)
    repodoc = _session(f"repodoc on {label}", "repodoc", f"{sys.executable} -m repodoc_lsp serve", root, tmp, points,
                       full=True)
    record["server"] = {"summary": summarise(repodoc), "session": dataclasses.asdict(repodoc)}
    if args.peer:
        jedi = _session(f"jedi-language-server on {label}", "jedi", args.jedi_command, root, tmp, points,
                        full=True, symbols=False)
        record["peer"] = {"summary": summarise(jedi), "session": dataclasses.asdict(jedi)}
    return record


def indexing_hovers(torch: Path, tmp: Path, limit: int | None) -> dict[str, Any]:
    """Hovers on PyTorch while a cold server indexes it, and on the idle server after."""
    root = tmp / "ws" / "torch"
    workspace_copy(torch, root, limit, HOVER_FILES)
    s = _session("repodoc on torch, hovers during cold indexing", "repodoc", f"{sys.executable} -m repodoc_lsp serve",
                 root, tmp, hover_points(root), full=False, symbols=False, hover_while_indexing=True)
    busy, idle = median(s.index_busy), median(s.index_idle)
    return {"busy_median": busy, "idle_median": idle, "ratio": busy / idle if s.index_busy and s.index_idle else None,
            "busy_count": len(s.index_busy), "idle_count": len(s.index_idle), "indexing_done": s.indexing_done,
            "peak_rss": s.peak_rss, "peak_pss": s.peak_pss, "errors": s.errors, "session": dataclasses.asdict(s)}


def figures(r: dict[str, Any]) -> dict[str, Any]:
    """The measured values of one corpus, in the units of the targets."""
    floor = r["floor"]["median"]
    cold, warm = median([x["seconds"] for x in r["cold"]]), median([x["seconds"] for x in r["warm"]])
    runs = r["cold"] + r["warm"]
    server = r["server"]["summary"]
    peer = r.get("peer", {}).get("summary", {})
    analyse = r["analyse"].get("analyse")
    return {
        "floor": floor, "cold": cold, "warm": warm, "cold_ratio": cold / floor, "warm_ratio": warm / floor,
        "cold_cpu": median([x["cpu_seconds"] for x in r["cold"]]), "floor_cpu": r["floor"]["cpu_median"],
        "peak_rss": max(x["peak_rss"] for x in runs), "peak_pss": max(x["peak_pss"] for x in runs),
        "tree": r["tree"]["allocated"], "tree_apparent": r["tree"]["apparent"], "pages": r["tree"]["files"],
        "sources": r["sources"]["allocated"], "sources_apparent": r["sources"]["apparent"],
        "tree_ratio": r["tree"]["allocated"] / r["sources"]["allocated"],
        "tree_apparent_ratio": r["tree"]["apparent"] / r["sources"]["apparent"],
        "cache": r["cache"]["apparent"],
        "analyse": analyse, "indexing": server["indexing_done"], "first_symbol": server["first_symbol"],
        "indexing_ratio": server["indexing_done"] / analyse if analyse and server["indexing_done"] else None,
        "symbol_median": server["symbol_median"], "symbol_p95": server["symbol_p95"],
        "exact_first": server["exact_first"],
        "hover": server["hover_median"], "hover_empty": server["hover_empty"],
        "peer_hover": peer.get("hover_median"), "peer_hover_empty": peer.get("hover_empty"),
        "peer_rss": peer.get("peak_rss"),
        "server_rss": server["peak_rss"], "server_pss": server["peak_pss"], "survivors": server["survivors"],
    }


def checks(f: dict[str, Any], during: dict[str, Any] | None) -> dict[str, bool | None]:
    """The issue's targets on one corpus's figures (None: not measured)."""
    def known(value: Any, ok: bool) -> bool | None:
        return None if value is None or value != value else ok  # NaN != NaN

    result = {
        "cold <= 1.5x floor": f["cold_ratio"] <= TARGET_COLD,
        "warm <= 0.1x floor": f["warm_ratio"] <= TARGET_WARM,
        "peak memory of the CLI's tree < 1.5 GB (RSS sum)": f["peak_rss"] < TARGET_MEMORY,
        "tree on disk <= 1.5x the sources": f["tree_ratio"] <= TARGET_TREE,
        "server indexing <= 2x the CLI's analyse phase": known(f["indexing_ratio"], (f["indexing_ratio"] or 0)
                                                               <= TARGET_INDEXING),
        "workspace/symbol p95 < 30 ms": known(f["symbol_p95"], f["symbol_p95"] < TARGET_SYMBOL_P95),
        "hover median <= jedi-language-server's": known(f["peer_hover"], f["hover"] <= (f["peer_hover"] or 0)),
        "server RSS < 1 GB (tree sum)": f["server_rss"] < TARGET_SERVER_MEMORY,
    }
    if during is not None:
        result["PyTorch: hover median during cold indexing <= 1.5x idle"] = known(
            during["ratio"], (during["ratio"] or 0) <= TARGET_INDEXING_HOVER)
    return result


def _ratio(x: float | None) -> str:
    return "n/a" if x is None or x != x else f"{x:.2f}x"


def _get(key: str, fmt: Callable[[Any], str] = fmt_s) -> Callable[[dict[str, Any]], str]:
    def cell(f: dict[str, Any]) -> str:
        value = f.get(key)
        return "n/a" if value is None or value != value else fmt(value)
    return cell


ROWS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("files / pages written", lambda f: f"{f['files']:,} / {f['pages']:,}"),
    ("floor (read + ast.parse, 1 process)", _get("floor")),
    ("cold generate", _get("cold")),
    ("  cold / floor", _get("cold_ratio", _ratio)),
    ("  CPU time, cold (all processes) / floor", lambda f: f"{fmt_s(f['cold_cpu'])} / {fmt_s(f['floor_cpu'])}"),
    ("warm generate (median)", _get("warm")),
    ("  warm / floor", _get("warm_ratio", lambda x: f"{x:.3f}x")),
    ("peak memory, CLI tree: RSS sum", _get("peak_rss", fmt_mb)),
    ("  the same, PSS", _get("peak_pss", fmt_mb)),
    ("tree on disk / sources on disk",
     lambda f: f"{fmt_mb(f['tree'])} / {fmt_mb(f['sources'])} = {_ratio(f['tree_ratio'])}"),
    ("  ratio of apparent sizes", _get("tree_apparent_ratio", _ratio)),
    ("analysis cache (apparent size)", _get("cache", fmt_mb)),
    ("CLI analyse phase, cold", _get("analyse")),
    ("server: launch -> indexing ended, cold", _get("indexing")),
    ("  / the analyse phase", _get("indexing_ratio", _ratio)),
    ("server: first symbol answer", _get("first_symbol")),
    ("workspace/symbol median / p95", lambda f: f"{fmt_s(f['symbol_median'])} / {fmt_s(f['symbol_p95'])}"),
    ("  exact name ranked first", _get("exact_first", str)),
    ("hover median: repodoc / jedi-language-server", lambda f: f"{fmt_s(f['hover'])} / {fmt_s(f['peer_hover'])}"),
    ("server tree peak: RSS sum / PSS", lambda f: f"{fmt_mb(f['server_rss'])} / {fmt_mb(f['server_pss'])}"),
    ("jedi-language-server peak RSS", _get("peer_rss", fmt_mb)),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="scale,torch", help="comma-separated: scale (17,150 files), torch")
    parser.add_argument("--limit", type=int, help="N files of each corpus (a quick check, not a measurement)")
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, help="passed as --jobs (default: repodoc's own, one per core)")
    parser.add_argument("--no-peer", dest="peer", action="store_false", help="skip jedi-language-server")
    parser.add_argument("--no-indexing-hovers", dest="during", action="store_false",
                        help="skip the hovers during PyTorch's cold indexing")
    parser.add_argument("--jedi-command", default=str(Path(sys.executable).with_name("jedi-language-server")))
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    sources = {"scale": ensure_large_corpus, "torch": ensure_corpus}
    unknown = [c for c in corpora if c not in sources]
    if unknown:
        parser.error(f"unknown corpus: {', '.join(unknown)}")

    records: dict[str, dict[str, Any]] = {}
    during: dict[str, Any] | None = None
    with scratch_folder("repodoc-bench-scale-", args.keep) as tmp:
        for label in corpora:
            (tmp / label).mkdir()
            records[label] = measure_corpus(label, sources[label](), tmp / label, args)
        if args.during:
            (tmp / "indexing").mkdir()
            during = indexing_hovers(ensure_corpus(), tmp / "indexing", args.limit)
            print(f"hovers during PyTorch's cold indexing: {during['busy_count']} hovers, median "
                  f"{fmt_s(during['busy_median'])}; idle {fmt_s(during['idle_median'])}", flush=True)

    figs = {label: {"files": r["corpus"]["files"], **figures(r)} for label, r in records.items()}
    print()
    print(table([[title, *(cell(f) for f in figs.values())] for title, cell in ROWS],
                ["metric", *figs]))
    if during is not None:
        print(f"\nPyTorch, hover median during cold indexing / idle: {fmt_s(during['busy_median'])} / "
              f"{fmt_s(during['idle_median'])} = {_ratio(during['ratio'])} ({during['busy_count']} and "
              f"{during['idle_count']} hovers; indexing ended {fmt_s(during['indexing_done'])} after launch)")
    verdicts = {label: checks(f, during if label == corpora[0] else None) for label, f in figs.items()}
    first = corpora[0]
    print()
    print(table([[name, *(verdict(v[name]) if name in v else "" for v in verdicts.values())]
                 for name in verdicts[first]], [f"target (on {first})", *verdicts]))
    notes = [f"{label}: {n}" for label, r in records.items() for n in r["notes"]]
    for label, r in records.items():
        for part in ("server", "peer"):
            session = r.get(part, {}).get("session", {})
            notes += [f"{label}, {session.get('label')}: {e}" for e in session.get("errors", [])]
    if during is not None:
        notes += [f"indexing hovers: {e}" for e in during["errors"]]
    if args.limit:
        notes.append(f"--limit {args.limit}: a slice of each corpus, not a measurement")
    for note in notes:
        print(f"note: {note}")
    path = write_results("scale", {"limit": args.limit, "jobs": args.jobs, "corpora": records, "figures": figs,
                                   "indexing_hovers": during, "checks": verdicts, "notes": notes})
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
