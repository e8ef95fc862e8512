"""`repodoc merge` and the merge job's final `generate --facts --check` on page shares of a corpus replicated
1x, 2x, ... (distinct paths): CPU (user and system), wall time and peak RSS of each, several rounds
interleaved with another version's merge of the same shares (`--before SRC`, e.g. a `git archive` of main),
medians; the merged tree checked equal to the single run's; then the cost per page fitted between the
scales and extrapolated to 1,000,000 files (the pages per file of the largest scale).

    python bench/bench_merge.py --scales 1,2 --before /tmp/main-src --work /tmp/merge-bench --keep
    python bench/bench_merge.py --corpus large --scales 1,2 --single-scales 1 --work /tmp/W --keep --prepare-only

The shares (`analyze --shard K/A` of `--analyze A` jobs, `graph --pages M`, `generate --pages K/M --graph`) and
the single run are made once per scale in WORK/xN and kept there with `--keep` (a later run with the same --work
reuses them); the check reads the same facts files (a merge job is given every analysis job's facts file).
Results go to bench/results/merge-*.json; figures to bench/README.md. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt_s, run_measured, write_results
from bench_shards import TARGET_FILES, corpus_root, replicate, repodoc, same_tree


def prepare(corpus: Path, base: Path, times: int, m: int, a: int, single: bool = True) -> None:
    """The corpus `times` over in base/ws, the facts files of `a` analysis jobs, the graph's answers, M page
    shares (base/pages-K) and, with `single`, the single run's tree (base/single), unless already there."""
    made = all((base / f"pages-{k}").is_dir() for k in range(1, m + 1)) and all(
        p.is_file() for p in facts_files(base, a, made=False))
    if made and ((base / "single").is_dir() or not single):
        return
    shutil.rmtree(base, ignore_errors=True)
    replicate(corpus, base / "ws", times)
    out, facts = base / "docs-out", facts_files(base, a)
    flags = ["--out", out, "--cache-dir", base / "cache", "--no-cache", "-q", "--jobs", 2]
    graph = base / "graph"
    run_measured(repodoc("graph", base / "ws", "--out", out, "--facts", *facts, "--pages", m, "--output", graph),
                 timeout=7200).proc.check_returncode()
    for k in range(1, m + 1):
        share = repodoc("generate", base / "ws", *flags, "--facts", *facts, "--pages", f"{k}/{m}", "--graph", graph)
        run_measured(share, timeout=7200).proc.check_returncode()
        out.rename(base / f"pages-{k}")
    if single:
        run_measured(repodoc("generate", base / "ws", *flags, "--facts", *facts), timeout=7200).proc.check_returncode()
        out.rename(base / "single")


def facts_files(base: Path, a: int, made: bool = True) -> list[Path]:
    """The facts files of `a` analysis jobs of base/ws (made unless there, or `made` is False)."""
    files = [base / f"facts-{k}-of-{a}.jsonl.gz" for k in range(1, a + 1)]
    for k, path in enumerate(files, 1):
        if made and not path.is_file():
            run_measured(repodoc("analyze", base / "ws", "--shard", f"{k}/{a}", "--output", path, "--out",
                                 base / "docs-out", "--no-cache", "-q", "--jobs", 2),
                         timeout=7200).proc.check_returncode()
    return files


def _run(record: dict[str, list[dict[str, float]]], name: str, cmd: list[str], before: Path | None = None) -> None:
    env = None if before is None else {**os.environ, "PYTHONPATH": str(before)}
    measured = run_measured(cmd, timeout=7200, env=env, cwd=before)
    if measured.proc.returncode != 0:
        raise RuntimeError(f"{name}: exit {measured.proc.returncode}\n{measured.proc.stderr[-3000:]}")
    record.setdefault(name, []).append({
        "seconds": measured.seconds, "cpu": measured.cpu_seconds, "system": measured.system_seconds,
        "peak_rss": measured.peak_rss, "load": os.getloadavg()[0]})


def downloaded(shares: list[Path], out: Path) -> None:
    """The shares' files hard-linked into `out` as a CI's `merge-multiple` downloads them (one share's manifest
    over another's): what `merge --in-place` is given."""
    for share in shares:
        for folder, _dirs, files in os.walk(share):
            target = out / Path(folder).relative_to(share)
            target.mkdir(parents=True, exist_ok=True)
            for name in files:
                if name == ".repodoc-pages.json":  # (`old_notes`': not the page job's)
                    continue
                (target / name).unlink(missing_ok=True)
                os.link(Path(folder, name), target / name)


def old_notes(shares: list[Path]) -> None:
    """Each share's note as the version before the notes were named by share reads it (`.repodoc-pages.json`,
    version 1: the same fields), for `--before`'s merge of the same shares."""
    for share in shares:
        note = next(share.glob(".repodoc-pages-*-of-*.json"), None)
        if note is not None:
            table = json.loads(note.read_text())
            (share / ".repodoc-pages.json").write_text(json.dumps({**table, "version": 1}, indent=1) + "\n")


def measure(base: Path, m: int, rounds: int, before: Path | None, a: int = 1) -> dict[str, Any]:
    """`rounds` rounds of: the other version's merge and check (when given), this one's; medians."""
    shares = [base / f"pages-{k}" for k in range(1, m + 1)]
    out, facts = base / "docs-out", facts_files(base, a)
    check = repodoc("generate", base / "ws", "--out", out, "--cache-dir", base / "cache", "-q", "--jobs", 2,
                    "--facts", *facts, "--check")
    runs: dict[str, list[dict[str, float]]] = {}
    equal = True
    if before is not None:
        old_notes(shares)
    # the tree every merge must equal: the single run's, else the first merge's of the other version (whose merged
    # tree equals the single run's: its entry in bench/README.md)
    reference = base / "single" if (base / "single").is_dir() else base / "merged-before"
    shutil.rmtree(base / "merged-before", ignore_errors=True)
    for _ in range(rounds):
        if before is not None:
            shutil.rmtree(out, ignore_errors=True)
            _run(runs, "merge (before)", repodoc("merge", *shares, "--out", out), before)
            if not reference.is_dir():
                shutil.copytree(out, reference, copy_function=os.link)
            equal &= same_tree(reference, out)
            _run(runs, "check (before)", check, before)
        shutil.rmtree(out, ignore_errors=True)
        _run(runs, "merge", repodoc("merge", *shares, "--out", out))
        equal &= same_tree(reference, out) if reference.is_dir() else True
        _run(runs, "check", check)
        shutil.rmtree(out, ignore_errors=True)
        downloaded(shares, out)  # (not timed: the artifacts' download)
        _run(runs, "merge in place", repodoc("merge", "--in-place", "--out", out))
        equal &= same_tree(reference, out) if reference.is_dir() else True
        _run(runs, "check in place", check)
    pages = sum(1 for s in shares for p in s.rglob("*") if p.is_file() and not p.name.startswith("."))
    files = sum(1 for _ in (base / "ws").rglob("*.py"))
    if not (base / "single").is_dir():
        print(f"  (no single run at this scale: each merged tree compared with {reference.name}, each check's exit 0 "
              "says it is up to date)")
    medians = {name: {key: statistics.median(r[key] for r in rs) for key in rs[0]} for name, rs in runs.items()}
    for name, med in medians.items():
        spread = ", ".join(f"{r['cpu']:.2f}" for r in runs[name])
        print(f"  {name:<15} cpu {med['cpu']:6.2f} s (system {med['system']:.2f}; runs {spread})  wall "
              f"{fmt_s(med['seconds']):>8}  peak RSS {med['peak_rss'] / 2**20:6.1f} MB  load {med['load']:.1f}",
              flush=True)
    print(f"  merged tree == single run's: {equal}", flush=True)
    return {"files": files, "pages": pages, "equal": equal, "runs": runs, "medians": medians}


def model(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per page (merge) and per file (check): the slope of the medians between the smallest and the largest
    scale, extrapolated to TARGET_FILES files at the largest scale's pages per file."""
    low, high = records[0], records[-1]
    pages_per_file = high["pages"] / high["files"]
    target_pages = TARGET_FILES * pages_per_file
    result: dict[str, Any] = {"pages_per_file": pages_per_file, "target_pages": target_pages}
    for name in high["medians"]:
        unit = ("files", TARGET_FILES) if name.startswith("check") else ("pages", target_pages)
        span = high[unit[0]] - low[unit[0]]
        for key in ("cpu", "seconds"):
            slope = (high["medians"][name][key] - low["medians"][name][key]) / span
            result[f"{name} {key} per {unit[0][:-1]} (us)"] = slope * 1e6
            result[f"{name} {key} at {TARGET_FILES:,} files (min)"] = slope * unit[1] / 60
        rss = (high["medians"][name]["peak_rss"] - low["medians"][name]["peak_rss"]) / (high["files"] - low["files"])
        result[f"{name} peak RSS per file (KB)"] = rss / 1e3
        result[f"{name} peak RSS at {TARGET_FILES:,} files (GB)"] = (
            high["medians"][name]["peak_rss"] + rss * (TARGET_FILES - high["files"])) / 1e9
    for key, value in result.items():
        print(f"  {key}: {value:,.1f}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("large", "torch"), default="torch")
    parser.add_argument("--scales", default="1,2", help="replications of the corpus (default: 1,2)")
    parser.add_argument("--single-scales", metavar="SCALES",
                        help="the scales at which the single run is made and each merged tree compared with it "
                             "(default: every scale; at the others the check's exit 0 is the proof)")
    parser.add_argument("--pages", type=int, default=2, help="page shares M (default: 2)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--analyze", type=int, default=2, help="analysis jobs whose facts the check reads (default: 2)")
    parser.add_argument("--before", type=Path, metavar="SRC", help="another version's sources: its merge too")
    parser.add_argument("--work", type=Path, required=True, metavar="DIR", help="where the shares are made")
    parser.add_argument("--keep", action="store_true", help="keep WORK (its shares serve the next run)")
    parser.add_argument("--prepare-only", action="store_true", help="make the shares in WORK, measure nothing")
    args = parser.parse_args(argv)
    corpus = corpus_root(args.corpus)
    records = []
    for times in (int(x) for x in args.scales.split(",")):
        base = args.work / f"x{times}"
        single = args.single_scales is None or str(times) in args.single_scales.split(",")
        prepare(corpus, base, times, args.pages, args.analyze, single)
        if args.prepare_only:
            continue
        print(f"{times}x:", flush=True)
        records.append({"times": times, **measure(base, args.pages, args.rounds, args.before, args.analyze)})
    if args.prepare_only:
        return 0
    result = {"records": records, "model": model(records) if len(records) > 1 else {}}
    print(f"-> {write_results('merge', result)}")
    if not args.keep:
        shutil.rmtree(args.work, ignore_errors=True)
    return 0 if all(r["equal"] for r in records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
