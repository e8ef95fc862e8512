"""`repodoc generate` on PyTorch's sources: cold and warm, against the floor and griffe.

    python bench/bench_generate.py [--cold-runs 3] [--warm-runs 5] [--floor-runs 3] [--griffe-runs 2]

In one run: copy the corpus into a temporary workspace; measure the floor (read and
`ast.parse` every file in one process, alternating with the cold runs); run
`repodoc generate ROOT --out TMP --json` cold (REPODOC_CACHE_DIR pointing at a fresh
folder, empty output folder) and warm (the same again, nothing changed), polling the RSS
sum of the whole process tree every 50 ms; split one cold and one warm run in phases
(analyse, render+write) with repodoc's own API; time griffe's static load of the same
package as a peer. Prints a table, writes bench/results/generate-*.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BENCH, fmt_mb, fmt_s, median, run_measured, settle_file_creation, table, verdict, write_results
from corpus import ensure_corpus, python_files, stats
from floor import measure_floor_at_once, measure_floor_fresh

TARGET_COLD = 1.5  # cold / floor
TARGET_WARM = 0.1  # warm / floor
TARGET_MEMORY = 1.5e9  # bytes, the whole process tree

GRIFFE_SCRIPT = """
import json, logging, sys, time
logging.disable(logging.CRITICAL)
started = time.perf_counter()
import griffe
loaded = griffe.load("torch", search_paths=[sys.argv[1]], resolve_aliases=False)
seconds = time.perf_counter() - started
def count(module):  # not `.modules`: it builds aliases, which recurse without resolution
    return 1 + sum(count(m) for m in module.members.values() if not m.is_alias and m.is_module)
print(json.dumps({"seconds": seconds, "modules": count(loaded)}))
"""


def repodoc_command() -> list[str]:
    """`repodoc` next to this interpreter, else `python -m repodoc_lsp`."""
    script = Path(sys.executable).with_name("repodoc")
    return [str(script)] if script.exists() else [sys.executable, "-m", "repodoc_lsp"]


def run_generate(root: Path, out: Path, cache: Path, jobs: int | None) -> dict[str, Any]:
    cmd = [*repodoc_command(), "generate", str(root), "--out", str(out), "--json", "--quiet"]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    env = {**os.environ, "REPODOC_CACHE_DIR": str(cache)}
    m = run_measured(cmd, env=env, pss=True)
    if m.proc.returncode != 0:
        raise RuntimeError(f"repodoc generate exited {m.proc.returncode}:\n{m.proc.stderr[-3000:]}")
    summary = json.loads(m.proc.stdout)
    return {
        "seconds": m.seconds,
        "cpu_seconds": m.cpu_seconds,
        "system_seconds": m.system_seconds,
        "internal_seconds": summary.get("seconds"),
        "peak_rss": m.peak_rss,
        "peak_single": m.peak_single,
        "peak_pss": m.peak_pss,
        "peak_at": m.peak_at,
        "files": summary.get("files"),
        "analysed": summary.get("analysed"),
        "cached": summary.get("cached"),
        "written": summary.get("written"),
        "unchanged": summary.get("unchanged"),
        "removed": summary.get("removed"),
        "skipped": len(summary.get("skipped", [])),
        "conflicts": len(summary.get("conflicts", [])),
        "cache_used": cache.exists() and any(cache.iterdir()),
        "pages": sorted(summary.get("writtenPages", [])),
        "conflict_details": summary.get("conflicts", [])[:20],
        "stderr_tail": m.proc.stderr[-2000:],
    }


def run_phases(root: Path, out: Path, cache: Path, jobs: int | None) -> dict[str, Any]:
    env = {**os.environ, "REPODOC_CACHE_DIR": str(cache)}
    m = run_measured([sys.executable, str(BENCH / "_phases.py"), str(root), str(out), str(jobs or 0)], env=env)
    if m.proc.returncode != 0:
        return {"error": m.proc.stderr.strip()[-2000:]}
    return {**json.loads(m.proc.stdout.strip().splitlines()[-1]), "wall": m.seconds, "peak_rss": m.peak_rss}


def run_griffe(search_path: Path) -> dict[str, Any]:
    m = run_measured([sys.executable, "-c", GRIFFE_SCRIPT, str(search_path)])
    if m.proc.returncode != 0:
        return {"error": m.proc.stderr.strip()[-2000:]}
    return {**json.loads(m.proc.stdout.strip().splitlines()[-1]), "wall": m.seconds, "peak_rss": m.peak_rss}


def cold_and_warm(root: Path, tmp: Path, *, floor_runs: int, cold_runs: int, warm_runs: int,
                  jobs: int | None, floor_at_once: int = 0) -> dict[str, Any]:
    """The floor alternating with cold runs, then warm runs on the last cold run's cache and output
    (`tmp/out-N`, `tmp/cache-N`, kept); notes name what looks wrong (a page missing, a warm write).
    `floor_at_once` N > 1: each floor run is followed by N floors at once (`floor.measure_floor_at_once`:
    the floor with the cores as busy as a cold run keeps them), reported beside it as `floor["at_once"]`."""
    notes: list[str] = []
    # Floor and cold runs alternate, so a burst of load elsewhere on the machine weighs on both.
    floor_times: list[float] = []
    floor_cpu: list[float] = []
    at_once: list[float] = []
    cold: list[dict[str, Any]] = []
    for i in range(max(floor_runs, cold_runs)):
        if i < floor_runs:
            os.sync()  # the last run's pages reach the disk before, not during, this one
            settle_file_creation(tmp)  # the same disk state for the floor as for the cold run
            one = measure_floor_fresh(root, 1)
            floor_times.append(float(one["median"]))
            floor_cpu.append(float(one["cpu_median"]))
            print(f"floor {i + 1}: {fmt_s(floor_times[-1])}", flush=True)
            if floor_at_once > 1:
                at_once.append(float(measure_floor_at_once(root, floor_at_once)["median"]))
                print(f"floor {i + 1}, {floor_at_once} at once: {fmt_s(at_once[-1])} each", flush=True)
        if i < cold_runs:
            out, cache = tmp / f"out-{i}", tmp / f"cache-{i}"
            os.sync()
            settled = settle_file_creation(tmp)
            cold.append({**run_generate(root, out, cache, jobs), "before": settled})
            print(f"cold {i + 1}: {fmt_s(cold[-1]['seconds'])}, {fmt_mb(cold[-1]['peak_rss'])}, system "
                  f"{fmt_s(cold[-1]['system_seconds'])} (a file creation cost {settled['create_us']} us before)",
                  flush=True)
    # The cold runs' trees are deleted only now, and each timed run waits until creating a file is
    # cheap again (`settle_file_creation`): on ext4 without a journal, files created within a minute
    # or more of deleting thousands cost 30 times the system time, a cost of the benchmark's own
    # clean-up (or of anyone's), not of the run.
    for i in range(cold_runs - 1):
        shutil.rmtree(tmp / f"out-{i}")
    floor: dict[str, Any] = {
        "runs": floor_times,
        "median": median(floor_times),
        "cpu_runs": floor_cpu,
        "cpu_median": median(floor_cpu),
        "interleaved_with_cold": True,
    }
    if at_once:
        floor["at_once"] = {"processes": floor_at_once, "runs": at_once, "median": median(at_once)}
    warm: list[dict[str, Any]] = []
    last = cold_runs - 1
    for i in range(warm_runs):
        warm.append(run_generate(root, tmp / f"out-{last}", tmp / f"cache-{last}", jobs))
        print(f"warm {i + 1}: {fmt_s(warm[-1]['seconds'])}, {fmt_mb(warm[-1]['peak_rss'])}", flush=True)

    if cold and (cold[0]["cached"] or not cold[0]["cache_used"]):
        notes.append(
            "REPODOC_CACHE_DIR looks ignored: the cold run found cached files or left the "
            "temporary cache folder empty"
        )
    files = len(python_files(root))
    if cold and cold[0]["analysed"] != files:
        notes.append(f"cold run analysed {cold[0]['analysed']} files of {files}")
    if warm and any(w["analysed"] or w["written"] for w in warm):
        rewritten = sorted({p for w in warm for p in w["pages"]})
        notes.append(f"a warm run analysed or wrote something although nothing changed: {rewritten[:10]}")
    everything = set().union(*(set(r["pages"]) for r in cold)) if cold else set()
    for i, r in enumerate(cold):
        missing = sorted(everything - set(r["pages"]))
        r["missing_pages"] = missing
        if r["conflicts"]:
            notes.append(
                f"cold run {i + 1}: {r['conflicts']} conflicts in an empty output folder: "
                f"{r['conflict_details'][:3]}"
            )
        if missing:
            wrote = len(r["pages"])
            notes.append(f"cold run {i + 1} wrote {wrote} pages, not {len(everything)}: missing {missing[:10]}")
    for r in cold + warm:
        if len(r["pages"]) > 50:  # keep the results file small
            r["pages"] = len(r["pages"])
    return {"floor": floor, "cold": cold, "warm": warm, "notes": notes,
            "out": tmp / f"out-{last}", "cache": tmp / f"cache-{last}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="folder of sources (default: the PyTorch corpus)")
    parser.add_argument("--floor-runs", type=int, default=3)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--griffe-runs", type=int, default=2, help="0: skip griffe")
    parser.add_argument("--no-phases", action="store_true", help="skip the analyse/write split")
    parser.add_argument("--jobs", type=int, help="passed as --jobs (default: repodoc's own, one per core)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)

    corpus = args.corpus or ensure_corpus()
    tmp = Path(tempfile.mkdtemp(prefix="repodoc-bench-gen-"))
    try:
        root = tmp / "ws" / corpus.name
        shutil.copytree(corpus, root)
        st = stats(root)
        print(f"corpus: {corpus} -> {root}: {st.files} files, {st.lines:,} lines", flush=True)
        runs = cold_and_warm(root, tmp, floor_runs=args.floor_runs, cold_runs=args.cold_runs,
                             warm_runs=args.warm_runs, jobs=args.jobs)
        floor, cold, warm, notes = runs["floor"], runs["cold"], runs["warm"], runs["notes"]
        floor_s = floor["median"]

        phases: dict[str, Any] = {}
        if not args.no_phases:
            phases["cold"] = run_phases(root, tmp / "out-phases", tmp / "cache-phases", args.jobs)
            phases["warm"] = run_phases(root, tmp / "out-phases", tmp / "cache-phases", args.jobs)
            print(f"phases: {phases}", flush=True)

        griffe: list[dict[str, Any]] = []
        for _ in range(args.griffe_runs):
            griffe.append(run_griffe(root.parent))
            print(f"griffe: {griffe[-1]}", flush=True)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    cold_s = median([r["seconds"] for r in cold])
    warm_s = median([r["seconds"] for r in warm])
    peak = max([r["peak_rss"] for r in cold + warm], default=0)
    cold_cpu = median([r["cpu_seconds"] for r in cold])
    cold_system = median([r["system_seconds"] for r in cold])
    floor_cpu_s = float(floor["cpu_median"])
    pairwise = [r["seconds"] / f for r, f in zip(cold, floor["runs"], strict=False)]  # each cold run / its floor
    griffe_ok = [g for g in griffe if "error" not in g]
    griffe_s = median([g["wall"] for g in griffe_ok]) if griffe_ok else None
    ratios: dict[str, float | None] = {
        "cold_over_floor": cold_s / floor_s,
        "warm_over_floor": warm_s / floor_s,
        "griffe_over_floor": griffe_s / floor_s if griffe_s else None,
        "cold_over_griffe": cold_s / griffe_s if griffe_s else None,
        "cold_cpu_over_floor_cpu": cold_cpu / floor_cpu_s,
        "cold_over_floor_pairwise_median": median(pairwise),
    }
    checks = {
        "cold_over_floor<=1.5": cold_s / floor_s <= TARGET_COLD,
        "warm_over_floor<=0.1": warm_s / floor_s <= TARGET_WARM,
        "peak_memory<1.5GB": peak < TARGET_MEMORY,
    }

    rows: list[list[object]] = [
        ["floor (read + ast.parse, 1 process)", fmt_s(floor_s), "1.00", "", "", ""],
        [
            f"repodoc generate cold (median of {len(cold)})",
            fmt_s(cold_s),
            f"{cold_s / floor_s:.2f}",
            f"<= {TARGET_COLD}",
            fmt_mb(max((r["peak_rss"] for r in cold), default=0)),
            verdict(checks["cold_over_floor<=1.5"]),
        ],
        [
            "  cold, each run / the floor run before it (median)",
            "",
            f"{median(pairwise):.2f}",
            "",
            "",
            "",
        ],
        [
            "  CPU time (all processes): cold / floor",
            f"{fmt_s(cold_cpu)} / {fmt_s(floor_cpu_s)}",
            f"{cold_cpu / floor_cpu_s:.2f}",
            "",
            "",
            "",
        ],
        ["  of which system time (cold, median)", fmt_s(cold_system), "", "", "", ""],
        [
            f"repodoc generate warm (median of {len(warm)})",
            fmt_s(warm_s),
            f"{warm_s / floor_s:.3f}",
            f"<= {TARGET_WARM}",
            fmt_mb(max((r["peak_rss"] for r in warm), default=0)),
            verdict(checks["warm_over_floor<=0.1"]),
        ],
        [
            "repodoc peak memory (process tree)",
            "",
            "",
            "< 1,500 MB",
            fmt_mb(peak),
            verdict(checks["peak_memory<1.5GB"]),
        ],
    ]
    if griffe_s is not None:
        rows.append(
            [
                f"peer: griffe.load, no aliases (median of {len(griffe_ok)})",
                fmt_s(griffe_s),
                f"{griffe_s / floor_s:.2f}",
                "",
                fmt_mb(max(g["peak_rss"] for g in griffe_ok)),
                "",
            ]
        )
    for name in ("cold", "warm"):
        ph = phases.get(name, {})
        if "analyse" in ph:
            rows.append(
                [
                    f"  phases, {name}: analyse / render+write",
                    f"{fmt_s(ph['analyse'])} / {fmt_s(ph['write'])}",
                    f"{ph['analyse'] / floor_s:.2f} / {ph['write'] / floor_s:.2f}",
                    "",
                    fmt_mb(ph["peak_rss"]),
                    "",
                ]
            )
        elif "error" in ph:
            notes.append(f"phase split ({name}) failed: {ph['error'][-300:]}")
    print()
    print(table(rows, ["generate, " + f"{st.files} files", "median", "/ floor", "target", "peak RSS", ""]))
    for note in notes:
        print(f"note: {note}")
    path = write_results(
        "generate",
        {
            "corpus": {"path": str(corpus), "files": st.files, "lines": st.lines, "bytes": st.bytes},
            "jobs": args.jobs,
            "command": repodoc_command(),
            "floor": floor,
            "cold": cold,
            "warm": warm,
            "phases": phases,
            "griffe": griffe,
            "medians": {"floor": floor_s, "cold": cold_s, "warm": warm_s, "griffe": griffe_s, "peak_rss": peak},
            "ratios": ratios,
            "checks": checks,
            "notes": notes,
        },
    )
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
