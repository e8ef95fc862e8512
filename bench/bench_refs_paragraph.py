"""The reference checker on one huge paragraph: time grows with its size, not its square.

    python bench/bench_refs_paragraph.py [--spans 20000] [--runs 3]

A Markdown file of one paragraph holding N code spans, then 2N (and the same in reST), read the
way `repodoc check` reads a doc (`refs.check.doc_refs`: the references with their positions);
kinds of span: on one line, across a line break (markdown-it turns the break into a space, so the
span's text is not the source's) and links. Prints seconds for N and 2N and their ratio: about 2
for linear work, 4 for quadratic (issue 33: 80,000 spans took 11 s, 4x per doubling). Needs only
the package (no corpus).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from repodoc_lsp.refs.check import doc_refs

KINDS: dict[str, Callable[[int], str]] = {
    "one line": lambda i: f"see `pkg.mod.Name{i}` and ",
    "across lines": lambda i: f"see `pkg.mod.\nName{i}` and ",
    "links": lambda i: f"[x](docs/page{i}.md) ",
}


def _paragraph(kind: str, n: int) -> str:
    return "".join(KINDS[kind](i) for i in range(n)) + "end.\n"


def _seconds(rel: str, text: str, runs: int) -> tuple[float, int]:
    times, found = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        found = len(doc_refs(rel, text))
        times.append(time.perf_counter() - start)
    return statistics.median(times), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spans", type=int, default=20_000, help="N (default 20,000)")
    parser.add_argument("--runs", type=int, default=3, help="median of this many runs (default 3)")
    args = parser.parse_args()
    print(f"{'file':<6} {'kind':<13} {'N':>8} {'s (N)':>8} {'2N':>8} {'s (2N)':>8} {'ratio':>6}")
    for rel in ("a.md", "a.rst"):
        for kind in KINDS:
            if rel.endswith(".rst") and kind == "links":
                continue
            n = args.spans
            one, found = _seconds(rel, _paragraph(kind, n), args.runs)
            two, found2 = _seconds(rel, _paragraph(kind, 2 * n), args.runs)
            assert found2 >= found, (found, found2)
            print(f"{rel:<6} {kind:<13} {n:>8,} {one:>8.3f} {2 * n:>8,} {two:>8.3f} {two / one:>6.2f}")


if __name__ == "__main__":
    main()
