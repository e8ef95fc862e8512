"""Docstrings on PyTorch: how much of each reaches its Markdown, and whether the Markdown is sound.

    python bench/bench_docstrings.py [--renderer module:function] [--limit N]

Every module, class and function docstring of the corpus (bench/corpus.py), read with `ast`, is
rendered by `repodoc_lsp.render.docstrings.docstring_markdown` (or `--renderer`, to measure another
one) and compared with its source text, independently of the renderer's parse:

- completeness: the fraction of the docstring's words (`\\w+`, counted with multiplicity), lines and
  paragraphs whose words all appear in the Markdown; markup words (`param`, `class`, `note`,
  `optional`, section titles) and lines that are only a title or an underline are not counted;
- soundness: the Markdown read by markdown-it-py (CommonMark) as a section's body and as a list
  item's: no heading, no raw HTML, no block that runs past its end (tests/helpers.contained_errors);
- crashes: exceptions raised by the renderer (each one would have failed a page or a hover).

Prints one line per figure; CPU-bound (one process, about a minute on PyTorch).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "tests")]

from corpus import ensure_corpus  # noqa: E402
from helpers import contained_errors  # noqa: E402

WORD = re.compile(r"\w+")
MARKUP = {"param", "parameter", "arg", "argument", "key", "keyword", "type", "rtype", "returns", "return", "raises",
          "raise", "except", "exception", "yields", "yield", "ivar", "cvar", "var", "vartype", "class", "func", "meth",
          "attr", "mod", "obj", "data", "exc", "ref", "math", "doc", "py", "note", "warning", "seealso", "deprecated",
          "versionadded", "versionchanged", "code", "block", "optional", "Args", "Arguments", "Parameters", "Returns",
          "Yields", "Raises", "Example", "Examples", "Note", "Notes", "Warning", "Warnings", "Attributes", "See",
          "Also", "Keyword", "Other", "Methods", "Todo", "References", "testcode", "doctest", "python"}
TITLE = re.compile(r"^\s*(?:[A-Z][\w ]*:{1,2}|\.\. [\w:-]+::.*|([=\-~^\"'`#*+:.])\1{2,})\s*$")


def docstrings(root: Path, limit: int | None) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node, clean=True)
                if doc and doc.strip():
                    found.append(doc)
        if limit and len(found) >= limit:
            break
    return found[:limit] if limit else found


def words(text: str) -> list[str]:
    return [w for w in WORD.findall(text) if w not in MARKUP]


def reached(doc: str, out: str) -> tuple[int, int, int, int, int, int]:
    """(words, words reached, lines, lines reached, paragraphs, paragraphs reached)."""
    have = Counter(WORD.findall(out))
    need = Counter(words(doc))
    total = sum(need.values())
    hit = sum(min(n, have[w]) for w, n in need.items())
    lines = [set(words(line)) for line in doc.splitlines() if not TITLE.match(line) and words(line)]
    paras = [set(words(p)) for p in re.split(r"\n\s*\n", doc) if words(p)]
    return (total, hit, len(lines), sum(1 for w in lines if w <= have.keys()),
            len(paras), sum(1 for w in paras if w <= have.keys()))


def load(spec: str) -> Callable[[str], str]:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name or "docstring_markdown")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--renderer", default="repodoc_lsp.render.docstrings:docstring_markdown")
    parser.add_argument("--limit", type=int, default=None, help="only the first N docstrings (a quick check)")
    args = parser.parse_args()
    render = load(args.renderer)
    docs = docstrings(ensure_corpus(), args.limit)
    totals = [0] * 6
    crashes = broken = 0
    started = time.perf_counter()
    for doc in docs:
        try:
            out = render(doc)
        except Exception:
            crashes += 1
            out = ""
        broken += bool(contained_errors(out))
        totals = [a + b for a, b in zip(totals, reached(doc, out), strict=True)]
    seconds = time.perf_counter() - started
    print(f"renderer: {args.renderer}")
    print(f"docstrings: {len(docs):,} ({seconds:.1f} s with the checks)")
    print(f"words reached: {totals[1] / totals[0]:.4f} ({totals[0] - totals[1]:,} of {totals[0]:,} missing)")
    print(f"lines reached: {totals[3] / totals[2]:.4f} ({totals[2] - totals[3]:,} of {totals[2]:,} missing)")
    print(f"paragraphs reached: {totals[5] / totals[4]:.4f} ({totals[4] - totals[5]:,} of {totals[4]:,} missing)")
    print(f"unsound Markdown (heading, raw HTML or a block past its end): {broken:,}")
    print(f"renderer exceptions: {crashes:,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
