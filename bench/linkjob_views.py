"""One link job (`repodoc graph --link K/L --pages M`) in this process, of the repodoc on PYTHONPATH: the CPU of
`write_links` (no interpreter start), the files it links and their folders, and how many other files' views its
linking made (bench/README.md, issue 40: link shares of whole folders against the analysis split's).

    PYTHONPATH=SRC python bench/linkjob_views.py ROOT --out DOCS --link 1/32 --pages 2 --output DIR FACTS...

Not a test.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("facts", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--link", required=True, help="K/L")
    parser.add_argument("--pages", type=int, default=2)
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args(argv)
    from repodoc_lsp.config import Settings
    from repodoc_lsp.knowledge import held
    from repodoc_lsp.pipeline.runtime import enter_cli
    from repodoc_lsp.shard import graph_job
    from repodoc_lsp.store.workspace import Workspace

    made: set[str] = set()
    real_get = held.HeldViews.__getitem__

    def counted(self: held.HeldViews, rel: str) -> Any:
        before = self.made
        view = real_get(self, rel)
        if self.made != before:
            made.add(rel)
        return view
    held.HeldViews.__getitem__ = counted  # type: ignore[method-assign]
    linked: list[set[str]] = []
    real_graph_of = graph_job.graph_of

    def noted(*a: Any, **kw: Any) -> Any:
        linked.append(set(kw["only"]))
        return real_graph_of(*a, **kw)
    graph_job.graph_of = noted  # type: ignore[assignment]
    k, n = map(int, args.link.split("/"))
    ws = Workspace(args.root, Settings(output=args.out), use_cache=False, runtime=enter_cli(), incremental=False)
    start = time.process_time()
    summary = graph_job.write_links(ws, args.facts, (k, n), args.pages, args.output)
    cpu = time.process_time() - start
    mine = linked[-1]
    folders = {rel.rsplit("/", 1)[0] if "/" in rel else "" for rel in mine}
    print(f"{k}/{n}: cpu {cpu:.2f} s, linked {summary.files}, mine {len(mine)} in {len(folders)} folders, views of "
          f"{len(made)} files, of others {len(made - mine)}, maxrss "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
