"""Every docstring of a tree as the pages convert it: outputs recorded, compared, and the conversion timed.

    python bench/docstring_outputs.py collect ROOT DOCS      # every docstring under ROOT, pickled to DOCS
    python bench/docstring_outputs.py record DOCS OUT        # this tree's conversions of them, pickled to OUT
    python bench/docstring_outputs.py compare DOCS OUT       # this tree's conversions against OUT's (exit 1)
    python bench/docstring_outputs.py time DOCS [--runs N] [--only NAME]   # CPU of converting them all

`collect` reads every module, class and function docstring with `ast`, as the analysis keeps it
(`inspect.cleandoc` of the string), distinct texts in the order first found, each with whether a class
holds it; a tenth of them also as written in the source (not cleaned: `clean`'s own path). `record` and
`compare` take every function the pages call on a docstring (`docstring_markdown`, `summary_line`,
`docstring_rest`, and `docstring_attributes` of class docstrings). `time` converts them all in this
process, the caches emptied first, and prints the process CPU of each run (`--only`: one function).
Run with PYTHONPATH=TREE to record or time another tree's code.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import pickle
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Docs = list[tuple[str, bool]]  # (docstring, whether a class's)


def collect(root: Path) -> Docs:
    seen: dict[str, bool] = {}
    raw: dict[str, bool] = {}
    for n, path in enumerate(sorted(root.rglob("*.py"))):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            body = node.body
            if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                continue
            value = body[0].value.value
            is_class = isinstance(node, ast.ClassDef)
            doc = inspect.cleandoc(value)
            seen[doc] = seen.get(doc, False) or is_class
            if n % 10 == 0 and value != doc:
                raw[value] = raw.get(value, False) or is_class
    return [*seen.items(), *((d, c) for d, c in raw.items() if d not in seen)]


def functions() -> dict[str, Callable[[str], Any]]:
    from repodoc_lsp.render import docstrings as d

    return {"docstring_markdown": d.docstring_markdown, "summary_line": d.summary_line,
            "docstring_rest": d.docstring_rest, "docstring_attributes": d.docstring_attributes}


def convert(docs: Docs, only: str | None = None) -> list[tuple[Any, ...]]:
    fns = functions()
    if only:
        return [(fns[only](doc),) for doc, _ in docs]
    md, summary, rest, attrs = fns.values()
    return [(md(doc), summary(doc), rest(doc), attrs(doc) if is_class else None) for doc, is_class in docs]


def clear_caches() -> None:
    from repodoc_lsp.render import docstrings as d

    for fn in (d.docstring_markdown, d.docstring_attributes, d._summary):
        fn.cache_clear()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("collect", "record", "compare", "time"))
    parser.add_argument("source")
    parser.add_argument("dest", nargs="?")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default=None)
    args = parser.parse_args()
    if args.command == "collect":
        docs = collect(Path(args.source))
        Path(args.dest).write_bytes(pickle.dumps(docs, pickle.HIGHEST_PROTOCOL))
        print(f"{len(docs):,} docstrings ({sum(c for _, c in docs):,} of classes)")
        return 0
    docs: Docs = pickle.loads(Path(args.source).read_bytes())
    if args.command == "time":
        convert(docs[:50])  # imports (griffe) and first calls out of the timed runs
        for _ in range(args.runs):
            clear_caches()
            started = time.process_time()
            convert(docs, args.only)
            print(f"{len(docs):,} docstrings: {time.process_time() - started:.3f} s CPU", flush=True)
        return 0
    outputs = convert(docs)
    if args.command == "record":
        Path(args.dest).write_bytes(pickle.dumps(outputs, pickle.HIGHEST_PROTOCOL))
        print(f"{len(outputs):,} outputs recorded")
        return 0
    expected = pickle.loads(Path(args.dest).read_bytes())
    differ = [i for i, (a, b) in enumerate(zip(outputs, expected, strict=True)) if a != b]
    for i in differ[:5]:
        print(f"--- docstring {i}:\n{docs[i][0][:800]}\n--- expected:\n{expected[i]}\n--- got:\n{outputs[i]}\n")
    print(f"{len(docs):,} docstrings, {len(differ):,} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
