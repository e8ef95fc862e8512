"""The floor: read and `ast.parse` every .py file of the corpus in ONE process.

    python bench/floor.py [--runs 5] [--corpus DIR] [--at-once N]

No tool that parses every file can analyse the corpus faster than this on one core; the
other benchmarks report their times as multiples of it.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt_s, median, table, write_results
from corpus import ensure_corpus, python_files


def parse_all(files: list[Path]) -> tuple[float, int, float]:
    """Read and parse every file; return (seconds, files that failed to parse, CPU seconds)."""
    failed = 0
    cpu = time.process_time()
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences and the like
        for path in files:
            try:
                ast.parse(path.read_bytes(), filename=str(path))
            except (SyntaxError, ValueError):
                failed += 1
    return time.perf_counter() - started, failed, time.process_time() - cpu


def measure_floor(corpus: Path, runs: int = 5) -> dict[str, Any]:
    files = python_files(corpus)
    parse_all(files[:50])  # warm the interpreter, not the files
    times: list[float] = []
    cpus: list[float] = []
    failed = 0
    for _ in range(runs):
        seconds, failed, cpu = parse_all(files)
        times.append(seconds)
        cpus.append(cpu)
    return {
        "corpus": str(corpus),
        "files": len(files),
        "failed": failed,
        "runs": times,
        "median": median(times),
        "cpu_runs": cpus,
        "cpu_median": median(cpus),
    }


def measure_floor_fresh(corpus: Path, runs: int = 1) -> dict[str, Any]:
    """`measure_floor` in a new interpreter, as repodoc's own runs start: parsing makes millions of
    objects, so the cycle collector's full passes walk whatever else the process holds, and a
    benchmark's process holds more as it goes (after bench_scale's server sessions its in-process
    floor of PyTorch took 17.7-18.5 s against 13.5 s at its start)."""
    proc = subprocess.run([sys.executable, __file__, "--corpus", str(corpus), "--runs", str(runs), "--json"],
                          capture_output=True, text=True, timeout=3600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"the floor failed: {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def measure_floor_at_once(corpus: Path, processes: int = 2) -> dict[str, Any]:
    """The floor in `processes` new interpreters started together, each reading and parsing the whole
    corpus: the floor with every core as busy as a run of `processes` workers keeps them. On a machine
    that gives one busy core a boost it cannot give two (turbo, a host's shared core), each takes
    longer than the floor alone; where every core runs at its own speed, each takes as long."""
    argv = [sys.executable, __file__, "--corpus", str(corpus), "--runs", "1", "--json"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(processes)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=3600)
        if proc.returncode != 0:
            raise RuntimeError(f"the floor failed: {err[-2000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    times = [float(r["median"]) for r in results]
    cpus = [float(r["cpu_median"]) for r in results]
    return {"corpus": str(corpus), "processes": processes, "files": results[0]["files"],
            "runs": times, "median": median(times), "cpu_runs": cpus, "cpu_median": median(cpus)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--corpus", type=Path, help="folder of sources (default: the PyTorch corpus)")
    parser.add_argument("--json", action="store_true", help="print the result as one line of JSON, write no file")
    parser.add_argument("--at-once", type=int, default=1, metavar="N",
                        help="N processes started together, each the whole floor once (--runs ignored)")
    args = parser.parse_args(argv)
    corpus = args.corpus or ensure_corpus()
    result = measure_floor_at_once(corpus, args.at_once) if args.at_once > 1 else measure_floor(corpus, args.runs)
    if args.json:
        print(json.dumps(result))
        return 0
    runs = result["runs"]
    assert isinstance(runs, list)
    print(
        table(
            [
                [
                    f"read + ast.parse, {args.at_once} process{'es at once' if args.at_once > 1 else ''}",
                    result["files"],
                    result["failed"],
                    fmt_s(float(result["median"])),
                    ", ".join(fmt_s(t) for t in runs),
                ]
            ],
            ["floor", "files", "syntax errors", "median", "runs"],
        )
    )
    print(f"results: {write_results('floor', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
