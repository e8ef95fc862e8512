"""A checkout that creates many files at once, as the server's regeneration sees it.

`python bench/bench_burst.py [--files 3000] [--new 1500]`: a synthetic workspace of FILES
Python files importing each other, its tree generated; then NEW files are created and their
pages written as one batch (`generate.regenerate`, what the regeneration process does with
one didChangeWatchedFiles), against a full `repodoc generate` of the final tree (a warm cache
for the old files, as in the editor). Goal (issue 14): the batch takes no longer.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _module(i: int, files: int) -> str:
    imports = "".join(f"from pkg{j // 50}.mod{j} import func_{j}_0\n" for j in (i // 2, (i * 7) % files) if j != i)
    body = "".join(f"def func_{i}_{k}(x):\n    '''Doc {k}.'''\n    return x\n\n\n" for k in range(10))
    return f'"""Module {i}."""\n{imports}\n\n{body}class Thing{i}:\n    def method(self):\n        pass\n'


def _write(root: Path, numbers: range, files: int) -> list[str]:
    rels = []
    for i in numbers:
        rel = f"pkg{i // 50}/mod{i}.py"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_module(i, files))
        rels.append(rel)
    return rels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--new", type=int, default=1500)
    args = parser.parse_args()
    from repodoc_lsp.config import load_settings
    from repodoc_lsp.generate import generate, regenerate
    from repodoc_lsp.render import Renderer
    from repodoc_lsp.workspace import Workspace
    from repodoc_lsp.writer import Writer

    scratch = Path(tempfile.mkdtemp(prefix="repodoc-burst-"))
    os.environ["REPODOC_CACHE_DIR"] = str(scratch / "cache")
    try:
        root = scratch / "ws"
        old = args.files - args.new
        _write(root, range(old), args.files)
        settings, _ = load_settings(root, {})
        ws = Workspace(root, settings)
        generate(root, ws)
        new = _write(root, range(old, args.files), args.files)
        started = time.perf_counter()
        summary = regenerate(ws, new, Writer(ws.out), Renderer(None))
        batch = time.perf_counter() - started
        shutil.rmtree(root / "docs")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        full = time.perf_counter() - started
        print(f"{args.new} new files in a {args.files}-file workspace: batch {batch:.2f} s "
              f"({len(summary.written)} pages written), full generate of the final tree {full:.2f} s "
              f"(cold pages, warm cache): {batch / full:.2f}x")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
