"""A fixed set of PyTorch's files analysed in one process, for counting instructions (issues 14/15).

    valgrind --tool=cachegrind --cache-sim=no python bench/analysis_count.py full|parse [--stride 38] [--root DIR]

Every `stride`-th file of PyTorch's tree (sorted paths; 38: 61 files), or of the `.py` files under
`--root` (a package of the scale corpus: `~/.cache/repodoc-bench/scale-1/ws/transformers`), after three
others analysed first (imports, regexes and cattrs' generated code: once per worker). `full`: `analyse_chunk` with
cache rows, as an analysis worker of `repodoc generate` runs it (cycle collector as the CLI sets it);
`parse`: each file read, decoded and `ast.parse`d, its tree freed. `full` minus `parse` is the
analysis beyond the floor's own work.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import ensure_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=("full", "parse"))
    parser.add_argument("--stride", type=int, default=38)
    parser.add_argument("--root", help="the .py files under this folder instead of PyTorch's tree")
    args = parser.parse_args()
    from repodoc_lsp.pipeline.runtime import collect_less

    collect_less()  # as the CLI, whose analysis workers inherit it
    from repodoc_lsp.analysis.model import Language
    from repodoc_lsp.analysis.source import decode
    from repodoc_lsp.store.facts import analyse_chunk
    from repodoc_lsp.store.regular import read_regular

    root = args.root or str(ensure_corpus())
    rels = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                  if not args.root or f.endswith(".py"))
    warnings.simplefilter("ignore")
    analyse_chunk(root, rels[1 :: args.stride][:3])
    chosen = rels[:: args.stride]
    if args.mode == "full":
        analyse_chunk(root, chosen)
    else:
        for rel in chosen:
            text = decode(read_regular(os.path.join(root, rel)), Language.PYTHON).text
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            del tree
    print(args.mode, len(chosen))


if __name__ == "__main__":
    main()
