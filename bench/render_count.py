"""The render workers' work of a cold `repodoc generate` in one process, for timing and counting
instructions (issue 14): the parts a run sends to its render workers, rendered and written here.

    python bench/render_count.py prep WS OUT CACHE PKL     # the parts of a cold run of WS, pickled
    python bench/render_count.py render PKL DEST [STRIDE]  # every STRIDE-th part rendered into DEST
    python bench/render_count.py load PKL DEST [STRIDE]    # the same, but nothing rendered

`prep` runs `repodoc generate WS --out OUT --cache-dir CACHE --jobs 2` (OUT: a folder that does
not exist, so that every page is rendered) with the render workers left out: the parts it would
send them (`rendering.Parts`) and their set-up are pickled to PKL, nothing is written. `render` starts a
render worker in this process (`rendering.WORKER.start`, repodoc's own templates compiled before, as the
fork server does) and gives it every STRIDE-th part (default 1: all), unpickled here as a worker
unpickles what it is sent, the pages written into DEST
(emptied first); under `valgrind --tool=cachegrind --cache-sim=no`, `render` minus `load` is the
rendering and writing. Run with PYTHONHASHSEED=0 for repeatable counts; PYTHONPATH=TREE to measure
another tree's code.
"""

from __future__ import annotations

import dataclasses
import pickle
import shutil
import sys
from pathlib import Path
from typing import Any


def prep(ws: str, out: str, cache: str, dump: str) -> None:
    from repodoc_lsp import cli
    from repodoc_lsp.pipeline import rendering
    from repodoc_lsp.pipeline.runtime import Runtime

    def capture(fn: Any, chunks: Any, *, initializer: Any, **_kw: Any) -> Any:
        setup = dataclasses.replace(initializer.args[0], setup=None)
        with open(dump, "wb") as f:
            # each part pickled apart, as it is sent to a render worker (which unpickles it)
            parts = [pickle.dumps(chunks[i], pickle.HIGHEST_PROTOCOL) for i in range(len(chunks))]
            pickle.dump((setup, parts), f, pickle.HIGHEST_PROTOCOL)
        print(f"{len(chunks)} parts pickled to {dump}", file=sys.stderr)
        return iter(())

    rendering.run_chunks = capture  # type: ignore[assignment]
    Runtime.render_context = lambda self, built_in=False, compiled_in="": None  # type: ignore[assignment,method-assign,misc]
    cli.main(["generate", ws, "--out", out, "--cache-dir", cache, "--jobs", "2", "--quiet"])


def main() -> None:
    mode = sys.argv[1]
    if mode == "prep":
        prep(*sys.argv[2:6])
        return
    dump, dest = sys.argv[2], Path(sys.argv[3])
    stride = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    import repodoc_lsp.render.precompiled  # noqa: F401  as the render workers' fork server
    from repodoc_lsp.pipeline.rendering import WORKER
    from repodoc_lsp.pipeline.runtime import collect_less

    with open(dump, "rb") as f:
        setup, parts = pickle.load(f)
    shutil.rmtree(dest, ignore_errors=True)
    WORKER.start(dataclasses.replace(setup, out=str(dest), setup=collect_less))
    if mode == "render":
        pages = 0
        for part in parts[::stride]:
            pages += len(WORKER.render_part(pickle.loads(part)))
        print(f"{pages} pages of {len(parts[::stride])} parts written to {dest}", file=sys.stderr)


if __name__ == "__main__":
    main()
