"""Issue 33's limits: one file's analysis bounded in time and memory, and one huge folder's pages.

    python bench/bench_limits.py [--kb 300] [--files 8000] [--runs 1] [--no-folder] [--unguarded]

Analysis (each case in a process of its own: its time and peak memory, against the floor of the same
run, a plain module of the same size analysed the same way):
- `deep`: --kb KB of nested brackets (`x = [[[[...`), which parso's error recovery read at ~1.5 MB
  and 50 ms per KB before the depth guard; now a skip ("nesting too deep") after one scan;
- `errors`: --kb KB of lines each 100 brackets deep with one stray `]` (depth within Python's limit,
  so parso reads it): bounded by the per-file CPU deadline (facts.ANALYSIS_SECONDS), after which it
  is a skip;
- with --unguarded, `deep` again through parso directly (no guard: expect minutes and gigabytes
  past a few hundred KB).
Targets: `deep` within 3x the floor's time and 2x its memory; `errors` within the deadline plus
5 s and under 1 GB.

Folder (--files N, the real CLI, cold, empty cache): N one-line modules in one folder against the
same N in N/100 folders of 100. Before the fix the single folder took 4x (8,000 files). Target: the
ratio under 1.5.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_mb, fmt_s, run_measured, table, verdict, write_results

_MEASURE = """
import json, resource, sys, time
from repodoc_lsp.store import facts
data = open(sys.argv[1], "rb").read()
started, cpu = time.perf_counter(), time.process_time()
if sys.argv[2] == "parso":
    from repodoc_lsp.analysis.model import FileFacts, Language
    from repodoc_lsp.analysis.recovery import from_parso
    from_parso(data.decode(), FileFacts(Language.PYTHON, 0))
    reason = ""
else:
    reason = facts.analyse_bytes("m.py", data).skip_reason
print(json.dumps({"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "reason": reason}))
"""


def _sources(kb: int) -> dict[str, str]:
    size = kb * 1024
    plain = "".join(f"def f{i}(x):\n    '''Doc {i}.'''\n    return [x, ({i}, {{'k': x}})]\n" for i in range(size // 50))
    error_line = "x = " + "[" * 100 + "]" * 100 + " ]\n"
    return {"floor": plain[:size], "deep": "x = " + "[" * (size - 5) + "\n",
            "errors": error_line * (size // len(error_line))}


def _analyse(path: Path, how: str, timeout: float) -> dict:
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(path), how], capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode:
        return {"seconds": float("nan"), "cpu": float("nan"), "peak": 0, "reason": done.stderr.strip()[-200:]}
    return json.loads(done.stdout)


def analysis(kb: int, runs: int, unguarded: bool) -> dict:
    from repodoc_lsp.store.facts import ANALYSIS_SECONDS

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="repodoc-limits-") as tmp:
        for name, text in _sources(kb).items():
            path = Path(tmp) / f"{name}.py"
            path.write_text(text)
            cases = [(name, "guarded")]
            if unguarded and name == "deep":
                cases.append((name + " (parso, no guard)", "parso"))
            for label, how in cases:
                best: dict | None = None
                for _ in range(runs):
                    got = _analyse(path, how, timeout=ANALYSIS_SECONDS * 4 + 600)
                    best = got if best is None or got["seconds"] < best["seconds"] else best
                assert best is not None
                results[label] = best
    floor = results["floor"]
    rows = [[label, fmt_s(r["seconds"]), fmt_s(r["cpu"]), fmt_mb(r["peak"]), r["reason"] or "analysed"]
            for label, r in results.items()]
    print(table(rows, ["case", "time", "CPU", "peak RSS", "outcome"]))
    deep = results["deep"]
    deep_ok = deep["seconds"] <= 3 * max(floor["seconds"], 0.05) and deep["peak"] <= 2 * floor["peak"]
    errors_ok = results["errors"]["cpu"] <= ANALYSIS_SECONDS + 5 and results["errors"]["peak"] < 1e9
    print(f"deep within 3x the floor's time and 2x its memory: {verdict(deep_ok)}; "
          f"errors within the deadline ({ANALYSIS_SECONDS:g} s of CPU) + 5 s and under 1 GB: {verdict(errors_ok)}")
    return {"kb": kb, "cases": results, "deep_ok": deep_ok, "errors_ok": errors_ok}


def _tree(root: Path, files: int, per_folder: int | None) -> None:
    for i in range(files):
        folder = root / "pkg" / (f"sub{i // per_folder:03}" if per_folder else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod_{i:05}.py").write_text(f'"""Module {i}."""\nX = {i}\n')


def folder(files: int, runs: int) -> dict:
    out: dict[str, float] = {}
    for label, per_folder in (("folders of 100", 100), ("one folder", None)):
        best = float("inf")
        for _ in range(runs):
            with tempfile.TemporaryDirectory(prefix="repodoc-folder-") as tmp:
                root = Path(tmp) / "ws"
                _tree(root, files, per_folder)
                env = {**os.environ, "REPODOC_CACHE_DIR": str(Path(tmp) / "cache")}
                started = time.perf_counter()
                done = run_measured([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "-q"], env=env,
                                    timeout=3600)
                if done.proc.returncode:
                    raise RuntimeError(done.proc.stderr[-2000:])
                best = min(best, time.perf_counter() - started)
                index = root / "docs" / "pkg" / "index.md"
                out[f"{label} index bytes"] = index.stat().st_size
        out[label] = best
    ratio = out["one folder"] / out["folders of 100"]
    print(table([[k, fmt_s(v) if "bytes" not in k else f"{int(v):,}"] for k, v in out.items()], ["case", "value"]))
    print(f"one folder / folders of 100: {ratio:.2f}x (target under 1.5x): {verdict(ratio < 1.5)}")
    return {"files": files, **out, "ratio": ratio}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=300)
    parser.add_argument("--files", type=int, default=8000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--no-folder", action="store_true")
    parser.add_argument("--unguarded", action="store_true")
    args = parser.parse_args()
    data = {"analysis": analysis(args.kb, args.runs, args.unguarded)}
    if not args.no_folder:
        data["folder"] = folder(args.files, args.runs)
    print(write_results("limits", data))


if __name__ == "__main__":
    main()
