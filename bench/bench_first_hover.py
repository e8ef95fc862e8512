"""Is the first hover after indexing as fast as the next ones?

    python bench/bench_first_hover.py [--rounds 6] [--pythonpath CHECKOUT]

The workspace is a copy of repodoc-lsp's own package (about 70 files: no download). Each round
launches the server over stdio (pygls 2's LanguageClient, bench_lsp.py's client), opens
`repodoc_lsp/server/state.py`, waits for the end of indexing and then for the hover warm-up
(`repodoc.status` says `hoverReady`; a server without that command: the end of indexing), as a
person's first hover comes a moment after indexing ends. Then it hovers one of ten names of that file
(the session's first hover: a different name each round), then the other nine (the next hovers,
each a name not hovered yet in that session). Reported: the medians of the first and of the next
hovers, and their ratio (target: at most 2; before the warm-up it was 5-10x), and how long the
warm-up took after indexing. `--pythonpath` runs another checkout's server (say, main's) with the
same client, for a before/after pair in one run. Writes bench/results/first-hover-*.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as t

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, median, table, write_results
from bench_lsp import BenchClient, capabilities

FILE = "repodoc_lsp/server/state.py"
# names used in FILE's code (not its import lines): each hover makes jedi follow a different import
NAMES = ["Workspace(", "KeywordIndex()", "threading.Event", "Path", "Renderer(", "time.perf_counter",
         "entries_of(", "os.walk", "Future", "Worker("]
READY_SECONDS = 120.0


def _points(text: str) -> list[tuple[str, int, int]]:
    lines = text.split("\n")
    found = []
    for name in NAMES:
        for i, line in enumerate(lines):
            j = line.find(name)
            if j >= 0 and not line.lstrip().startswith(("from ", "import ", "#")):
                found.append((name, i, j + 1))
                break
    return found


async def _status(client: BenchClient) -> dict[str, Any] | None:
    try:
        answer = await client.workspace_execute_command_async(t.ExecuteCommandParams(command="repodoc.status"))
    except Exception:  # a server without repodoc.status
        return None
    roots = (answer or {}).get("roots") or [] if isinstance(answer, dict) else []
    return roots[0] if roots else {}


async def session(root: Path, cache: Path, first: int, pythonpath: str) -> dict[str, Any]:
    env = {**os.environ, "REPODOC_CACHE_DIR": str(cache)}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    client = BenchClient({})
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve", env=env, cwd=str(root.parent))
    try:
        await client.initialize_async(t.InitializeParams(
            capabilities=capabilities(), root_uri=root.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
        client.initialized(t.InitializedParams())
        path = root / FILE
        text = path.read_text()
        client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(
            uri=path.as_uri(), language_id="python", version=1, text=text)))
        deadline = time.perf_counter() + READY_SECONDS
        indexed = None
        while indexed is None and time.perf_counter() < deadline:
            tokens = {tok for tok, title in client.progress_titles.items() if "index" in title.lower()}
            ends = [at for at, tok, kind in client.progress_log if kind == "end" and tok in tokens]
            indexed = ends[0] if ends else None
            await asyncio.sleep(0.05)
        if indexed is None:
            raise RuntimeError("indexing did not end")
        warm = None
        while time.perf_counter() < deadline:
            status = await _status(client)
            if status is None or status.get("hoverReady"):
                warm = (time.perf_counter() - client.started - indexed) if status is not None else None
                break
            await asyncio.sleep(0.05)
        points = _points(text)
        order = points[first % len(points):] + points[:first % len(points)]
        seconds = []
        for name, line, col in order:
            started = time.perf_counter()
            result = await client.text_document_hover_async(t.HoverParams(
                text_document=t.TextDocumentIdentifier(uri=path.as_uri()),
                position=t.Position(line=line, character=col)))
            seconds.append(time.perf_counter() - started)
            if result is None:
                raise RuntimeError(f"no hover for {name}")
        await client.shutdown_async(None)
        client.exit(None)
        return {"first_name": order[0][0], "first": seconds[0], "next": seconds[1:], "warm_up": warm}
    finally:
        await client.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--pythonpath", default="", help="another checkout whose server to run (PYTHONPATH)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="repodoc-first-hover-") as tmp:
        root = Path(tmp) / "ws"
        shutil.copytree(REPO / "repodoc_lsp", root / "repodoc_lsp",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (root / "pyproject.toml").write_text('[project]\nname = "ws"\n')
        runs = [asyncio.run(session(root, Path(tmp) / "cache", i, args.pythonpath)) for i in range(args.rounds)]
    firsts = [r["first"] for r in runs]
    nexts = [s for r in runs for s in r["next"]]
    warm = [r["warm_up"] for r in runs if r["warm_up"] is not None]
    ratio = median(firsts) / median(nexts)
    print(table([[r["first_name"], f"{r['first']:.3f}", f"{median(r['next']):.3f}",
                  "-" if r["warm_up"] is None else f"{r['warm_up']:.2f}"] for r in runs],
                ["first hover", "first (s)", "next median (s)", "warm-up after indexing (s)"]))
    print(f"\nfirst-hover median {median(firsts):.3f} s, next-hover median {median(nexts):.3f} s: "
          f"ratio {ratio:.2f} (target <= 2)")
    path = write_results("first-hover", {"rounds": args.rounds, "pythonpath": args.pythonpath, "runs": runs,
                                         "first_median": median(firsts), "next_median": median(nexts),
                                         "ratio": ratio, "warm_up_median": median(warm) if warm else None})
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
