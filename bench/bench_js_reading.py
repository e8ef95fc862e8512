"""JavaScript definitions against a second independent reading: acorn's syntax tree (issue 38).

    python bench/languages_corpus.py            # once: the corpora and acorn (`npm pack`)
    python bench/bench_js_reading.py [--root ~/.cache/repodoc-bench/langs] [--show N]

ctags 5.9's JavaScript parser has bugs that zod's compiled `lib/*.js` meets (bench/README.md: an arrow
function assigned to a property is not tagged; the class is lost after a method named `default(` or
`catch(`), so repodoc's precision against it says more about ctags than about repodoc. Here the same
files are read by acorn, a JavaScript parser written in JavaScript (node runs
bench/js_definitions.mjs, whose header says what counts as a definition), and repodoc's definitions
(`analyse_source`) are matched against that reading as bench_languages.py matches them against
ctags' (same name, on the line or up to 3 lines above). Reported per corpus: recall and precision
against acorn, the same against ctags, and what acorn says of each disagreement with ctags (how many
of repodoc's definitions ctags lacks acorn has, how many of ctags' tags repodoc lacks acorn has).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_languages import analyse, corpora, ctags_tags

SCRIPT = Path(__file__).resolve().with_name("js_definitions.mjs")
Defs = dict[str, set[tuple[str, int]]]


def acorn_defs(acorn: Path, files: list[Path]) -> Defs:
    proc = subprocess.run(["node", str(SCRIPT), str(acorn), *map(str, files)], capture_output=True, text=True,
                          check=True)
    found: Defs = {}
    for row in map(json.loads, proc.stdout.splitlines()):
        if row["error"]:
            print(f"acorn: {row['path']}: {row['error']}", file=sys.stderr)
        found[row["path"]] = {(name, line) for name, line, _kind in row["defs"]}
    return found


def match(reference: Defs, ours: Defs) -> tuple[set[tuple[str, str, int]], set[tuple[str, str, int]]]:
    """(reference entries none of ours matches, our entries matching no reference entry): a reference
    entry matches the closest unused definition of its name on its line or up to 3 lines above."""
    missed, extra = set(), set()
    for path in set(reference) | set(ours):
        by_name: dict[str, list[int]] = defaultdict(list)
        for name, line in ours.get(path, ()):
            by_name[name].append(line)
        used: set[tuple[str, int]] = set()
        for name, line in sorted(reference.get(path, ()), key=lambda entry: entry[1]):
            hit = max((ln for ln in by_name.get(name, ()) if line - 3 <= ln <= line and (name, ln) not in used),
                      default=None)
            if hit is None:
                missed.add((path, name, line))
            else:
                used.add((name, hit))
        extra |= {(path, name, line) for name, line in ours.get(path, ()) if (name, line) not in used}
    return missed, extra


def measure(name: str, files: list[Path], acorn: Path, show: int) -> dict[str, object]:
    analysed, _size, _cpu = analyse(files)
    ours: Defs = {path: {(n, line) for n, line, _doc, _word in defs} for path, defs in analysed.items()}
    reading = acorn_defs(acorn, files)
    tags, _language = ctags_tags(files)
    ctags: Defs = {path: {(n, line) for n, line, _kind in rows} for path, rows in tags.items()}
    total_ours, total_acorn = sum(map(len, ours.values())), sum(map(len, reading.values()))
    missed, extra = match(reading, ours)
    ctags_missed, ctags_extra = match(ctags, ours)
    # repodoc's definitions ctags lacks, read again by acorn: in acorn's reading (ctags is wrong) or not
    _, extra_in_acorn = match(reading, {p: {(n, ln) for q, n, ln in ctags_extra if q == p} for p in ours})
    # ctags' tags repodoc lacks: in acorn's reading (repodoc is wrong) or not
    _, missed_in_acorn = match(reading, {p: {(n, ln) for q, n, ln in ctags_missed if q == p} for p in ctags})
    if show:
        for title, rows in (("in acorn's reading, not repodoc's", missed),
                            ("repodoc's, not in acorn's reading", extra)):
            print(f"# {title}: {len(rows)}", file=sys.stderr)
            for path, n, line in random.Random(0).sample(sorted(rows), min(show, len(rows))):
                print(f"    {path}:{line}: {n}", file=sys.stderr)
    return {"corpus": name, "files": len(files), "repodoc defs": total_ours, "acorn defs": total_acorn,
            "recall vs acorn": round(1 - len(missed) / max(total_acorn, 1), 3),
            "precision vs acorn": round(1 - len(extra) / max(total_ours, 1), 3),
            "precision vs ctags": round(1 - len(ctags_extra) / max(total_ours, 1), 3),
            "repodoc defs not in ctags": len(ctags_extra),
            "...of which acorn has": len(ctags_extra) - len(extra_in_acorn),
            "ctags tags not in repodoc": len(ctags_missed),
            "...of these, acorn has": len(ctags_missed) - len(missed_in_acorn)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(os.path.expanduser("~/.cache/repodoc-bench/langs")))
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print N disagreements with acorn")
    args = parser.parse_args()
    acorn = args.root / "acorn/package/dist/acorn.mjs"
    if not acorn.exists():
        print(f"no {acorn}: run bench/languages_corpus.py", file=sys.stderr)
        return 1
    for name, files in corpora(args.root).items():
        if name.startswith("JavaScript"):
            print(json.dumps(measure(name, files, acorn, args.show)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
