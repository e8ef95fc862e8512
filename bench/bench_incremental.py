"""`repodoc generate` where people feel it (issue 37): the first unchanged run after a cold one, a run
after a one-file edit and `--check` after a one-file edit (what the pre-commit hook runs), against the
floor, on PyTorch's sources.

    python bench/bench_incremental.py [--rounds 3] [--jobs N] [--keep]

In one run: copy the corpus into a temporary workspace; each round: the floor (read and `ast.parse`
every file in one process), a cold `repodoc generate` (empty cache and output), the same again
(nothing changed: the first unchanged run after a cold one), a comment line appended to one module
then `repodoc generate`, another line then `repodoc generate --check` (it exits 1: the pages showing
that module's size are stale), the module put back. CPU time is user + system of the CLI and its workers. Prints a
table of medians, writes bench/results/incremental-*.json.
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

from _common import fmt_s, median, run_measured, settle_file_creation, table, verdict, write_results
from bench_generate import repodoc_command
from corpus import ensure_corpus, stats
from floor import measure_floor_fresh

TARGET = 0.1  # each of unchanged, edit and check-after-edit / floor
EDITED = "nn/modules/linear.py"  # a module many others import


def run(root: Path, out: Path, cache: Path, jobs: int | None, *flags: str) -> dict[str, Any]:
    cmd = [*repodoc_command(), "generate", str(root), "--out", str(out), "--json", "--quiet", *flags]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    m = run_measured(cmd, env={**os.environ, "REPODOC_CACHE_DIR": str(cache)})
    if m.proc.returncode not in ((0, 1) if "--check" in flags else (0,)):
        raise RuntimeError(f"repodoc generate {' '.join(flags)} exited {m.proc.returncode}:\n{m.proc.stderr[-3000:]}")
    summary = json.loads(m.proc.stdout)
    return {"seconds": m.seconds, "cpu_seconds": m.cpu_seconds, "internal_seconds": summary.get("seconds"),
            "written": summary.get("written"), "unchanged": summary.get("unchanged"),
            "stale": [s["path"] for s in summary.get("stale", [])], "pages": summary.get("writtenPages", [])[:20]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="folder of sources (default: the PyTorch corpus)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    corpus = args.corpus or ensure_corpus()
    tmp = Path(tempfile.mkdtemp(prefix="repodoc-bench-incr-"))
    runs: dict[str, list[dict[str, Any]]] = {"floor": [], "cold": [], "unchanged": [], "edit": [], "check": []}
    notes: list[str] = []
    try:
        root = tmp / "ws" / corpus.name
        shutil.copytree(corpus, root)
        st = stats(root)
        print(f"corpus: {corpus} -> {root}: {st.files} files, {st.lines:,} lines", flush=True)
        edited = root / EDITED
        original = edited.read_bytes()
        for i in range(args.rounds):
            os.sync()
            settle_file_creation(tmp)
            floor = measure_floor_fresh(root, 1)
            runs["floor"].append({"seconds": float(floor["median"]), "cpu_seconds": float(floor["cpu_median"])})
            out, cache = tmp / f"out-{i}", tmp / f"cache-{i}"
            os.sync()
            settle_file_creation(tmp)
            runs["cold"].append(run(root, out, cache, args.jobs))
            runs["unchanged"].append(run(root, out, cache, args.jobs))
            edited.write_bytes(original + f"\n# edit {i}a\n".encode())
            runs["edit"].append(run(root, out, cache, args.jobs))
            edited.write_bytes(original + f"\n# edit {i}b\n# and a line more\n".encode())  # its sizes change
            runs["check"].append(run(root, out, cache, args.jobs, "--check"))
            edited.write_bytes(original)
            run(root, out, cache, args.jobs)  # back as it was, for the next round's cold run
            print(f"round {i + 1}: " + ", ".join(f"{k} {fmt_s(v[-1]['seconds'])}" for k, v in runs.items()), flush=True)
            if runs["unchanged"][-1]["written"]:
                notes.append(f"round {i + 1}: the unchanged run wrote {runs['unchanged'][-1]['pages']}")
            if not runs["check"][-1]["stale"]:
                notes.append(f"round {i + 1}: --check after an edit found nothing stale")
            shutil.rmtree(out, ignore_errors=True)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    floor_s = median([r["seconds"] for r in runs["floor"]])
    rows = []
    ratios: dict[str, float] = {}
    for name, label in (("floor", "floor (read + ast.parse, 1 process)"), ("cold", "cold"),
                        ("unchanged", "first unchanged run after the cold one"),
                        ("edit", f"after a one-file edit ({EDITED})"), ("check", "--check after a one-file edit")):
        seconds = median([r["seconds"] for r in runs[name]])
        cpu = median([r["cpu_seconds"] for r in runs[name]])
        ratios[name] = seconds / floor_s
        target = name in ("unchanged", "edit", "check")
        rows.append([label, fmt_s(seconds), fmt_s(cpu), f"{ratios[name]:.3f}", f"<= {TARGET}" if target else "",
                     verdict(ratios[name] <= TARGET) if target else ""])
    print(table(rows, [f"run (median of {args.rounds})", "wall", "CPU", "/ floor", "target", ""]))
    for note in notes:
        print(f"note: {note}")
    path = write_results("incremental", {"runs": runs, "ratios": ratios, "notes": notes, "corpus": str(corpus)})
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
