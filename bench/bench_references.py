"""textDocument/references from repodoc's symbol graph against jedi-language-server's and jedi's
`Script.get_references` on PyTorch: time per request and what each finds that the other misses.

    python bench/bench_references.py [--classes 20] [--functions 10] [--seed 15] [--passes 2]
                                     [--repeat 10] [--settle 10] [--jls-timeout 60] [--jedi-timeout 60] [--no-jedi]
                                     [--cache-dir DIR]

Both servers run over stdio (repodoc: `python -m repodoc_lsp serve` of this interpreter, a fresh
cache, output in a temporary folder; jedi-language-server: the one beside this interpreter) and are
timed by a raw JSON-RPC client, from the request written to the whole response read and parsed with
`json.loads` (as an editor sees it; no lsprotocol objects built). repodoc: `--settle` seconds after
the graph answers, the heaviest classes (`HEAVIEST`, named by the most files) each asked `--repeat` times,
then one references request per sampled definition at its name, `--passes` passes. The heavy classes
are also given to the response's last byte, and as the p95 of all their asks, the first (a build)
included. The client collects no garbage inside a timed request (`Raw`: collected before each
request, the collector off until the response is parsed; its collections are counted and should
be none).
jedi-language-server: the heavy classes `--jls-repeat` times and the sample once, `--jls-timeout`
per request. jedi (`--no-jedi` skips it): in a worker process of its own (a deadline per name),
`jedi.Script(code, path, project).get_references(line, col, scope="project")` at the sampled
places, `--passes` passes. All exclude the declaration. Completeness compares (file, line) pairs
per name; each line one side misses is classed by its text (import, `x.name`, bare name) and up
to 5 per side and name are kept in the results for reading.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import re
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from _common import median, p95, write_results
from bench_lsp import capabilities
from corpus import ensure_corpus
from lsprotocol.converters import get_converter as converter

# The three heavy classes of the sample; the five classes named by the most files of PyTorch
# (files naming them: 747, 320, 235, 211 and 150 files)
HEAVY = [("torch/_tensor.py", "Tensor"), ("torch/nn/modules/module.py", "Module"),
         ("torch/nn/modules/linear.py", "Linear")]
HEAVIEST = [("torch/_tensor.py", "Tensor"), ("torch/nn/modules/module.py", "Module"),
            ("torch/fx/node.py", "Node"), ("torch/fx/graph_module.py", "GraphModule"),
            ("torch/utils/_ordered_set.py", "OrderedSet")]
_TOP = re.compile(r"^(class|def)\s+(\w+)", re.M)


def place(root: Path, rel: str, name: str) -> dict[str, Any]:
    """Where a top-level class or function's name is written."""
    lines = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
    line = next(i for i, text in enumerate(lines, 1) if re.match(rf"(class|def)\s+{name}\b", text))
    return {"rel": rel, "name": name, "line": line, "col": lines[line - 1].index(name, lines[line - 1].index(" "))}


def sample(root: Path, classes: int, functions: int, seed: int) -> list[dict[str, Any]]:
    """Top-level classes and functions (seeded), the three heavy ones first; their name's place."""
    found: dict[str, list[tuple[str, str, int]]] = {"class": [], "def": []}
    for path in sorted((root / "torch").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in _TOP.finditer(text):
            found[m.group(1)].append((rel, m.group(2), text.count("\n", 0, m.start()) + 1))
    rng = random.Random(seed)
    picked = [x for x in found["class"] if (x[0], x[1]) in HEAVY]
    picked += rng.sample([x for x in found["class"] if (x[0], x[1]) not in HEAVY], classes)
    picked += rng.sample(found["def"], functions)
    out = []
    for rel, name, line in picked:
        text = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()[line - 1]
        out.append({"rel": rel, "name": name, "line": line, "col": text.index(name, text.index(" "))})
    return out


def jedi_worker(root: str) -> None:
    """Reads one name per line (JSON), answers one line each: seconds and (file, line) pairs."""
    import jedi

    project = jedi.Project(path=root, load_unsafe_extensions=False, smart_sys_path=False)
    for raw in sys.stdin:
        item = json.loads(raw)
        path = Path(root) / item["rel"]
        code = path.read_text(encoding="utf-8", errors="replace")
        started = time.perf_counter()
        refs = jedi.Script(code, path=str(path), project=project).get_references(
            item["line"], item["col"], scope="project", include_builtins=False)
        seconds = time.perf_counter() - started
        pairs = sorted({(Path(r.module_path).resolve().relative_to(Path(root).resolve()).as_posix(), r.line)
                        for r in refs if r.module_path and str(r.module_path).startswith(root)
                        and not r.is_definition()})
        print(json.dumps({"seconds": seconds, "found": pairs}), flush=True)


def _jedi_process(root: Path) -> tuple[subprocess.Popen, Any, Any]:
    proc = subprocess.Popen([sys.executable, __file__, "--jedi-worker", str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
    assert proc.stdin is not None and proc.stdout is not None
    return proc, proc.stdin, proc.stdout


def run_jedi(root: Path, names: list[dict[str, Any]], passes: int, timeout: float) -> list[list[dict]]:
    """Each name asked in turn; one that takes longer than `timeout` is a timeout (a new worker follows)."""
    proc, stdin, stdout = _jedi_process(root)
    results: list[list[dict]] = []
    try:
        for _ in range(passes):
            answers: list[dict] = []
            for item in names:
                stdin.write(json.dumps(item) + "\n")
                stdin.flush()
                ready, _, _ = select.select([stdout], [], [], timeout)
                if not ready:
                    answers.append({"seconds": None, "found": [], "timeout": True})
                    proc.kill()
                    proc.wait(10)
                    proc, stdin, stdout = _jedi_process(root)
                    continue
                answers.append(json.loads(stdout.readline()))
            results.append(answers)
    finally:
        proc.kill()
        proc.wait(10)
    return results


class _Collections:
    """The time this process (the client) has spent in its garbage collector, and its
    collections, so far (`gc.callbacks`): none is expected inside a timed request."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.count = 0
        self._began = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
            return
        self.seconds += time.perf_counter() - self._began
        self.count += 1


COLLECTIONS = _Collections()
INSIDE = [0]  # the client's collections inside timed requests, every server and request (none expected)


class Raw:
    """A JSON-RPC client over a server's stdio: requests timed until their response is parsed;
    the server's own requests (configuration, progress, registrations) answered. The client
    collects no garbage inside a timed request: its garbage is collected before each request,
    and its collector is off from the request's writing to its response parsed (a full
    collection of the client's heap, set off by the dicts `json.loads` makes of 10,000
    locations, took 70-130 ms and fell inside the timed asks: it made their p95). The same
    client drives both servers."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self.waiting: dict[int, tuple[float, asyncio.Future]] = {}
        self.last_read: float | None = None  # the last response: seconds to its last byte (before `json.loads`)
        # the last request: seconds this client spent collecting garbage meanwhile, and its collections (none)
        self.last_gc: tuple[float, int] = (0.0, 0)
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, command: list[str], env: dict[str, str], cwd: str) -> Raw:
        proc = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.DEVNULL, env=env, cwd=cwd,
                                                    limit=2**26)
        return cls(proc)

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (header := await out.readline()) not in (b"\r\n", b""):
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            if not header:
                return
            data = await out.readexactly(length)
            read = time.perf_counter()
            message = json.loads(data)
            done = time.perf_counter()
            if "method" in message and "id" in message:  # the server asks
                result: Any = None
                if message["method"] == "workspace/configuration":
                    result = [{} for _ in message["params"]["items"]]
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "id" in message and message["id"] in self.waiting:
                began, future = self.waiting.pop(message["id"])
                self.last_read = read - began
                if not future.done():
                    future.set_result((done - began, message))

    async def request(self, method: str, params: Any, timeout: float) -> tuple[float | None, Any]:
        """(seconds, result); (None, None) after `timeout`."""
        self.next_id += 1
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        gc.collect()  # this client's garbage, before the clock starts
        enabled = gc.isenabled()
        gc.disable()
        gc_before = (COLLECTIONS.seconds, COLLECTIONS.count)
        self.waiting[self.next_id] = (time.perf_counter(), future)
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        try:
            seconds, message = await asyncio.wait_for(future, timeout)
            self.last_gc = (COLLECTIONS.seconds - gc_before[0], COLLECTIONS.count - gc_before[1])
            INSIDE[0] += self.last_gc[1]
        except TimeoutError:
            self._send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": self.next_id}})
            return None, None
        finally:
            if enabled:
                gc.enable()
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return seconds, message.get("result")

    async def initialize(self, root: Path, options: dict[str, Any] | None) -> None:
        uri = root.as_uri()
        await self.request("initialize", {"processId": os.getpid(), "rootUri": uri,
                                          "capabilities": converter().unstructure(capabilities()),
                                          "workspaceFolders": [{"uri": uri, "name": root.name}],
                                          "initializationOptions": options}, 120)
        self._send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, 30)
            self._send({"jsonrpc": "2.0", "method": "exit"})
            await asyncio.wait_for(self.proc.wait(), 30)
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self.reader.cancel()


def _params(root: Path, item: dict[str, Any]) -> dict[str, Any]:
    return {"textDocument": {"uri": (root / item["rel"]).as_uri()},
            "position": {"line": item["line"] - 1, "character": item["col"]},
            "context": {"includeDeclaration": False}}


def _pairs(root: Path, found: list[dict] | None) -> list[tuple[str, int]]:
    prefix = root.as_uri() + "/"
    return sorted({(unquote(loc["uri"][len(prefix):]), loc["range"]["start"]["line"] + 1)
                   for loc in found or () if loc["uri"].startswith(prefix)})


async def ask_heavy(server: Raw, root: Path, heavy: list[dict[str, Any]], repeat: int,
                    timeout: float) -> list[dict[str, Any]]:
    """Each heavy class asked `repeat` times in a row: the first ask, the others' median and p95,
    and the p95 of all `repeat` asks, the first included."""
    rows = []
    for item in heavy:
        times: list[float | None] = []
        reads: list[float] = []
        client_gc = 0  # the client's garbage collections inside these asks (none expected)
        count = 0
        for _ in range(repeat):
            seconds, found = await server.request("textDocument/references", _params(root, item), timeout)
            times.append(seconds)
            if seconds is not None and server.last_read is not None:
                reads.append(server.last_read * 1000)
            client_gc += server.last_gc[1]
            count = max(count, len(found or ()))
            if seconds is None:
                break  # a timeout is not asked again
        again = [x * 1000 for x in times[1:] if x is not None]
        # the client's `json.loads` of each answer after the first (the whole less its last byte)
        decode = [x * 1000 - r for x, r in zip(times[1:], reads[1:], strict=False) if x is not None]
        every = [x * 1000 for x in times if x is not None]
        rows.append({"name": f"{item['rel']}:{item['name']}", "locations": count,
                     "first_ms": round(times[0] * 1000, 1) if times[0] is not None else None,
                     "median_ms": round(median(again), 1) if again else None,
                     "p95_ms": round(p95(again), 1) if again else None, "asks": len(times),
                     "all_p95_ms": round(p95(every), 1) if every else None,  # the first ask included
                     # the same asks to the response's last byte, the client's `json.loads` left out
                     "first_read_ms": round(reads[0], 1) if reads else None,
                     "read_median_ms": round(median(reads[1:]), 1) if reads[1:] else None,
                     "read_p95_ms": round(p95(reads[1:]), 1) if reads[1:] else None,
                     "decode_median_ms": round(median(decode), 1) if decode else None,
                     "decode_p95_ms": round(p95(decode), 1) if decode else None,
                     "client_gc_in_asks": client_gc, "timeouts": sum(1 for x in times if x is None)})
    return rows


async def run_repodoc(root: Path, names: list[dict[str, Any]], heavy: list[dict[str, Any]], passes: int,
                      repeat: int, tmp: Path, settle: float = 0.0,
                      cache: Path | None = None) -> tuple[float, list[dict], list[list[dict]]]:
    env = {**os.environ, "REPODOC_CACHE_DIR": str(cache or tmp / "cache")}
    server = await Raw.start([sys.executable, "-m", "repodoc_lsp", "serve"], env, str(tmp))
    started = time.perf_counter()
    try:
        await server.initialize(root, {"outputDir": str(tmp / "out")})
        deadline = time.perf_counter() + 600
        while (await server.request("textDocument/references", _params(root, names[-1]), 60))[1] is None:
            if time.perf_counter() > deadline:  # the graph is built after indexing (asked for a light name)
                raise TimeoutError("no references answer within 600 s")
            await asyncio.sleep(0.5)
        ready = time.perf_counter() - started
        await asyncio.sleep(settle)  # the server builds its heaviest answers after indexing
        rows = await ask_heavy(server, root, heavy, repeat, 60)
        results = []
        for _ in range(passes):
            answers = []
            for item in names:
                seconds, found = await server.request("textDocument/references", _params(root, item), 60)
                answers.append({"seconds": seconds, "found": _pairs(root, found)})
            results.append(answers)
    finally:
        await server.stop()
    return ready, rows, results


async def run_jls(root: Path, names: list[dict[str, Any]], heavy: list[dict[str, Any]], repeat: int,
                  timeout: float, tmp: Path) -> tuple[list[dict], list[dict]]:
    """jedi-language-server: the heavy classes, then the sample once."""
    server = await Raw.start([str(Path(sys.executable).with_name("jedi-language-server"))], dict(os.environ), str(tmp))
    try:
        await server.initialize(root, None)
        rows = await ask_heavy(server, root, heavy, repeat, timeout)
        answers = []
        for item in names:
            seconds, found = await server.request("textDocument/references", _params(root, item), timeout)
            answers.append({"seconds": seconds, "found": _pairs(root, found)})
    finally:
        await server.stop()
    return rows, answers


def kind_of(text: str, name: str) -> str:
    stripped = text.strip()
    if stripped.startswith(("from ", "import ")):
        return "import"
    if re.search(rf"\.\s*{re.escape(name)}\b", text):
        return "x.name"
    if re.search(rf"\b{re.escape(name)}\b", text):
        return "bare name"
    return "name not on the line"


def compare(root: Path, names: list[dict], ours: list[dict], theirs: list[dict]) -> list[dict[str, Any]]:
    rows = []
    for item, mine, jedis in zip(names, ours, theirs, strict=True):
        a, b = {tuple(x) for x in mine["found"]}, {tuple(x) for x in jedis["found"]}
        row: dict[str, Any] = {"name": f"{item['rel']}:{item['name']}", "both": len(a & b),
                               "only_repodoc": len(a - b), "only_jedi": len(b - a), "jedi_timeout": "timeout" in jedis,
                               "files_repodoc": len({f for f, _ in a}), "files_jedi": len({f for f, _ in b})}
        for side, extra in (("only_repodoc", a - b), ("only_jedi", b - a)):
            kinds: dict[str, int] = {}
            shown: list[str] = []
            for rel, line in sorted(extra):
                lines = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
                text = lines[line - 1] if 0 < line <= len(lines) else ""
                kind = kind_of(text, item["name"])
                kinds[kind] = kinds.get(kind, 0) + 1
                if len(shown) < 5:
                    shown.append(f"{rel}:{line}: {text.strip()[:120]}")
            row[f"{side}_kinds"], row[f"{side}_samples"] = kinds, shown
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--classes", type=int, default=20)
    parser.add_argument("--functions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--jedi-timeout", type=float, default=60.0)
    parser.add_argument("--no-jedi", dest="jedi", action="store_false",
                        help="compare with jedi-language-server's answers (one pass) instead of jedi's")
    parser.add_argument("--heavy", type=int, default=len(HEAVIEST), help="how many of the heaviest classes")
    parser.add_argument("--repeat", type=int, default=10, help="asks of each heavy class (repodoc)")
    parser.add_argument("--jls-repeat", type=int, default=3, help="asks of each heavy class (jedi-language-server)")
    parser.add_argument("--jls-timeout", type=float, default=60.0)
    parser.add_argument("--settle", type=float, default=10.0,
                        help="seconds between the graph's first answer and the heavy classes' asks")
    parser.add_argument("--cache-dir", type=Path, help="repodoc's cache (kept between runs; default: a fresh one)")
    parser.add_argument("--no-jls", dest="jls", action="store_false", help="skip jedi-language-server")
    parser.add_argument("--jedi-worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.jedi_worker:
        jedi_worker(args.jedi_worker)
        return 0
    root = ensure_corpus().parent
    names = sample(root, args.classes, args.functions, args.seed)
    heavy = [place(root, rel, name) for rel, name in HEAVIEST[:args.heavy]]
    gc.collect()
    gc.freeze()  # what the client holds from here on is not walked by its collections
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="repodoc-bench-refs-") as tmp:
        ready, heavy_ours, ours = asyncio.run(run_repodoc(root, names, heavy, args.passes, args.repeat, Path(tmp),
                                                             args.settle, args.cache_dir))
        heavy_jls, jls = (asyncio.run(run_jls(root, names, heavy, args.jls_repeat, args.jls_timeout, Path(tmp)))
                          if args.jls else ([{"first_ms": None, "median_ms": None, "p95_ms": None, "timeouts": 0}
                                             for _ in heavy], [{"seconds": None, "found": []} for _ in names]))
    theirs = run_jedi(root, names, args.passes, args.jedi_timeout) if args.jedi else [jls]
    rows = compare(root, names, ours[-1], theirs[-1])
    summary: dict[str, Any] = {"names": len(names), "graph_ready_seconds": round(ready, 2),
                               "load_before": load, "load_after": os.getloadavg(),
                               "client_gc_in_timed_requests": INSIDE[0]}
    for label, passes in (("repodoc", ours), ("jls", [jls]), *((("jedi", theirs),) if args.jedi else ())):
        for i, answers in enumerate(passes, 1):
            times = [a["seconds"] * 1000 for a in answers if a["seconds"] is not None]
            summary[f"{label}_pass{i}_ms"] = {"median": round(median(times), 1), "p95": round(p95(times), 1),
                                              "max": round(max(times), 1) if times else None,
                                              "timeouts": sum(1 for a in answers if a["seconds"] is None)}
    for key in ("both", "only_repodoc", "only_jedi", "files_repodoc", "files_jedi"):
        summary[key] = sum(r[key] for r in rows)
    for side in ("only_repodoc", "only_jedi"):
        kinds: dict[str, int] = {}
        for r in rows:
            for k, n in r[f"{side}_kinds"].items():
                kinds[k] = kinds.get(k, 0) + n
        summary[f"{side}_kinds"] = kinds
    sampled = [a["seconds"] * 1000 for a in ours[-1] if a["seconds"] is not None]
    theirs_sampled = [a["seconds"] * 1000 for a in jls if a["seconds"] is not None]
    summary["heavy"] = {"repodoc": heavy_ours, "jls": heavy_jls}
    print(json.dumps(summary, indent=2))
    print(f"{'references, ms (raw client)':44} {'locations':>9} {'repodoc first / median / p95':>30} "
          f"{'jedi-language-server first / median / p95':>42}")
    for mine, peer in zip(heavy_ours, heavy_jls, strict=True):
        peer_text = (f"{peer['first_ms']} / {peer['median_ms']} / {peer['p95_ms']}"
                     + (f" ({peer['timeouts']} timeout)" if peer["timeouts"] else ""))
        print(f"{mine['name'][:44]:44} {mine['locations']:9,} "
              f"{mine['first_ms']} / {mine['median_ms']} / {mine['p95_ms']:>8}   {peer_text:>40}"
              f"   (repodoc: p95 of all {mine['asks']} asks {mine['all_p95_ms']}; to the last byte:"
              f" {mine['first_read_ms']} / {mine['read_median_ms']} / {mine['read_p95_ms']};"
              f" the client's json.loads: {mine['decode_median_ms']} / {mine['decode_p95_ms']};"
              f" client collections inside: {mine['client_gc_in_asks']})")
    print(f"{'the sample, last pass: median / p95':44} {len(names):9} "
          f"{median(sampled):.1f} / {p95(sampled):.1f}{'':>14} "
          + (f"{median(theirs_sampled) if theirs_sampled else float('nan'):.1f} / "
             f"{p95(theirs_sampled) if theirs_sampled else float('nan'):.1f}"
             f" ({sum(1 for a in jls if a['seconds'] is None)} timeouts)" if args.jls else "not asked"))
    print(f"{'definition':60} {'both':>5} {'+repodoc':>8} {'+jedi':>6} {'files r/j':>10}")
    for r in rows:
        print(f"{r['name'][:60]:60} {r['both']:5} {r['only_repodoc']:8} {r['only_jedi']:6} "
              f"{r['files_repodoc']:>4}/{r['files_jedi']:<5}{' (jedi timed out)' if r['jedi_timeout'] else ''}")
    write_results("references", {"summary": summary, "rows": rows, "names": names, "heavy": heavy,
                                 "repodoc": ours, "jls": jls, "jedi": theirs if args.jedi else None})
    return 0


if __name__ == "__main__":
    sys.exit(main())
