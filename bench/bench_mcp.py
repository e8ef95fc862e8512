"""`repodoc mcp` on PyTorch: time to ready with a warm cache, and each tool's answer times.

    python bench/bench_mcp.py [--runs 3] [--asks 40] [--corpus DIR] [--cache DIR] [--python PATH]

The corpus (bench/corpus.py) is the folder holding `torch/`, so modules are named `torch.x`.
One start fills a cache of its own (a temporary folder, or --cache DIR, kept); then --runs starts
with that warm cache, each timed from the spawn to the first `search_symbols` answer (ready), beside
the `initialize` answer (the process and the SDK loaded: the floor of any start) and the first
`used_by` answer after it (the symbol graph built: every tool ready). In the last
session, --asks calls of each tool (arguments varied over PyTorch's names, paths and docs),
interleaved with `ping`s, the protocol's floor (a request that does no work) measured in the
same session; medians and p95, client side (the SDK's own client over stdio).
Targets (issue 39): ready < 3 s; every tool's p95 < 50 ms. Nothing is written in the corpus.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _common import fmt_s, median, p95, table, write_results  # noqa: E402
from corpus import ensure_corpus  # noqa: E402

QUERIES = ["Linear", "conv2d", "Module", "tensor", "DataLoader", "optim", "backward", "autocast",
           "Parameter", "relu", "export", "Dynamo", "graph", "save", "quantize"]
SYMBOLS = ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module", "torch._tensor.Tensor",
           "torch.optim.optimizer.Optimizer", "torch.utils.data.dataloader.DataLoader",
           "torch.nn.functional.relu", "torch.autograd.grad_mode.no_grad", "torch.nn.modules.conv.Conv2d"]
PAGES: list[dict[str, str]] = [
    {"symbol": "torch.nn.modules.linear.Linear"}, {"symbol": "torch.optim.optimizer.Optimizer.step"},
    {"path": "torch/nn/modules/linear.py"}, {"path": "torch/nn/index.md"}, {"path": "torch/optim/sgd.py"},
    {"path": "torch/utils/data/sampler.py_kw.md"}, {"symbol": "torch.nn.modules.conv.Conv2d"},
]
OUTLINES = ["torch", "torch/nn", "torch/nn/modules", "torch/nn/modules/linear.py", "torch/optim/adam.py",
            "torch/utils/data"]
CHECKS = [["torch/nn/modules/linear.py"], ["torch/optim/sgd.py", "torch/optim/adam.py"],
          ["torch/utils/data/dataloader.py"], ["torch/nn/functional.py"]]


def arguments(tool: str) -> itertools.cycle:
    return itertools.cycle({
        "search_symbols": [{"query": q, "limit": 20} for q in QUERIES],
        "used_by": [{"symbol": s} for s in SYMBOLS],
        "get_page": PAGES,
        "outline": [{"path": p} for p in OUTLINES],
        "check_references": [{"paths": p} for p in CHECKS],
    }[tool])


TOOLS = ("search_symbols", "used_by", "get_page", "outline", "check_references")


def server_cpu() -> float:
    """CPU seconds (user + system) the server process has used so far: what a loaded machine's
    wall clock does not show (this process's children: the server, and its workers if any)."""
    import psutil

    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


async def session(root: Path, cache: Path, asks: int, python: str, cwd: Path) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {**os.environ, "REPODOC_CACHE_DIR": str(cache)}
    params = StdioServerParameters(command=python, args=["-m", "repodoc_lsp", "mcp", str(root)], env=env, cwd=cwd)
    started = time.perf_counter()
    found: dict[str, Any] = {}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            found["initialize"] = time.perf_counter() - started
            found["initialize_cpu"] = server_cpu()
            first = await s.call_tool("search_symbols", {"query": "Linear", "limit": 5})
            found["ready"] = time.perf_counter() - started
            found["ready_cpu"] = server_cpu()
            assert not first.is_error, first.content
            await s.call_tool("used_by", {"symbol": SYMBOLS[0]})
            found["graph"] = time.perf_counter() - started
            found["graph_cpu"] = server_cpu()
            if not asks:
                return found
            times: dict[str, list[float]] = {tool: [] for tool in (*TOOLS, "ping")}
            errors: dict[str, list[str]] = {tool: [] for tool in TOOLS}
            args = {tool: arguments(tool) for tool in TOOLS}
            for tool in TOOLS:  # each tool's first call (pages: the site is made) is not counted
                await s.call_tool(tool, next(args[tool]))
            for _ in range(asks):
                for tool in TOOLS:
                    t = time.perf_counter()
                    await s.send_ping()
                    times["ping"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    result = await s.call_tool(tool, next(args[tool]))
                    times[tool].append(time.perf_counter() - t)
                    if result.is_error:
                        errors[tool].append(result.content[0].text[:200])
            found["times"] = times
            found["errors"] = {tool: sorted(set(e))[:5] for tool, e in errors.items() if e}
    return found


def main() -> int:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="warm starts timed (default 3)")
    parser.add_argument("--asks", type=int, default=40,
                        help="calls of each tool in the last start (default 40; 0: starts only)")
    parser.add_argument("--corpus", type=Path, help="folder holding torch/ (default: bench/corpus.py's)")
    parser.add_argument("--cache", type=Path, help="cache folder to use and keep (default: a temporary one)")
    parser.add_argument("--python", default=sys.executable,
                        help="the server's interpreter (another install of repodoc: a before/after pair)")
    args = parser.parse_args()
    root = args.corpus or ensure_corpus().parent
    with tempfile.TemporaryDirectory(prefix="repodoc-bench-mcp-") as tmp:
        cache = args.cache or Path(tmp) / "cache"
        # the server starts in an empty folder: `python -m` looks in the working folder first, and a
        # checkout of repodoc there would run instead of the one `--python` has
        cwd = Path(tmp) / "cwd"
        cwd.mkdir()
        cold = anyio.run(session, root, cache, 0, args.python, cwd)
        print(f"first start (fills the cache): ready {fmt_s(cold['ready'])}")
        runs = [anyio.run(session, root, cache, args.asks if i == args.runs - 1 else 0, args.python, cwd)
                for i in range(args.runs)]
    ready = [r["ready"] for r in runs]
    init = [r["initialize"] for r in runs]
    graph = [r["graph"] for r in runs]
    cpu = {k: [r[f"{k}_cpu"] for r in runs] for k in ("initialize", "ready", "graph")}
    print(table([["initialize answered (floor)", fmt_s(median(init)), fmt_s(max(init)),
                  fmt_s(median(cpu["initialize"]))],
                 ["ready (first search answered)", fmt_s(median(ready)), fmt_s(max(ready)),
                  fmt_s(median(cpu["ready"]))],
                 ["first used_by answered (graph built)", fmt_s(median(graph)), fmt_s(max(graph)),
                  fmt_s(median(cpu["graph"]))]],
                ["warm start", "median", "max", "server CPU (median)"]))
    print(f"ready: {median(ready):.2f} s wall, {median(cpu['ready']):.2f} s CPU (medians of {len(runs)}); "
          f"target < 3 s: {'met' if median(cpu['ready']) < 3 else 'NOT met'} on CPU; load {os.getloadavg()[0]:.1f}")
    if not args.asks:
        write_results("mcp", {"corpus": str(root), "cold_ready": cold["ready"], "ready": ready, "initialize": init,
                              "graph": graph, "cpu": cpu})
        return 0
    times = runs[-1]["times"]
    rows = []
    for tool in (*TOOLS, "ping"):
        ms = [t * 1000 for t in times[tool]]
        rows.append([tool, f"{median(ms):.1f} ms", f"{p95(ms):.1f} ms", f"{max(ms):.1f} ms",
                     "" if tool == "ping" else f"{p95(ms) / max(p95([t * 1000 for t in times['ping']]), 1e-9):.1f}x"])
    print(table(rows, ["tool", "median", "p95", "max", "p95 / ping p95"]))
    if runs[-1]["errors"]:
        print("tool errors:", runs[-1]["errors"])
    worst = max(p95(times[tool]) for tool in TOOLS)
    print(f"targets: ready < 3 s: {'met' if max(ready) < 3 else 'NOT met'}; "
          f"every tool's p95 < 50 ms: {'met' if worst < 0.05 else 'NOT met'} (worst {worst * 1000:.1f} ms); "
          f"load {os.getloadavg()[0]:.1f}")
    write_results("mcp", {"corpus": str(root), "cold_ready": cold["ready"], "ready": ready, "initialize": init,
                          "graph": graph, "cpu": cpu, "times": times, "errors": runs[-1]["errors"]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
