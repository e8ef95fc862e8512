"""Language servers on PyTorch's sources: repodoc against jedi-language-server, in one run.

    python bench/bench_lsp.py [--servers jedi,repodoc] [--rounds 10]

Each server is launched over stdio with pygls 2's LanguageClient on a temporary copy of the
corpus (the workspace root is the copied `torch/` folder). Measured per server:

- launch -> first non-empty workspace/symbol answer for "Module" (polled);
- 20 workspace/symbol queries (fixed names, exact and partial): median and p95 latency, and
  whether the exact name is ranked first;
- hover at 20 fixed positions (a definition and a use in each of 10 files, opened with
  didOpen): a first pass, then the measured second pass (median and p95);
- peak RSS of the server's process tree (psutil, every 50 ms), and its proportional set size
  (PSS: pages that forked processes share counted once);
- repodoc only: didSave of a ~1,000-line file (changed on disk) -> its `_docs.md` page's
  mtime changes in the output folder (initializationOptions {"outputDir": TMP});
- repodoc only: hover p95 under load: 100 hovers (the 20 positions in turn) on an idle server,
  then 200 didSave of that file in 10 s (each a new text on disk) with a hover after every
  second save (the same 100 positions); the p95 of each and their ratio, over the positions
  whose idle hover is under 0.1 s (a slower one is 5% of the samples, right at p95: reported apart);
- shutdown, then exit -> the process has ended.

repodoc is run twice: with an empty analysis cache (REPODOC_CACHE_DIR -> a fresh folder) and
again with the cache the first session left ("warm"). For the cold-start target the
analyse phase of `repodoc generate` on the same files is timed here too (bench/_phases.py).
Prints a table, writes bench/results/lsp-*.json.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import builtins
import contextlib
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types as t
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BENCH, PeakMemory, fmt_mb, fmt_s, median, p95, run_measured, table, verdict, write_results
from corpus import ensure_corpus, python_files

# workspace/symbol queries: (query, exact name expected first or None for partial names)
QUERIES: list[tuple[str, str | None]] = [
    ("Module", "Module"),
    ("DataLoader", "DataLoader"),
    ("Tensor", "Tensor"),
    ("relu", "relu"),
    ("FullyShardedDataParallel", "FullyShardedDataParallel"),
    ("ShardedTensor", "ShardedTensor"),
    ("Linear", "Linear"),
    ("Conv2d", "Conv2d"),
    ("Optimizer", "Optimizer"),
    ("Adam", "Adam"),
    ("GraphModule", "GraphModule"),
    ("MultiheadAttention", "MultiheadAttention"),
    ("DistributedDataParallel", "DistributedDataParallel"),
    ("TorchDispatchMode", "TorchDispatchMode"),
    ("checkpoint", "checkpoint"),
    ("register_forward_hook", "register_forward_hook"),
    ("fsdp", None),
    ("Sharded", None),
    ("dataload", None),
    ("conv_trans", None),
]

# Files whose first documented definition and first call site are hovered.
HOVER_FILES = [
    "nn/modules/module.py",
    "utils/data/dataloader.py",
    "nn/functional.py",
    "optim/adam.py",
    "_tensor.py",
    "distributed/fsdp/fully_sharded_data_parallel.py",
    "fx/graph_module.py",
    "nn/modules/conv.py",
    "autograd/function.py",
    "serialization.py",
    "utils/checkpoint.py",  # spares: the first 20 positions found, in this order, are used
    "nn/modules/activation.py",
]
HOVER_COUNT = 20

SAVE_LINES = 1000  # the didSave file: the corpus file with the nearest line count
SYMBOL_TIMEOUT = 60.0
HOVER_TIMEOUT = 60.0
FIRST_ANSWER_TIMEOUT = 600.0

TARGET_SYMBOL_P95 = 0.030
TARGET_SAVE = 0.150
TARGET_LOAD_RATIO = 2.0
LOAD_SAVES, LOAD_SECONDS = 200, 10.0
LOAD_IDLE_HOVERS = LOAD_SAVES // 2  # as many as under load, at the same positions: same mix of slow ones
# A position whose idle hover takes longer than this (jedi infers a decorated call for ~200 ms)
# is 5% of the samples, exactly where p95 falls: one slow sample more or less moves p95 across
# that cliff. The ratio is taken over the other positions; the slow ones are reported apart.
LOAD_SLOW_POSITION = 0.1
TARGET_WARM_START = 3.0
TARGET_MEMORY = 0.6e9
TARGET_EXIT = 1.0


@dataclass
class HoverPoint:
    rel: str
    line: int  # 0-based
    character: int  # 0-based, ASCII line so code points == UTF-16 units
    name: str
    kind: str  # "definition" or "use"


@dataclass
class Session:
    server: str
    label: str
    command: list[str]
    first_symbol: float | None = None
    first_symbol_polls: int = 0
    first_symbol_count: int = 0  # results in that first answer
    first_symbol_complete: int | None = None  # results for the same query once indexing has ended
    indexing_done: float | None = None  # launch -> end of the server's indexing progress, if reported
    initialize: float | None = None
    symbols: list[dict[str, Any]] = field(default_factory=list)
    symbols_second: list[float] = field(default_factory=list)
    hover_first: list[dict[str, Any]] = field(default_factory=list)
    hover_second: list[dict[str, Any]] = field(default_factory=list)
    generate_command: dict[str, Any] | None = None
    saves: list[float | None] = field(default_factory=list)
    load_idle: list[tuple[str, float]] = field(default_factory=list)  # (position, seconds), idle server
    load_busy: list[tuple[str, float]] = field(default_factory=list)  # the same while saves stream in
    index_busy: list[float] = field(default_factory=list)  # hovers while a cold server indexes (warm positions)
    index_idle: list[float] = field(default_factory=list)  # the same positions once indexing has ended
    save_file: str = ""
    shutdown: float | None = None
    exit: float | None = None
    returncode: int | None = None
    peak_rss: int = 0
    peak_single: int = 0
    peak_pss: int = 0  # the same tree, shared pages split between their processes
    messages: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stderr_tail: str = ""
    survivors: list[str] = field(default_factory=list)


class BenchClient(LanguageClient):
    """A client that answers what servers ask and records progress and messages."""

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__("repodoc-bench", "1")
        self.settings = settings
        self.started = time.perf_counter()
        self.progress_log: list[tuple[float, str, Any]] = []  # (seconds since launch, token, kind)
        self.progress_titles: dict[str, str] = {}
        self.messages: list[str] = []

        @self.feature(t.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def _create(params: t.WorkDoneProgressCreateParams) -> None:
            return None

        @self.feature(t.CLIENT_REGISTER_CAPABILITY)
        def _register(params: t.RegistrationParams) -> None:
            return None

        @self.feature(t.CLIENT_UNREGISTER_CAPABILITY)
        def _unregister(params: t.UnregistrationParams) -> None:
            return None

        @self.feature(t.WORKSPACE_CONFIGURATION)
        def _configuration(params: t.ConfigurationParams) -> list[Any]:
            return [self.settings for _ in params.items]

        @self.feature(t.PROGRESS)
        def _progress(params: t.ProgressParams) -> None:
            value = params.value
            kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
            if kind == "begin":
                title = value.get("title") if isinstance(value, dict) else getattr(value, "title", "")
                self.progress_titles[str(params.token)] = str(title)
            self.progress_log.append((time.perf_counter() - self.started, str(params.token), kind))

        @self.feature(t.WINDOW_SHOW_MESSAGE)
        def _show(params: t.ShowMessageParams) -> None:
            self.messages.append(f"{params.type}: {params.message}")

        @self.feature(t.WINDOW_LOG_MESSAGE)
        def _log(params: t.LogMessageParams) -> None:
            if params.type in (t.MessageType.Error, t.MessageType.Warning):
                self.messages.append(f"log {params.type}: {params.message}")

        @self.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _diagnostics(params: t.PublishDiagnosticsParams) -> None:
            return None


def capabilities() -> t.ClientCapabilities:
    return t.ClientCapabilities(
        general=t.GeneralClientCapabilities(position_encodings=[t.PositionEncodingKind.Utf16]),
        window=t.WindowClientCapabilities(
            work_done_progress=True, show_message=t.ShowMessageRequestClientCapabilities()
        ),
        workspace=t.WorkspaceClientCapabilities(
            configuration=True,
            workspace_folders=True,
            symbol=t.WorkspaceSymbolClientCapabilities(),
            execute_command=t.ExecuteCommandClientCapabilities(),
            did_change_watched_files=t.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
        ),
        text_document=t.TextDocumentClientCapabilities(
            synchronization=t.TextDocumentSyncClientCapabilities(did_save=True),
            hover=t.HoverClientCapabilities(content_format=[t.MarkupKind.Markdown, t.MarkupKind.PlainText]),
        ),
    )


# -- picking fixed inputs from the corpus ----------------------------------------------------------------


def _name_column(line: str, name: str, start: int) -> int | None:
    match = re.compile(rf"\b{re.escape(name)}\b").search(line, start)
    return match.start() if match else None


def hover_points(root: Path) -> list[HoverPoint]:
    """Per file: the first documented def/class name, and the first call of one of the file's own
    documented functions or classes (so both servers can answer from the workspace)."""
    points: list[HoverPoint] = []
    for rel in HOVER_FILES:
        path = root / rel
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text)
        defs = sorted(
            (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef) and ast.get_docstring(n)),
            key=lambda n: n.lineno,
        )
        documented = {n.name for n in defs if not n.name.startswith("__") and n.name not in dir(builtins)}
        definition = use = None
        for node in defs:
            line = lines[node.lineno - 1]
            col = _name_column(line, node.name, node.col_offset)
            if col is not None and line.isascii() and not node.name.startswith("__"):
                definition = HoverPoint(rel, node.lineno - 1, col, node.name, "definition")
                break
        calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            func = call.func
            if not isinstance(func, ast.Attribute | ast.Name):
                continue
            name = func.attr if isinstance(func, ast.Attribute) else func.id
            end_line = func.end_lineno or func.lineno
            line = lines[end_line - 1]
            if name in documented and line.isascii() and (definition is None or name != definition.name):
                col = line.rfind(name, 0, func.end_col_offset)
                if col >= 0:
                    use = HoverPoint(rel, end_line - 1, col, name, "use")
                    break
        points += [p for p in (definition, use) if p]
    return points[:HOVER_COUNT]


def save_file(root: Path) -> Path:
    """The corpus file whose line count is nearest SAVE_LINES (ties: path order)."""
    best: tuple[int, str, Path] | None = None
    for path in python_files(root):
        n = path.read_bytes().count(b"\n")
        key = (abs(n - SAVE_LINES), str(path), path)
        if best is None or key < best:
            best = key
    assert best is not None
    return best[2]


# -- one server session ------------------------------------------------------------------------------------


async def _timed(coro: Any, timeout: float) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await asyncio.wait_for(coro, timeout)
    return time.perf_counter() - started, result


def _symbol_summary(query: str, expected: str | None, seconds: float, result: Any) -> dict[str, Any]:
    items = list(result or [])
    names = [getattr(s, "name", "") for s in items[:3]]
    first = names[0] if names else ""
    bare = first.removesuffix("()").rsplit(".", 1)[-1]
    return {
        "query": query,
        "seconds": seconds,
        "count": len(items),
        "top3": names,
        "top3_where": [_where(s) for s in items[:3]],
        "exact_first": None if expected is None else bare == expected,
    }


def _where(symbol: Any) -> str:
    location = getattr(symbol, "location", None)
    uri = getattr(location, "uri", "") if location is not None else ""
    return uri.rsplit("/torch/", 1)[-1] if uri else ""


def _hover_text(result: Any) -> str:
    if result is None:
        return ""
    contents = result.contents
    if isinstance(contents, list):
        return "\n".join(c if isinstance(c, str) else getattr(c, "value", "") for c in contents)
    return contents if isinstance(contents, str) else getattr(contents, "value", "")


async def _drain(stream: asyncio.StreamReader | None, sink: list[bytes]) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        sink.append(chunk)
        if len(sink) > 200:
            del sink[:100]


async def run_session(
    label: str,
    server: str,
    command: list[str],
    root: Path,
    *,
    cwd: Path,
    env: dict[str, str],
    settings: dict[str, Any],
    points: list[HoverPoint],
    save: Path | None,
    out: Path | None,
    rounds: int,
    full: bool,
    symbols: bool = True,
    hover_while_indexing: bool = False,
) -> Session:
    session = Session(server=server, label=label, command=command)
    client = BenchClient(settings)
    stderr: list[bytes] = []
    # Not the workspace as working folder: `python -m` puts it first on sys.path, where PyTorch's
    # `signal/` and `types.py` shadow the standard library (the server then dies on import).
    await client.start_io(command[0], *command[1:], env=env, cwd=str(cwd))
    proc = client._server
    assert proc is not None
    drain = asyncio.create_task(_drain(proc.stderr, stderr))
    memory = PeakMemory(proc.pid, pss=True)
    memory.__enter__()
    try:
        uri = root.as_uri()
        seconds, _ = await _timed(
            client.initialize_async(
                t.InitializeParams(
                    capabilities=capabilities(),
                    process_id=os.getpid(),
                    root_uri=uri,
                    root_path=str(root),
                    workspace_folders=[t.WorkspaceFolder(uri=uri, name=root.name)],
                    initialization_options=settings,
                    client_info=t.ClientInfo(name="repodoc-bench", version="1"),
                )
            ),
            120,
        )
        session.initialize = seconds
        client.initialized(t.InitializedParams())
        if hover_while_indexing:
            await _hovers_while_indexing(client, session, root, points)

        # launch -> first non-empty workspace/symbol answer
        deadline = time.perf_counter() + FIRST_ANSWER_TIMEOUT
        while symbols and time.perf_counter() < deadline:
            session.first_symbol_polls += 1
            result = await asyncio.wait_for(
                client.workspace_symbol_async(t.WorkspaceSymbolParams(query="Module")), FIRST_ANSWER_TIMEOUT
            )
            if result:
                session.first_symbol = time.perf_counter() - client.started
                session.first_symbol_count = len(result)
                break
            await asyncio.sleep(0.05)
        else:
            if symbols:
                session.errors.append(f"no workspace/symbol answer within {FIRST_ANSWER_TIMEOUT} s")
        session.indexing_done = await _indexed(client, FIRST_ANSWER_TIMEOUT)
        if session.indexing_done is not None and symbols:
            session.first_symbol_complete = await _first_answer_count(client)

        if full:
            if symbols:
                await _symbols(client, session, rounds)
            await _hovers(client, session, root, points)
            if save is not None and out is not None:
                await _saves(client, session, root, save, out, rounds)
                await _load(client, session, root, points, save)

        seconds, _ = await _timed(client.shutdown_async(None), 60)
        session.shutdown = seconds
        started = time.perf_counter()
        client.exit(None)
        try:
            await asyncio.wait_for(proc.wait(), 60)
            session.exit = time.perf_counter() - started
        except TimeoutError:
            session.errors.append("the server did not exit within 60 s of exit; killed")
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        session.returncode = proc.returncode
    except Exception as exc:  # a broken server is a finding, not a crash of the benchmark
        session.errors.append(f"{type(exc).__name__}: {exc}")
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
    finally:
        memory.__exit__(None, None, None)
        session.peak_rss, session.peak_single, session.peak_pss = memory.peak, memory.peak_single, memory.peak_pss
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.stop(), 10)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(drain, 5)
        session.messages = client.messages[:50]
        session.stderr_tail = b"".join(stderr).decode("utf-8", "replace")[-3000:]
        transport = getattr(proc, "_transport", None)  # closed here, not when the loop is gone
        if transport is not None:
            transport.close()
        await asyncio.sleep(1.0)  # a well-behaved tree has ended by now
        session.survivors = memory.end_survivors()
        if session.survivors:
            session.errors.append(f"{len(session.survivors)} process(es) of the server outlived it (killed)")
    return session


async def _indexed(client: BenchClient, timeout: float) -> float | None:
    """Wait for the end of the server's indexing progress (a token whose title mentions "index");
    return seconds since launch, or None when the server reports none."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        tokens = {tok for tok, title in client.progress_titles.items() if "index" in title.lower()}
        if not tokens:
            return None
        ends = [at for at, tok, kind in client.progress_log if kind == "end" and tok in tokens]
        if len(ends) >= len(tokens):
            return max(ends)
        await asyncio.sleep(0.05)
    return None


async def _first_answer_count(client: BenchClient) -> int:
    result = await asyncio.wait_for(client.workspace_symbol_async(t.WorkspaceSymbolParams(query="Module")), 60)
    return len(result or [])


async def _symbols(client: BenchClient, session: Session, rounds: int) -> None:
    for query, expected in QUERIES:
        try:
            seconds, result = await _timed(
                client.workspace_symbol_async(t.WorkspaceSymbolParams(query=query)), SYMBOL_TIMEOUT
            )
        except TimeoutError:
            session.errors.append(f"workspace/symbol {query!r}: no answer within {SYMBOL_TIMEOUT} s")
            continue
        session.symbols.append(_symbol_summary(query, expected, seconds, result))
    for query, _ in QUERIES:  # a second pass: the same queries again
        try:
            seconds, _ = await _timed(
                client.workspace_symbol_async(t.WorkspaceSymbolParams(query=query)), SYMBOL_TIMEOUT
            )
            session.symbols_second.append(seconds)
        except TimeoutError:
            pass


def _open(client: BenchClient, root: Path, points: list[HoverPoint]) -> None:
    """didOpen each file of the hover positions once."""
    for rel in dict.fromkeys(p.rel for p in points):
        path = root / rel
        client.text_document_did_open(
            t.DidOpenTextDocumentParams(
                text_document=t.TextDocumentItem(
                    uri=path.as_uri(), language_id="python", version=1, text=path.read_text(encoding="utf-8")
                )
            )
        )


async def _hover_pass(client: BenchClient, points: list[HoverPoint], root: Path, into: list[float],
                      until: asyncio.Event | None = None) -> None:
    """Each position hovered once, one after another (until `until` is set): latencies into `into`."""
    for p in points:
        if until is not None and until.is_set():
            return
        seconds, _ = await _timed(client.text_document_hover_async(t.HoverParams(
            text_document=t.TextDocumentIdentifier(uri=(root / p.rel).as_uri()),
            position=t.Position(line=p.line, character=p.character))), HOVER_TIMEOUT)
        into.append(seconds)


async def _hover_loop(client: BenchClient, points: list[HoverPoint], root: Path, until: asyncio.Event,
                      into: list[float]) -> None:
    """Passes over the positions until `until` is set."""
    while points and not until.is_set():  # no positions (another corpus): no hovers
        await _hover_pass(client, points, root, into, until)


async def _hovers_while_indexing(client: BenchClient, session: Session, root: Path, points: list[HoverPoint]) -> None:
    """Right after `initialized`: hovers one after another while the server indexes (after one pass that
    warms each position), then as many passes (at least 3, at most 10) on the idle server."""
    _open(client, root, points)
    deadline = time.perf_counter() + 60
    while not any("index" in title.lower() for title in client.progress_titles.values()):
        if time.perf_counter() > deadline:
            session.errors.append("no indexing progress began within 60 s: hovers during indexing not measured")
            return
        await asyncio.sleep(0.01)
    ended = asyncio.Event()

    async def watch() -> None:
        await _indexed(client, FIRST_ANSWER_TIMEOUT)
        ended.set()

    watcher = asyncio.create_task(watch())
    await _hover_pass(client, points, root, [], ended)  # the first hover of a position warms jedi
    await _hover_loop(client, points, root, ended, session.index_busy)
    await watcher
    if not session.index_busy:
        session.errors.append("indexing ended during the warming pass: no hover measured during indexing")
    await asyncio.sleep(1.0)  # what indexing left behind settles
    passes = min(10, max(3, math.ceil(len(session.index_busy) / max(1, len(points)))))
    for _ in range(passes):
        await _hover_pass(client, points, root, session.index_idle)


async def _hovers(client: BenchClient, session: Session, root: Path, points: list[HoverPoint]) -> None:
    _open(client, root, points)
    for target in (session.hover_first, session.hover_second):
        for p in points:
            params = t.HoverParams(
                text_document=t.TextDocumentIdentifier(uri=(root / p.rel).as_uri()),
                position=t.Position(line=p.line, character=p.character),
            )
            try:
                seconds, result = await _timed(client.text_document_hover_async(params), HOVER_TIMEOUT)
            except TimeoutError:
                session.errors.append(f"hover {p.rel}:{p.line + 1} {p.name}: no answer within {HOVER_TIMEOUT} s")
                continue
            text = _hover_text(result)
            target.append({**asdict(p), "seconds": seconds, "chars": len(text), "empty": not text.strip()})


def _page_for(out: Path, root: Path, path: Path) -> Path:
    return out / f"{path.relative_to(root).as_posix()}_docs.md"


async def _saves(client: BenchClient, session: Session, root: Path, path: Path, out: Path, rounds: int) -> None:
    page = _page_for(out, root, path)
    lines = path.read_bytes().count(b"\n")
    session.save_file = f"{path.relative_to(root).as_posix()} ({lines} lines)"
    if not page.exists():  # the server did not write the tree by itself: ask for it once
        try:
            seconds, result = await _timed(
                client.workspace_execute_command_async(
                    t.ExecuteCommandParams(command="repodoc.generate", arguments=[])
                ),
                900,
            )
            session.generate_command = {"seconds": seconds, "result": _plain(result)}
        except Exception as exc:
            session.errors.append(f"repodoc.generate: {type(exc).__name__}: {exc}")
    if not page.exists():
        session.errors.append(f"no page {page} after repodoc.generate: didSave not measured")
        return
    original = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            text_document=t.TextDocumentItem(uri=uri, language_id="python", version=1, text=original)
        )
    )
    try:
        for i in range(rounds):
            text = original + (
                f'\n\ndef _repodoc_bench_probe_{i}() -> int:\n    """Benchmark edit {i}."""\n    return {i}\n'
            )
            path.write_text(text, encoding="utf-8")
            client.text_document_did_change(
                t.DidChangeTextDocumentParams(
                    text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=i + 2),
                    content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
            before = page.stat().st_mtime_ns
            started = time.perf_counter()
            client.text_document_did_save(
                t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=uri), text=text)
            )
            took: float | None = None
            while time.perf_counter() - started < 10:
                with contextlib.suppress(FileNotFoundError):
                    if page.stat().st_mtime_ns != before:
                        took = time.perf_counter() - started
                        break
                await asyncio.sleep(0.002)
            session.saves.append(took)
            await asyncio.sleep(0.5)  # let any follow-up work settle before the next save
    finally:
        path.write_text(original, encoding="utf-8")


async def _load(client: BenchClient, session: Session, root: Path, points: list[HoverPoint], path: Path) -> None:
    """Hover latency on an idle server, then while didSave notifications stream in."""
    async def hover(i: int) -> tuple[str, float] | None:
        p = points[i % len(points)]
        params = t.HoverParams(text_document=t.TextDocumentIdentifier(uri=(root / p.rel).as_uri()),
                               position=t.Position(line=p.line, character=p.character))
        try:
            seconds, _ = await _timed(client.text_document_hover_async(params), HOVER_TIMEOUT)
        except TimeoutError:
            session.errors.append(f"load: hover {p.rel}:{p.line + 1} unanswered within {HOVER_TIMEOUT} s")
            return None
        return f"{p.name} ({p.rel}:{p.line + 1})", seconds

    await asyncio.sleep(1.0)  # the last save's work is done
    for i in range(LOAD_IDLE_HOVERS):
        if (took := await hover(i)) is not None:
            session.load_idle.append(took)
    original = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    started = time.perf_counter()
    try:
        for n in range(LOAD_SAVES):
            text = original + f"\n\ndef _repodoc_load_{n}() -> None:\n    \"\"\"Load edit {n}.\"\"\"\n"
            path.write_text(text, encoding="utf-8")
            client.text_document_did_change(t.DidChangeTextDocumentParams(
                text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=1000 + n),
                content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)]))
            client.text_document_did_save(t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=uri)))
            if n % 2 and (took := await hover(n // 2)) is not None:
                session.load_busy.append(took)
            await asyncio.sleep(max(0.0, started + (n + 1) * LOAD_SECONDS / LOAD_SAVES - time.perf_counter()))
    finally:
        path.write_text(original, encoding="utf-8")


def _plain(value: Any) -> Any:
    if isinstance(value, dict | list | str | int | float | bool) or value is None:
        return value if not isinstance(value, dict) else {k: v for k, v in value.items() if k != "writtenPages"}
    return str(value)[:500]


# -- the run ----------------------------------------------------------------------------------------------


def analyse_seconds(root: Path, tmp: Path) -> dict[str, Any]:
    """The analyse phase of `repodoc generate` on the same files, with an empty cache."""
    env = {**os.environ, "REPODOC_CACHE_DIR": str(tmp / "cache-analyse")}
    cmd = [sys.executable, str(BENCH / "_phases.py"), str(root), str(tmp / "out-analyse"), "0", "analyse"]
    m = run_measured(cmd, env=env)
    if m.proc.returncode != 0:
        return {"error": m.proc.stderr.strip()[-2000:]}
    return {**json.loads(m.proc.stdout.strip().splitlines()[-1]), "wall": m.seconds}


def _stats(values: list[float]) -> tuple[float, float]:
    return median(values), p95(values)


def _load_summary(s: Session) -> dict[str, Any]:
    """Hover p95 idle and under save load, over the positions that are not slow when idle."""
    if not s.load_idle or not s.load_busy:
        return {"load_idle_p95": None, "load_busy_p95": None, "load_ratio": None, "load_all_ratio": None,
                "load_slow": ""}
    idle_of: dict[str, list[float]] = {}
    for pos, seconds in s.load_idle:
        idle_of.setdefault(pos, []).append(seconds)
    slow = {pos for pos, values in idle_of.items() if median(values) > LOAD_SLOW_POSITION}
    idle = [x for pos, x in s.load_idle if pos not in slow]
    busy = [x for pos, x in s.load_busy if pos not in slow]
    busy_of: dict[str, list[float]] = {}
    for pos, seconds in s.load_busy:
        busy_of.setdefault(pos, []).append(seconds)
    return {
        "load_idle_p95": p95(idle), "load_busy_p95": p95(busy), "load_ratio": p95(busy) / p95(idle),
        "load_all_ratio": p95([x for _, x in s.load_busy]) / p95([x for _, x in s.load_idle]),
        "load_slow": ", ".join(f"{pos}: {fmt_s(median(idle_of[pos]))} / {fmt_s(median(busy_of.get(pos, [math.nan])))}"
                               for pos in sorted(slow)),
    }


def summarise(s: Session) -> dict[str, Any]:
    sym = [q["seconds"] for q in s.symbols]
    hov = [h["seconds"] for h in s.hover_second]
    saves = [x for x in s.saves if x is not None]
    exact = [q["exact_first"] for q in s.symbols if q["exact_first"] is not None]
    return {
        "first_symbol": s.first_symbol,
        "first_symbol_results": f"{s.first_symbol_count} of {s.first_symbol_complete}"
        if s.first_symbol_complete is not None
        else str(s.first_symbol_count),
        "indexing_done": s.indexing_done,
        "survivors": len(s.survivors),
        "symbol_median": median(sym),
        "symbol_p95": p95(sym),
        "symbol_second_median": median(s.symbols_second),
        "symbol_second_p95": p95(s.symbols_second),
        "exact_first": f"{sum(exact)}/{len(exact)}" if exact else "n/a",
        "hover_first_median": median([h["seconds"] for h in s.hover_first]),
        "hover_median": median(hov),
        "hover_p95": p95(hov),
        "hover_empty": sum(h["empty"] for h in s.hover_second),
        "save_median": median(saves) if saves else None,
        "save_missed": sum(x is None for x in s.saves),
        **_load_summary(s),
        "peak_rss": s.peak_rss,
        "peak_pss": s.peak_pss,
        "exit": s.exit,
        "shutdown": s.shutdown,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="folder of sources (default: the PyTorch corpus)")
    parser.add_argument("--servers", default="jedi,repodoc", help="comma-separated: jedi, repodoc")
    parser.add_argument("--rounds", type=int, default=10, help="didSave repetitions")
    parser.add_argument("--jedi-command", default=str(Path(sys.executable).with_name("jedi-language-server")))
    parser.add_argument("--repodoc-command", default=f"{sys.executable} -m repodoc_lsp serve")
    parser.add_argument("--warm-starts", type=int, default=3, help="repodoc launches with the cache left behind")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]

    corpus = args.corpus or ensure_corpus()
    tmp = Path(tempfile.mkdtemp(prefix="repodoc-bench-lsp-"))
    sessions: list[Session] = []
    analyse: dict[str, Any] = {}
    notes: list[str] = []
    try:
        root = tmp / "ws" / corpus.name
        shutil.copytree(corpus, root)
        points = hover_points(root)
        save = save_file(root)
        print(f"corpus copy: {root}; {len(points)} hover positions; didSave file: {save.relative_to(root)}", flush=True)
        base_env = {k: v for k, v in os.environ.items() if k != "REPODOC_CACHE_DIR"}
        cwd = tmp / "cwd"
        cwd.mkdir()

        def launch(label: str, server: str, command: str, **kw: Any) -> None:
            kw.setdefault("env", base_env)
            kw.setdefault("settings", {})
            kw.setdefault("save", None)
            kw.setdefault("out", None)
            kw.setdefault("full", True)
            session = asyncio.run(
                run_session(label, server, command.split(), root, cwd=cwd, points=points, rounds=args.rounds, **kw)
            )
            sessions.append(session)
            _progress(session)

        if "jedi" in servers:
            launch("jedi-language-server", "jedi", args.jedi_command)
        if "repodoc" in servers:
            analyse = analyse_seconds(root, tmp)
            print(f"repodoc generate, analyse phase (cold): {analyse}", flush=True)
            out = tmp / "out"
            env = {**base_env, "REPODOC_CACHE_DIR": str(tmp / "cache-server")}
            settings = {"outputDir": str(out)}
            cmd = args.repodoc_command
            launch("repodoc (cold cache)", "repodoc", cmd, env=env, settings=settings, save=save, out=out)
            for i in range(args.warm_starts):
                launch(
                    f"repodoc (warm cache) #{i + 1}",
                    "repodoc",
                    args.repodoc_command,
                    env=env,
                    settings=settings,
                    full=False,
                )
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    summaries = {s.label: summarise(s) for s in sessions}
    columns = {s.label: summaries[s.label] for s in sessions if not s.label.startswith("repodoc (warm")}
    warm = [s for s in sessions if s.label.startswith("repodoc (warm")]
    if warm:
        columns[f"repodoc (warm cache, {len(warm)} starts)"] = warm_summary(warm)
    rows: list[list[object]] = []
    metrics: list[tuple[str, str, Callable[[Any], str]]] = [
        ("launch -> first symbol answer", "first_symbol", fmt_s),
        ("  results in it (of, once indexed)", "first_symbol_results", str),
        ("launch -> indexing progress ended", "indexing_done", fmt_s),
        ("workspace/symbol median (1st pass)", "symbol_median", fmt_s),
        ("workspace/symbol p95 (1st pass)", "symbol_p95", fmt_s),
        ("workspace/symbol p95 (2nd pass)", "symbol_second_p95", fmt_s),
        ("exact name ranked first", "exact_first", str),
        ("hover median (1st pass)", "hover_first_median", fmt_s),
        ("hover median (2nd pass)", "hover_median", fmt_s),
        ("hover p95 (2nd pass)", "hover_p95", fmt_s),
        ("empty hovers (of 20)", "hover_empty", str),
        ("didSave -> _docs.md rewritten, median", "save_median", fmt_s),
        (f"hover p95, idle ({LOAD_IDLE_HOVERS} hovers)", "load_idle_p95", fmt_s),
        (f"hover p95 during {LOAD_SAVES} saves in {LOAD_SECONDS:.0f} s", "load_busy_p95", fmt_s),
        ("  under load / idle", "load_ratio", lambda x: f"{x:.2f}x"),
        ("  same, with the slow positions", "load_all_ratio", lambda x: f"{x:.2f}x"),
        ("  slow positions (median idle / loaded)", "load_slow", str),
        ("peak RSS, server process tree", "peak_rss", fmt_mb),
        ("  the same, proportional (PSS)", "peak_pss", fmt_mb),
        ("shutdown request", "shutdown", fmt_s),
        ("exit -> process ended", "exit", fmt_s),
        ("processes left running after exit", "survivors", str),
    ]
    for title, key, fmt in metrics:
        rows.append([title, *(_cell(col.get(key), fmt) for col in columns.values())])
    checks = _checks(sessions, summaries, analyse, notes)
    print()
    print(table(rows, ["metric", *columns]))
    if checks:
        print()
        print(
            table(
                [[name, value, verdict(ok)] for name, (value, ok) in checks.items()], ["repodoc target", "measured", ""]
            )
        )
    for s in sessions:
        for problem in s.errors:
            notes.append(f"{s.label}: {problem}")
        if s.returncode not in (0, None):
            notes.append(f"{s.label}: exit code {s.returncode}")
    for note in notes:
        print(f"note: {note}")
    path = write_results(
        "lsp",
        {
            "corpus": str(corpus),
            "hover_points": [asdict(p) for p in points],
            "queries": QUERIES,
            "analyse": analyse,
            "sessions": [asdict(s) for s in sessions],
            "summaries": summaries,
            "columns": columns,
            "checks": {k: {"value": v, "ok": ok} for k, (v, ok) in checks.items()},
            "notes": notes,
        },
    )
    print(f"results: {path}")
    return 0


def _cell(value: Any, fmt: Callable[[Any], str]) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return fmt(value)


def warm_summary(sessions: list[Session]) -> dict[str, Any]:
    """Launches with a warm cache: first answer, exit and shutdown as medians, memory as the maximum."""
    firsts = [s.first_symbol for s in sessions if s.first_symbol is not None]
    exits = [s.exit for s in sessions if s.exit is not None]
    indexed = [s.indexing_done for s in sessions if s.indexing_done is not None]
    shutdowns = [s.shutdown for s in sessions if s.shutdown is not None]
    return {
        "first_symbol": median(firsts) if firsts else None,
        "first_symbol_all": firsts,
        "indexing_done": median(indexed) if indexed else None,
        "survivors": sum(len(s.survivors) for s in sessions),
        "peak_rss": max((s.peak_rss for s in sessions if s.first_symbol is not None), default=None),
        "peak_pss": max((s.peak_pss for s in sessions if s.first_symbol is not None), default=None),
        "exit": median(exits) if exits else None,
        "shutdown": median(shutdowns) if shutdowns else None,
    }


def _progress(s: Session) -> None:
    first = fmt_s(s.first_symbol) if s.first_symbol else "n/a"
    print(f"{s.label}: first symbol {first}, peak {fmt_mb(s.peak_rss)}, errors: {s.errors or 'none'}", flush=True)


def _checks(
    sessions: list[Session], summaries: dict[str, dict[str, Any]], analyse: dict[str, Any], notes: list[str]
) -> dict[str, tuple[str, bool | None]]:
    """The repodoc targets; a target is n/a (not met, not missed) where the server did not answer."""
    checks: dict[str, tuple[str, bool | None]] = {}
    cold = next((s for s in sessions if s.label == "repodoc (cold cache)"), None)
    warm = [s for s in sessions if s.label.startswith("repodoc (warm")]
    peer = next((s for s in sessions if s.server == "jedi"), None)
    if cold is None:
        return checks
    c = summaries[cold.label]
    answered = bool(cold.symbols)
    checks["symbol p95 < 30 ms"] = (
        _cell(c["symbol_p95"], fmt_s),
        c["symbol_p95"] < TARGET_SYMBOL_P95 if answered else None,
    )
    exact = [q["exact_first"] for q in cold.symbols if q["exact_first"] is not None]
    checks["exact name ranked first"] = (c["exact_first"], all(exact) if exact else None)
    peer_h = summaries[peer.label]["hover_median"] if peer is not None and peer.hover_second else None
    checks["hover median <= jedi-language-server's"] = (
        f"{_cell(c['hover_median'], fmt_s)} vs {_cell(peer_h, fmt_s)}",
        c["hover_median"] <= peer_h if peer_h is not None and cold.hover_second else None,
    )
    checks["didSave -> page < 150 ms (median)"] = (
        _cell(c["save_median"], fmt_s),
        c["save_median"] < TARGET_SAVE if c["save_median"] is not None else None,
    )
    checks["hover p95 under save load <= 2x idle"] = (
        _cell(c["load_ratio"], lambda x: f"{x:.2f}x"),
        c["load_ratio"] <= TARGET_LOAD_RATIO if c["load_ratio"] is not None else None,
    )
    if "analyse" in analyse:
        limit = 2 * analyse["analyse"]
        checks["cold first symbol <= 2x generate's analyse"] = (
            f"{_cell(cold.first_symbol, fmt_s)} vs 2 x {fmt_s(analyse['analyse'])}",
            cold.first_symbol <= limit if cold.first_symbol is not None else None,
        )
        checks["cold indexing complete <= 2x generate's analyse"] = (
            f"{_cell(cold.indexing_done, fmt_s)} vs 2 x {fmt_s(analyse['analyse'])}",
            cold.indexing_done <= limit if cold.indexing_done is not None else None,
        )
    elif "error" in analyse:
        notes.append(f"analyse phase not measured: {analyse['error'][-300:]}")
    if warm:
        w = warm_summary(warm)
        checks["warm first symbol <= 3 s (median)"] = (
            ", ".join(fmt_s(x) for x in w["first_symbol_all"]) or "n/a",
            w["first_symbol"] <= TARGET_WARM_START if w["first_symbol"] is not None else None,
        )
    worked = [s for s in (cold, *warm) if s.first_symbol is not None]
    peak = max((s.peak_rss for s in worked), default=0)
    checks["peak memory < 600 MB"] = (fmt_mb(peak), peak < TARGET_MEMORY if worked else None)
    exits = [s.exit for s in (cold, *warm) if s.exit is not None]
    checks["exit within 1 s"] = (
        ", ".join(fmt_s(x) for x in exits) or "n/a",
        all(x <= TARGET_EXIT for x in exits) if exits else None,
    )
    return checks


if __name__ == "__main__":
    raise SystemExit(main())
