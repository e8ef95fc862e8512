"""Cold generation of a mixed-language corpus against a floor that reads and tree-sitter-parses the
same files in one process (issue 38: cold <= 1.5x that floor).

    python bench/bench_mixed_cold.py [--rounds 3] [--jobs 2]

The corpus is the languages benchmark's (bench/languages_corpus.py fetches it into
~/.cache/repodoc-bench/langs): torch's `torch/include` c10 and ATen/core headers, rxjs's TypeScript
sources, express and zod (JavaScript), cryptography's Rust and Debian's regex-syntax crate, Debian's
Go modules and OpenJDK 17's `java.util`, hard-linked into one temporary workspace. Each round runs
the floor (a fresh interpreter: every file of a tree-sitter language read and parsed by repodoc's own
parser, `analysis.treesitter.core.parse`) and a cold `repodoc generate` (empty cache, empty output
folder), alternating; wall seconds and CPU (user + system, children included), medians."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LANGS = Path(os.path.expanduser("~/.cache/repodoc-bench/langs"))
PARTS = {  # folder in the workspace -> where it comes from, under LANGS
    "cpp/c10": "torch-include/torch/include/c10",
    "cpp/ATen/core": "torch-include/torch/include/ATen/core",
    "ts/rxjs": "rxjs/package/src",
    "js/express": "express/package",
    "js/zod": "zod/package/lib",
    "rust/cryptography": "rust/cryptography-41.0.7/src/rust",
    "go": "debian/usr/share/gocode/src",
    "rust/regex-syntax": "debian/usr/share/cargo/registry",
    "java/util": "jdk17/java.base/java/util",
}

FLOOR = """
import sys, time
from pathlib import Path
from repodoc_lsp.analysis.treesitter import SUFFIXES, spec_for
from repodoc_lsp.analysis.treesitter.core import parse
files = n = 0
for path in sorted(Path(sys.argv[1]).rglob("*")):
    if path.is_file() and path.name.lower().endswith(SUFFIXES):
        data = path.read_bytes()
        parse(spec_for(path.name), data)
        files += 1
        n += len(data)
print(files, n)
"""


def _corpus(ws: Path) -> None:
    for target, source in PARTS.items():
        src = LANGS / source
        if not src.is_dir():
            raise SystemExit(f"missing {src}: run bench/languages_corpus.py first")
        shutil.copytree(src, ws / target, copy_function=os.link, symlinks=False)


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, done.stdout.strip() or done.stderr.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repodoc-bench-mixed-") as tmp:
        ws = Path(tmp) / "ws"
        _corpus(ws)
        env = {**os.environ}
        floors, colds = [], []
        for r in range(args.rounds):
            floors.append(_timed([sys.executable, "-c", FLOOR, str(ws)], env))
            out, cache = Path(tmp) / f"out{r}", Path(tmp) / f"cache{r}"
            colds.append(_timed([sys.executable, "-m", "repodoc_lsp", "generate", str(ws), "--out", str(out),
                                 "--cache-dir", str(cache), "--jobs", str(args.jobs)], env))
            print(f"round {r + 1}: floor {floors[-1][0]:.2f} s wall {floors[-1][1]:.2f} s CPU ({floors[-1][2]}); "
                  f"cold {colds[-1][0]:.2f} s wall {colds[-1][1]:.2f} s CPU; load {os.getloadavg()[0]:.1f}")
            print(f"  {colds[-1][2]}")
        fw, fc = statistics.median(f[0] for f in floors), statistics.median(f[1] for f in floors)
        cw, cc = statistics.median(c[0] for c in colds), statistics.median(c[1] for c in colds)
        print(f"median: floor {fw:.2f} s wall, {fc:.2f} s CPU; cold {cw:.2f} s wall, {cc:.2f} s CPU; "
              f"cold / floor {cw / fw:.2f}x wall (target <= 1.5x), {cc / fc:.2f}x CPU")


if __name__ == "__main__":
    main()
