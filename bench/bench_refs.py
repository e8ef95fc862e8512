"""`repodoc check` on real documentation: PyTorch's docstrings against its cold generation, and projects' docs.

    python bench/bench_refs.py [--runs N] [--docs DIR ...] [--no-torch]

PyTorch (bench/corpus.py; the folder holding `torch/`, so modules are named `torch.x`): one cold
`repodoc generate` (empty cache, output in a temporary folder), then `repodoc check --no-pages`
with an empty cache (it analyses every file, as generation does) and again with the cache it
filled; medians of --runs. Each --docs DIR (an unpacked source distribution, say) is checked with
`repodoc check --no-pages` and every finding is printed, for reading. Nothing is written in the
corpus or the DIRs.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpus import ensure_corpus  # noqa: E402

SUMMARY = re.compile(r"repodoc: (\d+) references in (\d+) files checked.*?, (\d+) stale")


def timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "repodoc_lsp", *argv], capture_output=True, text=True,
                          timeout=1800)
    return time.perf_counter() - started, proc


def check(root: Path, cache: Path) -> tuple[float, int, int, int, list[str]]:
    seconds, proc = timed(["check", str(root), "--no-pages", "--cache-dir", str(cache)])
    if proc.returncode not in (0, 1):
        raise SystemExit(f"repodoc check {root} failed ({proc.returncode}): {proc.stderr}")
    m = SUMMARY.search(proc.stdout)
    if m is None:
        raise SystemExit(f"no summary from repodoc check {root}: {proc.stdout[-500:]}")
    refs, files, stale = map(int, m.groups())
    findings = [line for line in proc.stdout.splitlines() if not line.startswith("repodoc:")]
    return seconds, refs, files, stale, findings


def torch_figures(runs: int) -> None:
    root = ensure_corpus().parent
    gen, cold, warm = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="repodoc-refs-") as tmp:
            t = Path(tmp)
            seconds, proc = timed(["generate", str(root), "--out", str(t / "out"), "--cache-dir", str(t / "gen"),
                                   "--quiet"])
            if proc.returncode != 0:
                raise SystemExit(f"repodoc generate failed ({proc.returncode}): {proc.stderr}")
            gen.append(seconds)
            seconds, refs, files, stale, findings = check(root, t / "check")
            cold.append(seconds)
            warm.append(check(root, t / "check")[0])
    g, c, w = statistics.median(gen), statistics.median(cold), statistics.median(warm)
    print(f"PyTorch ({root}): {files} files, {refs} references, {stale} stale")
    print(f"cold repodoc generate: {g:.2f} s (median of {runs})")
    print(f"repodoc check --no-pages, empty cache: {c:.2f} s = {c / g:.2f}x cold generation (target <= 0.5x)")
    print(f"repodoc check --no-pages, warm cache: {w:.2f} s = {w / g:.2f}x cold generation")
    for line in findings:
        print(f"  {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--docs", nargs="*", default=[], type=Path)
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    for folder in args.docs:
        with tempfile.TemporaryDirectory(prefix="repodoc-refs-") as tmp:
            seconds, refs, files, stale, findings = check(folder, Path(tmp))
        print(f"{folder.name}: {files} files, {refs} references, {stale} stale, {seconds:.2f} s")
        for line in findings:
            print(f"  {line}")
    if not args.no_torch:
        torch_figures(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
