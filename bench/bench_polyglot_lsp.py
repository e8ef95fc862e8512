"""Hover and workspace/symbol on PyTorch's Python sources and its C++ headers together (issue 38).

    python bench/bench_polyglot_lsp.py [--passes 6] [--pythonpath CHECKOUT]

The workspace is a temporary folder `ws/` holding `torch/`: the torch 2.13.0 wheel's Python sources
(bench/corpus.py) and its `torch/include` headers (bench/languages_corpus.py, 9,431 files, 62 MB),
hard links of the cached copies. The server is launched over stdio (bench_lsp.py's client) with an
empty analysis cache; once its indexing has ended and its hover warm-up is done (`repodoc.status`),
the measured requests go in passes, each followed by a floor request:

- hover on C++ header names: in each of `HEADERS` (sizes from 10 KB to the 2.2 MB
  `RedispatchFunctions.h`), its first class, struct or function definition, and the first use of a
  name another header defines (`USED`): answered from the index's facts (the first) or its keyword
  index (the second);
- hover on Python names: bench_lsp.py's 20 positions (a definition and a call in each of 10 files);
- workspace/symbol: bench_lsp.py's 20 queries and 10 C++ names and parts of names.

Every file is opened (didOpen) before the first pass. The first pass (jedi's first inference of each
position) is reported apart; p95 (nearest rank) is taken over the other passes. The floor is a hover
on a `.txt` document the server answers nothing for without reading it (the protocol's round trip
and the server's dispatch: the `ping` of other benches), sent after every measured request, so it
sees the same load. Targets: hover p95 < 30 ms, workspace/symbol p95 < 30 ms. `--pythonpath` runs
another checkout's server (say, main's) for a before/after pair. Writes bench/results/polyglot-lsp-*.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as t

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt_s, median, p95, table, verdict, write_results
from bench_lsp import QUERIES, BenchClient, capabilities, hover_points
from corpus import ensure_corpus

LANGS = Path(os.path.expanduser("~/.cache/repodoc-bench/langs"))
HEADERS = [
    "ATen/core/TensorBody.h",
    "c10/core/TensorImpl.h",
    "ATen/RedispatchFunctions.h",
    "ATen/VmapGeneratedPlumbing.h",
    "c10/core/ScalarType.h",
    "c10/util/intrusive_ptr.h",
    "ATen/core/ivalue.h",
    "torch/csrc/autograd/variable.h",
    "c10/core/DispatchKeySet.h",
    "ATen/TensorIterator.h",
]
# names defined in one header and used in many: the first use in a header that does not define it
USED = ["IntArrayRef", "TensorOptions", "ScalarType", "DispatchKeySet", "intrusive_ptr", "TensorImpl",
        "SymInt", "Storage", "Layout", "MemoryFormat"]
CPP_QUERIES = ["TensorImpl", "IntArrayRef", "DispatchKeySet", "intrusive_ptr", "TensorIterator",
               "ScalarType", "redispatch", "Dispatch", "SymIntArr", "TORCH_CHECK"]
_DEFINITION = re.compile(r"^\s*(?:template\s*<.*>\s*)?(?:class|struct)\s+(?:[A-Z0-9_]+_API\s+)?([A-Za-z_]\w*)\s*[:{]"
                         r"|^\s*(?:inline\s+|static\s+|TORCH_API\s+)*[\w:<>]+\s+([a-z_]\w*)\(")
TARGET = 0.030
READY_SECONDS = 3600.0


def header_points(include: Path) -> list[tuple[str, int, int, str]]:
    """(rel under `torch/include`, 0-based line, column, name): a definition and a use per header."""
    points = []
    for rel in HEADERS:
        lines = (include / rel).read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            m = _DEFINITION.match(line)
            if m:
                name = m.group(1) or m.group(2)
                points.append((rel, i, m.start(1) if m.group(1) else m.start(2), name))
                break
        text = "\n".join(lines)
        for name in USED:
            if re.search(rf"(?:class|struct|using)\s+(?:\w+_API\s+)?{name}\b", text):
                continue  # defined here
            found = next(((i, m.start()) for i, line in enumerate(lines) if not line.lstrip().startswith(("#", "//"))
                          for m in [re.search(rf"\b{name}\b", line)] if m), None)
            if found:
                points.append((rel, found[0], found[1], name))
                break
    return points


def make_workspace(tmp: Path) -> Path:
    """`tmp/ws/torch/` with the Python sources and `include/` (hard links); returns `tmp/ws`."""
    include = LANGS / "torch-include" / "torch" / "include"
    if not include.is_dir():
        raise SystemExit(f"no {include}: run bench/languages_corpus.py first")
    ws = tmp / "ws"
    shutil.copytree(ensure_corpus(), ws / "torch", copy_function=os.link)
    shutil.copytree(include, ws / "torch" / "include", copy_function=os.link)
    return ws


async def _ready(client: BenchClient) -> dict[str, Any]:
    """Wait for the end of indexing and the hover warm-up; the root's status."""
    deadline = time.perf_counter() + READY_SECONDS
    while time.perf_counter() < deadline:
        answer = await client.workspace_execute_command_async(t.ExecuteCommandParams(command="repodoc.status"))
        roots = (answer or {}).get("roots") or [] if isinstance(answer, dict) else []
        status = roots[0] if roots else {}
        if status.get("hoverReady"):
            return dict(status)
        await asyncio.sleep(0.5)
    raise RuntimeError("the server was not ready in time")


async def _timed(request: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await request
    return time.perf_counter() - started, result


def _hover(client: BenchClient, uri: str, line: int, column: int) -> Any:
    return client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=uri), position=t.Position(line=line, character=column)))


async def session(ws: Path, cache: Path, passes: int, pythonpath: str) -> dict[str, Any]:
    env = {**os.environ, "REPODOC_CACHE_DIR": str(cache)}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    torch = ws / "torch"
    cpp = [(torch / "include" / rel, line, col, name) for rel, line, col, name in header_points(torch / "include")]
    python = [(torch / p.rel, p.line, p.character, p.name) for p in hover_points(torch)]
    queries = [q for q, _ in QUERIES] + CPP_QUERIES
    floor_uri = (ws / "notes.txt").as_uri()
    client = BenchClient({})
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve", env=env, cwd=str(ws))
    samples: dict[str, list[list[float]]] = {"cpp": [], "python": [], "symbol": [], "floor": []}
    empty: list[str] = []
    try:
        await client.initialize_async(t.InitializeParams(
            capabilities=capabilities(), root_uri=ws.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name=ws.name)]))
        client.initialized(t.InitializedParams())
        for path in sorted({p for p, *_ in cpp + python}):
            client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(
                uri=path.as_uri(), language_id="python" if path.suffix == ".py" else "cpp", version=1,
                text=path.read_text(encoding="utf-8"))))
        started = time.perf_counter()
        status = await _ready(client)
        ready = time.perf_counter() - started
        for number in range(passes):
            this: dict[str, list[float]] = {key: [] for key in samples}
            for kind, points in (("cpp", cpp), ("python", python)):
                for path, line, col, name in points:
                    seconds, result = await _timed(_hover(client, path.as_uri(), line, col))
                    this[kind].append(seconds)
                    if result is None and number == 0:
                        empty.append(f"{path.name}:{line + 1} {name}")
                    this["floor"].append((await _timed(_hover(client, floor_uri, 0, 0)))[0])
            for query in queries:
                seconds, _ = await _timed(client.workspace_symbol_async(t.WorkspaceSymbolParams(query=query)))
                this["symbol"].append(seconds)
                this["floor"].append((await _timed(_hover(client, floor_uri, 0, 0)))[0])
            for key, values in this.items():
                samples[key].append(values)
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
    return {"files": status.get("files"), "ready_after_open": ready, "samples": samples, "no_answer": empty,
            "points": {"cpp": [f"{p.name}:{line + 1} {n}" for p, line, _c, n in cpp],
                       "python": [f"{p.name}:{line + 1} {n}" for p, line, _c, n in python]}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passes", type=int, default=6)
    parser.add_argument("--pythonpath", default="", help="another checkout whose server to run (PYTHONPATH)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="repodoc-polyglot-") as tmp_name:
        tmp = Path(tmp_name)
        result = asyncio.run(session(make_workspace(tmp), tmp / "cache", args.passes, args.pythonpath))
    samples = result["samples"]
    floor = p95([s for one in samples["floor"][1:] for s in one])
    rows, summary = [], {}
    for key, label in (("cpp", "hover, C++ headers"), ("python", "hover, Python"), ("symbol", "workspace/symbol")):
        later = [s for one in samples[key][1:] for s in one]
        first = samples[key][0]
        summary[key] = {"first_p95": p95(first), "median": median(later), "p95": p95(later)}
        rows.append([label, len(first), fmt_s(p95(first)), fmt_s(median(later)), fmt_s(p95(later)),
                     f"{p95(later) / floor:.1f}x", verdict(p95(later) < TARGET)])
    rows.append(["floor (hover on a .txt)", len(samples["floor"][0]), fmt_s(p95(samples["floor"][0])),
                 fmt_s(median([s for one in samples["floor"][1:] for s in one])), fmt_s(floor), "1.0x", ""])
    print(f"workspace: {result['files']} files; ready {result['ready_after_open']:.1f} s after the opens; "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(table(rows, ["requests", "per pass", "first pass p95", "median", "p95", "p95 / floor", "< 30 ms"]))
    if result["no_answer"]:
        print("no hover at: " + ", ".join(result["no_answer"]))
    path = write_results("polyglot-lsp", {"passes": args.passes, "pythonpath": args.pythonpath, "floor_p95": floor,
                                          "summary": summary, **result})
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
