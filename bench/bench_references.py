"""textDocument/references from repodoc's symbol graph against jedi's `Script.get_references`
on PyTorch: time per request and what each finds that the other misses.

    python bench/bench_references.py [--classes 20] [--functions 10] [--seed 15] [--jedi-timeout 60]

repodoc: the real server over stdio (`python -m repodoc_lsp serve` of this interpreter, a fresh
cache, output in a temporary folder), one references request per sampled definition at its
name, two passes once the graph answers. jedi: in a worker process of its own (a deadline per
name), `jedi.Script(code, path, project).get_references(line, col, scope="project")` at the
same places, two passes. Both exclude the declaration. Completeness compares (file, line)
pairs per name; each line one side misses is classed by its text (import, `x.name`, bare name)
and up to 5 per side and name are kept in the results for reading.
"""

from __future__ import annotations

import argparse
import asyncio
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

from _common import median, p95, write_results
from bench_lsp import BenchClient, capabilities
from corpus import ensure_corpus
from lsprotocol import types as t

HEAVY = [("torch/_tensor.py", "Tensor"), ("torch/nn/modules/module.py", "Module"),
         ("torch/nn/modules/linear.py", "Linear")]
_TOP = re.compile(r"^(class|def)\s+(\w+)", re.M)


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


async def run_repodoc(root: Path, names: list[dict[str, Any]], passes: int,
                      tmp: Path) -> tuple[float, list[list[dict]]]:
    client = BenchClient({"outputDir": str(tmp / "out")})
    env = {**os.environ, "REPODOC_CACHE_DIR": str(tmp / "cache")}
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve", env=env, cwd=str(tmp))
    started = time.perf_counter()
    uri = root.as_uri()
    await asyncio.wait_for(client.initialize_async(t.InitializeParams(
        capabilities=capabilities(), root_uri=uri, workspace_folders=[t.WorkspaceFolder(uri=uri, name=root.name)],
        initialization_options={"outputDir": str(tmp / "out")})), 120)
    client.initialized(t.InitializedParams())

    async def ask(item: dict[str, Any]) -> tuple[float, Any]:
        params = t.ReferenceParams(text_document=t.TextDocumentIdentifier(uri=(root / item["rel"]).as_uri()),
                                   position=t.Position(line=item["line"] - 1, character=item["col"]),
                                   context=t.ReferenceContext(include_declaration=False))
        began = time.perf_counter()
        answer = await asyncio.wait_for(client.text_document_references_async(params), 60)
        return time.perf_counter() - began, answer

    deadline = time.perf_counter() + 600
    while (await ask(names[0]))[1] is None:  # the graph is built after indexing
        if time.perf_counter() > deadline:
            raise TimeoutError("no references answer within 600 s")
        await asyncio.sleep(0.5)
    ready = time.perf_counter() - started
    results = []
    for _ in range(passes):
        answers = []
        for item in names:
            seconds, found = await ask(item)
            pairs = sorted({(Path(loc.uri[len("file://"):]).relative_to(root).as_posix(), loc.range.start.line + 1)
                            for loc in found or ()})
            answers.append({"seconds": seconds, "found": pairs})
        results.append(answers)
    await asyncio.wait_for(client.shutdown_async(None), 30)
    client.exit(None)
    await asyncio.wait_for(client.stop(), 30)
    return ready, results


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
    parser.add_argument("--jedi-worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.jedi_worker:
        jedi_worker(args.jedi_worker)
        return 0
    root = ensure_corpus().parent
    names = sample(root, args.classes, args.functions, args.seed)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="repodoc-bench-refs-") as tmp:
        ready, ours = asyncio.run(run_repodoc(root, names, args.passes, Path(tmp)))
    theirs = run_jedi(root, names, args.passes, args.jedi_timeout)
    rows = compare(root, names, ours[-1], theirs[-1])
    summary: dict[str, Any] = {"names": len(names), "graph_ready_seconds": round(ready, 2),
                               "load_before": load, "load_after": os.getloadavg()}
    for label, passes in (("repodoc", ours), ("jedi", theirs)):
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
    print(json.dumps(summary, indent=2))
    print(f"{'definition':60} {'both':>5} {'+repodoc':>8} {'+jedi':>6} {'files r/j':>10}")
    for r in rows:
        print(f"{r['name'][:60]:60} {r['both']:5} {r['only_repodoc']:8} {r['only_jedi']:6} "
              f"{r['files_repodoc']:>4}/{r['files_jedi']:<5}{' (jedi timed out)' if r['jedi_timeout'] else ''}")
    write_results("references", {"summary": summary, "rows": rows, "names": names,
                                 "repodoc": ours, "jedi": theirs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
