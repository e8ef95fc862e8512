"""The render workers' work of a cold `repodoc generate` in one process, for timing and counting
instructions (issue 14): the parts a run sends to its render workers, rendered and written here.

    python bench/render_count.py prep WS OUT CACHE PKL     # the parts of a cold run of WS, pickled
    python bench/render_count.py render PKL DEST [STRIDE [SMALL]]  # every STRIDE-th part rendered into DEST
    python bench/render_count.py load PKL DEST [STRIDE [SMALL]]    # the same, but nothing rendered

`prep` runs `repodoc generate WS --out OUT --cache-dir CACHE --jobs 2` (OUT: a folder that does
not exist, so that every page is rendered) with the render workers left out: the parts it would
send them (`rendering.Parts`) and their set-up are pickled to PKL, nothing is written. `render` starts a
render worker in this process (`rendering.WORKER.start`, repodoc's own templates compiled before, as the
fork server does) and gives it every STRIDE-th part (default 1: all), unpickled here as a worker
unpickles what it is sent, the pages written into DEST (emptied first). SMALL (lines; default 0: every
page): only the small pages of those parts (what a page costs whatever its content), each part sent with the
facts they read only: the `_kw.md` and `_docs.md` of files of at most SMALL lines, the `index.md` and `doc.md`
of folders of at most `SMALL_FILES` files each that small. Under `valgrind --tool=cachegrind --cache-sim=no`,
`render` minus `load` is the rendering and writing. Run with PYTHONHASHSEED=0 for repeatable counts;
PYTHONPATH=TREE to measure another tree's code.
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


SMALL_FILES = 4  # a small folder's files at most (SMALL)


def small_only(part: Any, lines: int) -> Any:
    """`part` (a `rendering.Part`) with only its small pages and the facts their views read (SMALL in the
    docstring)."""
    from repodoc_lsp.render.pages import view_files

    pages, packed = part
    facts = {rel: pickle.loads(data) for rel, data in packed.items()}

    def small(page: Any, inputs: dict) -> bool:
        if page.kind in ("kw", "docs"):
            return facts[page.subject].lines <= lines
        files = [rel for rel, _digest in inputs.get("files", ())]
        return page.kind in ("index", "doc") and len(files) <= SMALL_FILES and \
            all(rel in facts and facts[rel].lines <= lines for rel in files)

    kept = [item for item in pages if small(item[0], item[1])]
    read = {rel for page, inputs, _known in kept for rel in view_files(page.kind, page.subject, inputs)}
    return kept, {rel: data for rel, data in packed.items() if rel in read}


def main() -> None:
    mode = sys.argv[1]
    if mode == "prep":
        prep(*sys.argv[2:6])
        return
    dump, dest = sys.argv[2], Path(sys.argv[3])
    stride = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    lines = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    import repodoc_lsp.render.precompiled  # noqa: F401  as the render workers' fork server
    from repodoc_lsp.pipeline.rendering import WORKER
    from repodoc_lsp.pipeline.runtime import collect_less

    with open(dump, "rb") as f:
        setup, parts = pickle.load(f)
    if lines:  # each part pickled again with its small pages only, before the count starts
        parts = [pickle.dumps(small_only(pickle.loads(part), lines), pickle.HIGHEST_PROTOCOL) for part in parts]
    shutil.rmtree(dest, ignore_errors=True)
    WORKER.start(dataclasses.replace(setup, out=str(dest), setup=collect_less))
    if mode == "render":
        pages = 0
        for part in parts[::stride]:
            pages += len(WORKER.render_part(pickle.loads(part)))
        print(f"{pages} pages of {len(parts[::stride])} parts written to {dest}", file=sys.stderr)


if __name__ == "__main__":
    main()
