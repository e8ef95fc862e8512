"""Run in a child process: `repodoc generate` split in its two phases, with repodoc's own API.

    python bench/_phases.py ROOT OUT [JOBS [analyse]]   (REPODOC_CACHE_DIR chooses the cache)

Prints one JSON line: {"analyse": s, "write": s, "total": s, "files": n, "analysed": n, "cached": n}.
`analyse` is `Workspace.scan` (discovery, digests, cache look-up, parse every file, relations),
`write` is planning, rendering and writing every page (skipped with `analyse`). It mirrors what `repodoc generate`
does (same settings, same process model: no extra thread, so the workers fork).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> int:
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    jobs = int(sys.argv[3]) if len(sys.argv) > 3 and int(sys.argv[3]) > 0 else None
    started = time.perf_counter()
    from repodoc_lsp.config import load_settings
    from repodoc_lsp.pipeline.generate import generate
    from repodoc_lsp.pipeline.runtime import enter_cli
    from repodoc_lsp.store.workspace import Workspace

    runtime = enter_cli()  # as the CLI does
    settings, _ = load_settings(root, {"output": str(out.resolve()), "jobs": jobs}, strict=True)
    ws = Workspace(root, settings, runtime=runtime, incremental=False)  # as the CLI's
    imported = time.perf_counter()
    ws.scan(jobs=jobs)
    scanned = time.perf_counter()
    analyse_only = len(sys.argv) > 4 and sys.argv[4] == "analyse"
    summary = None if analyse_only else generate(root, ws, jobs=jobs, rescan=False)
    done = time.perf_counter()
    print(
        json.dumps(
            {
                "startup": imported - started,
                "analyse": scanned - imported,
                "write": done - scanned,
                "total": done - started,
                "files": len(ws.facts),
                "analysed": ws.analysed,
                "cached": ws.cached,
                "written": len(summary.written) if summary else 0,
                "unchanged": summary.unchanged if summary else 0,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
