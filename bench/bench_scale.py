"""Scale: repodoc on 17,150 files of 14 packages (bench/corpus_large.py) beside PyTorch, in one run.

    python bench/bench_scale.py [--corpora scale,torch] [--limit N] [--cold-runs 1] [--warm-runs 3] [--no-peer]
                                [--no-generate] [--floor-at-once N] [--keep]

Per corpus (each a workspace of hard links to the cached sources, in a temporary folder):

- the floor (read + `ast.parse` of every file, one process) alternating with cold
  `repodoc generate` runs (`--cold-runs` of each; the ratio is of their medians), then warm runs
  (nothing changed): bench_generate.cold_and_warm; peak RSS sum and PSS of the CLI's process tree;
  with `--floor-at-once N`, after each floor N floors at once (the floor with N cores busy, as a
  cold run keeps them), reported beside the issue's floor, not instead of it;
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
import io
import math
import os
import pstats
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    REPO,
    fmt_mb,
    fmt_s,
    markdown_table,
    median,
    run_measured,
    scratch_folder,
    table,
    verdict,
    write_results,
)
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
PROFILE_TOP = 30  # functions kept from the warm run's profile


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


def _step(record: dict[str, Any], name: str, run: Callable[[], Any]) -> Any:
    """One part of the measurement: a failure is recorded and printed, and the run goes on without it."""
    try:
        return run()
    except Exception as exc:  # a broken part is a finding, not the end of a 15-minute run
        message = f"{name}: {type(exc).__name__}: {exc}"[:3000]
        record.setdefault("errors", []).append(message)
        print(f"FAILED {message}", flush=True)
        return None


PROFILED_MAIN = """import cProfile, sys
from repodoc_lsp.cli import main
profile = cProfile.Profile()
code = profile.runcall(main, sys.argv[2:])
profile.dump_stats(sys.argv[1])
sys.exit(code)
"""


def profile_warm(root: Path, out: Path, cache: Path) -> dict[str, Any]:
    """One more warm `repodoc generate` under cProfile (nothing is analysed or rendered, so no worker
    runs: the profile is the whole run); the functions with the most cumulative time."""
    prof = out.parent / "warm.prof"
    # `main` called with its arguments: the program (`-m repodoc_lsp`, as `-m cProfile` runs it) ends
    # with os._exit once it has reported, before cProfile writes its file
    cmd = [sys.executable, "-c", PROFILED_MAIN, str(prof), "generate", str(root), "--out", str(out),
           "--json", "--quiet"]
    m = run_measured(cmd, env={**os.environ, "REPODOC_CACHE_DIR": str(cache)})
    if m.proc.returncode != 0:
        raise RuntimeError(f"exit {m.proc.returncode}: {m.proc.stderr[-2000:]}")
    text = io.StringIO()
    pstats.Stats(str(prof), stream=text).sort_stats("cumulative").print_stats(PROFILE_TOP)
    rows = text.getvalue().split("   ncalls", 1)[-1].splitlines()[1:]  # the table without its header
    prefixes = sorted({str(REPO) + "/", *(p + "/" for p in sys.path if p.endswith("-packages"))}, key=len)[::-1]
    for prefix in prefixes:
        rows = [row.replace(prefix, "") for row in rows]
    return {"seconds": m.seconds, "columns": "ncalls tottime percall cumtime percall function",
            "top": [row for row in rows if row.strip()]}


def measure_corpus(label: str, corpus: Path, tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Generation, the analyse phase, the server and the peer on one corpus."""
    root = tmp / "ws" / corpus.name
    torch = root / "torch" if (corpus / "torch").is_dir() else root
    workspace_copy(corpus, root, args.limit, [f"{torch.relative_to(root).as_posix()}/{f}" for f in HOVER_FILES])
    st = stats(root)
    print(f"{label}: {root}: {st.files} files, {st.lines:,} lines, {st.bytes / 1e6:.1f} MB", flush=True)
    record: dict[str, Any] = {"corpus": {"path": str(corpus), "files": st.files, "lines": st.lines, "bytes": st.bytes},
                              "errors": []}
    runs = None if not args.generate else _step(record, "generate", lambda: cold_and_warm(
        root, tmp, floor_runs=args.cold_runs, cold_runs=args.cold_runs, warm_runs=args.warm_runs, jobs=args.jobs,
        floor_at_once=args.floor_at_once))
    if runs is not None:
        record.update({k: runs[k] for k in ("floor", "cold", "warm", "notes")})
        record.update(sources=disk_size(root, "*.py"), tree=disk_size(runs["out"]), cache=disk_size(runs["cache"]))
        print(f"{label}: tree {record['tree']}, sources {record['sources']}", flush=True)
        if args.profile:
            record["profile"] = _step(record, "warm profile", lambda: profile_warm(root, runs["out"], runs["cache"]))
            if record["profile"]:
                seconds = fmt_s(record["profile"]["seconds"])
                print(f"{label}: warm run under cProfile, {seconds}; by cumulative time:", flush=True)
                print("\n".join(record["profile"]["top"][:PROFILE_TOP // 2]), flush=True)
        shutil.rmtree(runs["out"], ignore_errors=True)
    record["analyse"] = _step(record, "analyse phase", lambda: analyse_seconds(root, tmp)) or {}
    print(f"{label}: analyse phase, cold: {record['analyse']}", flush=True)
    points = _torch_points(root, torch)
    repodoc = _step(record, "server", lambda: _session(
        f"repodoc on {label}", "repodoc", f"{sys.executable} -m repodoc_lsp serve", root, tmp, points, full=True))
    if repodoc is not None:
        record["server"] = {"summary": summarise(repodoc), "session": dataclasses.asdict(repodoc)}
    if args.peer:
        jedi = _step(record, "peer", lambda: _session(
            f"jedi-language-server on {label}", "jedi", args.jedi_command, root, tmp, points, full=True, symbols=False))
        if jedi is not None:
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
    """The measured values of one corpus, in the units of the targets (None where a part failed)."""
    f: dict[str, Any] = {"files": r["corpus"]["files"]}
    if r.get("cold") and r.get("warm"):
        floor = r["floor"]["median"]
        cold, warm = median([x["seconds"] for x in r["cold"]]), median([x["seconds"] for x in r["warm"]])
        runs = r["cold"] + r["warm"]
        tree, sources = r["tree"], r["sources"]
        f.update(floor=floor, cold=cold, warm=warm, cold_ratio=cold / floor, warm_ratio=warm / floor,
                 cold_cpu=median([x["cpu_seconds"] for x in r["cold"]]), floor_cpu=r["floor"]["cpu_median"],
                 peak_rss=max(x["peak_rss"] for x in runs), peak_pss=max(x["peak_pss"] for x in runs),
                 peak_single=max(x["peak_single"] for x in runs),
                 peak_at=max((x.get("peak_at", math.nan) / x["seconds"] for x in r["cold"]), default=math.nan),
                 tree=tree["allocated"], tree_apparent=tree["apparent"], pages=tree["files"],
                 sources=sources["allocated"], sources_apparent=sources["apparent"],
                 tree_ratio=tree["allocated"] / sources["allocated"],
                 tree_apparent_ratio=tree["apparent"] / sources["apparent"], cache=r["cache"]["apparent"])
        if "at_once" in r["floor"]:
            at_once = r["floor"]["at_once"]["median"]
            f.update(floor_at_once=at_once, cold_ratio_at_once=cold / at_once)
    f["analyse"] = r["analyse"].get("analyse")
    server = r.get("server", {}).get("summary")
    if server:
        f.update(indexing=server["indexing_done"], first_symbol=server["first_symbol"],
                 symbol_median=server["symbol_median"], symbol_p95=server["symbol_p95"],
                 exact_first=server["exact_first"], hover=server["hover_median"], hover_empty=server["hover_empty"],
                 server_rss=server["peak_rss"], server_pss=server["peak_pss"], survivors=server["survivors"],
                 server_single=r["server"]["session"]["peak_single"])
        if f["analyse"] and server["indexing_done"]:
            f["indexing_ratio"] = server["indexing_done"] / f["analyse"]
    peer = r.get("peer", {}).get("summary")
    if peer:
        f.update(peer_hover=peer["hover_median"], peer_hover_empty=peer["hover_empty"], peer_rss=peer["peak_rss"])
    return f


def _known(value: Any) -> bool:
    return value is not None and value == value  # NaN != NaN


def _ratio(x: float | None) -> str:
    return f"{x:.2f}x" if x is not None and _known(x) else "n/a"


Cell = Callable[[dict[str, Any]], str]


def _get(key: str, fmt: Callable[[Any], str] = fmt_s) -> Cell:
    """A table cell: one figure, formatted ("n/a" when it was not measured)."""
    def cell(f: dict[str, Any]) -> str:
        value = f.get(key)
        return fmt(value) if _known(value) else "n/a"
    return cell


def _join(*parts: Cell | str) -> Cell:
    """A table cell made of other cells and text."""
    return lambda f: "".join(p if isinstance(p, str) else p(f) for p in parts)


_count = _get("files", "{:,}".format)
_mb = {key: _get(key, fmt_mb) for key in ("peak_rss", "peak_pss", "tree", "sources", "server_rss", "server_pss")}

ROWS: list[tuple[str, Cell]] = [
    ("files / pages written", _join(_count, " / ", _get("pages", "{:,}".format))),
    ("floor (read + ast.parse, 1 process)", _get("floor")),
    ("cold generate", _get("cold")),
    ("  cold / floor", _get("cold_ratio", _ratio)),
    ("  CPU time, cold (all processes) / floor", _join(_get("cold_cpu"), " / ", _get("floor_cpu"))),
    ("floor, as many at once as cores a cold run keeps busy (--floor-at-once): each", _get("floor_at_once")),
    ("  cold / that floor (not the issue's target: its floor runs alone)", _get("cold_ratio_at_once", _ratio)),
    ("warm generate (median)", _get("warm")),
    ("  warm / floor", _get("warm_ratio", "{:.3f}x".format)),
    ("peak memory, CLI tree: RSS sum", _mb["peak_rss"]),
    ("  the same, PSS", _mb["peak_pss"]),
    ("  largest single process (RSS)", _get("peak_single", fmt_mb)),
    ("  when, cold (share of the run's wall; 1.00: after the last page)", _get("peak_at", "{:.2f}".format)),
    ("tree on disk / sources on disk", _join(_mb["tree"], " / ", _mb["sources"], " = ", _get("tree_ratio", _ratio))),
    ("  ratio of apparent sizes", _get("tree_apparent_ratio", _ratio)),
    ("analysis cache (apparent size)", _get("cache", fmt_mb)),
    ("CLI analyse phase, cold", _get("analyse")),
    ("server: launch -> indexing ended, cold", _get("indexing")),
    ("  / the analyse phase", _get("indexing_ratio", _ratio)),
    ("server: first symbol answer", _get("first_symbol")),
    ("workspace/symbol median / p95", _join(_get("symbol_median"), " / ", _get("symbol_p95"))),
    ("  exact name ranked first", _get("exact_first", str)),
    ("hover median: repodoc / jedi-language-server", _join(_get("hover"), " / ", _get("peer_hover"))),
    ("server tree peak: RSS sum / PSS", _join(_mb["server_rss"], " / ", _mb["server_pss"])),
    ("  largest single process (RSS)", _get("server_single", fmt_mb)),
    ("jedi-language-server peak RSS", _get("peer_rss", fmt_mb)),
]

# The targets: (name, figure, limit: a number or another figure, strictly below?, what is shown).
TARGETS: list[tuple[str, str, float | str, bool, Cell]] = [
    ("cold <= 1.5x floor", "cold_ratio", TARGET_COLD, False,
     _join(_get("cold"), " / ", _get("floor"), " = ", _get("cold_ratio", _ratio))),
    ("warm <= 0.1x floor", "warm_ratio", TARGET_WARM, False,
     _join(_get("warm"), " = ", _get("warm_ratio", "{:.3f}x".format))),
    ("peak memory of the CLI's tree < 1.5 GB (RSS sum)", "peak_rss", TARGET_MEMORY, True,
     _join(_mb["peak_rss"], " (PSS ", _mb["peak_pss"], ")")),
    ("tree on disk <= 1.5x the sources", "tree_ratio", TARGET_TREE, False,
     _join(_mb["tree"], " / ", _mb["sources"], " = ", _get("tree_ratio", _ratio))),
    ("server indexing <= 2x the CLI's analyse phase", "indexing_ratio", TARGET_INDEXING, False,
     _join(_get("indexing"), " / ", _get("analyse"), " = ", _get("indexing_ratio", _ratio))),
    ("workspace/symbol p95 < 30 ms", "symbol_p95", TARGET_SYMBOL_P95, True, _get("symbol_p95")),
    ("hover median <= jedi-language-server's", "hover", "peer_hover", False,
     _join(_get("hover"), " vs ", _get("peer_hover"))),
    ("server RSS < 1 GB (tree sum)", "server_rss", TARGET_SERVER_MEMORY, True,
     _join(_mb["server_rss"], " (PSS ", _mb["server_pss"], ")")),
]
DURING = "PyTorch: hover median during cold indexing <= 1.5x idle"


def checks(f: dict[str, Any], during: dict[str, Any] | None) -> dict[str, bool | None]:
    """The targets on one corpus's figures (None: not measured); `during` adds PyTorch's indexing hovers."""
    result: dict[str, bool | None] = {}
    for name, key, limit, strict, _ in TARGETS:
        value, bound = f.get(key), f.get(limit) if isinstance(limit, str) else limit
        if value is None or bound is None or not (_known(value) and _known(bound)):
            result[name] = None
        else:
            result[name] = bool(value < bound if strict else value <= bound)
    if during is not None:
        ratio = during["ratio"]
        result[DURING] = bool(ratio <= TARGET_INDEXING_HOVER) if ratio is not None and _known(ratio) else None
    return result


def target_rows(figs: dict[str, dict[str, Any]], verdicts: dict[str, dict[str, bool | None]],
                during: dict[str, Any] | None) -> list[list[str]]:
    """Per target: what each corpus measured and its verdict."""
    shown = {name: cell for name, _, _, _, cell in TARGETS}
    if during is not None:
        shown[DURING] = lambda f: (f"{fmt_s(during['busy_median'])} / {fmt_s(during['idle_median'])} = "
                                   f"{_ratio(during['ratio'])} ({during['busy_count']} hovers during indexing)")
    rows = []
    for name, cell in shown.items():
        row = [name]
        for label, f in figs.items():
            row += [cell(f), verdict(verdicts[label][name])] if name in verdicts[label] else ["", ""]
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", default="scale,torch", help="comma-separated: scale (17,150 files), torch")
    parser.add_argument("--limit", type=int, help="N files of each corpus (a quick check, not a measurement)")
    parser.add_argument("--cold-runs", type=int, default=1,
                        help="floor and cold runs, alternating (the ratio is of their medians)")
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--floor-at-once", type=int, default=0, metavar="N",
                        help="after each floor, N floors at once (the floor with N cores busy), reported beside it")
    parser.add_argument("--jobs", type=int, help="passed as --jobs (default: repodoc's own, one per core)")
    parser.add_argument("--no-peer", dest="peer", action="store_false", help="skip jedi-language-server")
    parser.add_argument("--no-generate", dest="generate", action="store_false",
                        help="skip the floor, the CLI's runs and the tree (steps 1-2): the server's targets only")
    parser.add_argument("--no-profile", dest="profile", action="store_false", help="skip the warm run under cProfile")
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
        failed: dict[str, Any] = {}
        if args.during:
            (tmp / "indexing").mkdir()
            during = _step(failed, "hovers during indexing", lambda: indexing_hovers(
                ensure_corpus(), tmp / "indexing", args.limit))
        if during is not None:
            print(f"hovers during PyTorch's cold indexing: {during['busy_count']} hovers, median "
                  f"{fmt_s(during['busy_median'])}; idle {fmt_s(during['idle_median'])}", flush=True)
    raw = {"limit": args.limit, "jobs": args.jobs, "corpora": records, "indexing_hovers": during}
    print(f"measurements: {write_results('scale', raw)}", flush=True)  # kept even if the summary fails

    figs = {label: figures(r) for label, r in records.items()}
    with_during = "torch" if "torch" in figs else corpora[0]  # the column of PyTorch's indexing hovers
    verdicts = {label: checks(f, during if label == with_during else None) for label, f in figs.items()}
    figures_rows = [[title, *(cell(f) for f in figs.values())] for title, cell in ROWS]
    targets = target_rows(figs, verdicts, during)
    target_header = ["target", *(x for label in figs for x in (label, ""))]
    print()
    print(table(figures_rows, ["metric", *figs]))
    print()
    print(table(targets, target_header))
    notes = [f"{label}: {n}" for label, r in records.items() for n in r.get("notes", []) + r["errors"]]
    notes += failed.get("errors", [])
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
    path = write_results("scale", {**raw, "figures": figs, "checks": verdicts, "notes": notes})
    path.with_suffix(".md").write_text(
        f"{markdown_table(figures_rows, ['metric', *figs])}\n\n{markdown_table(targets, target_header)}\n")
    print(f"results: {path} (tables in Markdown: {path.with_suffix('.md').name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
