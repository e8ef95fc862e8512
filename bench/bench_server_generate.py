"""The server's `repodoc.generate` against the CLI's `repodoc generate`, on PyTorch's sources.

    python bench/bench_server_generate.py [--runs 3] [--keep]

Both write the whole tree (5,250 pages) into an EMPTY output folder with a warm analysis cache
(one cold CLI run fills it first), so what is compared is reading the workspace, rendering and
writing: the CLI with its forked render workers, the server from its `workspace/executeCommand`.

- CLI: `repodoc generate ROOT --out TMP/cli-i --quiet --json`, N runs, wall time and peak RSS of
  the process tree.
- Server: one `repodoc serve` session (same cache), indexing awaited, then N `repodoc.generate`
  commands, the output folder emptied before each: the command's round trip. Then one more
  with hovers at the 20 fixed positions of bench_lsp.py sent one after another while the
  command runs (p95 against the same hovers on the idle server before it): a long command must
  not make the editor wait. That run is not in the median (the hovers take a core).
- `--jobs N` is passed to both (`--jobs`, the `jobs` setting); default: one worker per core.

Target: server / CLI <= 1.2 (median of N each). Prints a table, writes
bench/results/server-generate-*.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types as t

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import PeakMemory, fmt_mb, fmt_s, median, p95, run_measured, scratch_folder, table, verdict, write_results
from bench_generate import repodoc_command
from bench_lsp import BenchClient, _drain, _hover_loop, _hover_pass, _indexed, _open, capabilities, hover_points
from corpus import ensure_corpus

TARGET = 1.2


def cli_runs(root: Path, tmp: Path, env: dict[str, str], runs: int, jobs: int | None) -> list[dict[str, Any]]:
    results = []
    for i in range(-1, runs):  # run -1 fills the cache
        out = tmp / f"cli-{i}"
        m = run_measured([*repodoc_command(), "generate", str(root), "--out", str(out), "--quiet", "--json",
                          *(["--jobs", str(jobs)] if jobs else [])], env=env, cwd=tmp)
        if m.proc.returncode != 0:
            raise RuntimeError(f"repodoc generate failed ({m.proc.returncode}): {m.proc.stderr[-2000:]}")
        label = "cold (fills the cache)" if i < 0 else f"warm #{i + 1}"
        print(f"CLI {label}: {m.seconds:.2f} s, peak {fmt_mb(m.peak_rss)}", flush=True)
        if i >= 0:
            results.append({"seconds": m.seconds, "peak_rss": m.peak_rss})
        shutil.rmtree(out, ignore_errors=True)
    return results


async def server_session(root: Path, tmp: Path, env: dict[str, str], runs: int, jobs: int | None) -> dict[str, Any]:
    out = tmp / "server-out"
    settings: dict[str, Any] = {"outputDir": str(out), **({"jobs": jobs} if jobs else {})}
    client = BenchClient(settings)
    await client.start_io(*repodoc_command(), "serve", env=env, cwd=str(tmp))
    proc = client._server
    assert proc is not None
    stderr: list[bytes] = []
    drain = asyncio.create_task(_drain(proc.stderr, stderr))
    memory = PeakMemory(proc.pid, pss=True).__enter__()
    record: dict[str, Any] = {"runs": [], "idle_hovers": [], "errors": []}
    try:
        uri = root.as_uri()
        await client.initialize_async(t.InitializeParams(
            capabilities=capabilities(), process_id=os.getpid(), root_uri=uri,
            workspace_folders=[t.WorkspaceFolder(uri=uri, name=root.name)],
            initialization_options=settings))
        client.initialized(t.InitializedParams())
        await asyncio.sleep(0.5)  # the indexing progress begins
        await _indexed(client, 600)
        points = hover_points(root)
        _open(client, root, points)
        await _hover_pass(client, points, root, [])  # the first hover of a position warms jedi
        for _ in range(5):
            await _hover_pass(client, points, root, record["idle_hovers"])
        for i in range(runs + 1):  # the last one with hovers
            shutil.rmtree(out, ignore_errors=True)
            with_hovers = i == runs
            done = asyncio.Event()
            busy: list[float] = []
            if with_hovers:
                hovers = asyncio.create_task(_hover_loop(client, points, root, done, busy))
            started = time.perf_counter()
            result = await asyncio.wait_for(client.workspace_execute_command_async(
                t.ExecuteCommandParams(command="repodoc.generate", arguments=[])), 900)
            seconds = time.perf_counter() - started
            done.set()
            if with_hovers:
                await hovers
            written = result.get("written") if isinstance(result, dict) else None
            if with_hovers:
                print(f"server repodoc.generate with hovers: {seconds:.2f} s, {written} pages written, "
                      f"{len(busy)} hovers meanwhile (p95 {fmt_s(p95(busy)) if busy else '-'})", flush=True)
                record["with_hovers"] = {"seconds": seconds, "written": written, "busy_hovers": busy}
            else:
                print(f"server repodoc.generate #{i + 1}: {seconds:.2f} s, {written} pages written", flush=True)
                record["runs"].append({"seconds": seconds, "written": written})
        await asyncio.wait_for(client.shutdown_async(None), 60)
        client.exit(None)
        await asyncio.wait_for(proc.wait(), 60)
    except Exception as exc:
        record["errors"].append(f"{type(exc).__name__}: {exc}")
        await asyncio.sleep(0.5)
        record["stderr_tail"] = b"".join(stderr).decode("utf-8", "replace")[-4000:]
        print(record["stderr_tail"], flush=True)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    finally:
        memory.__exit__(None, None, None)
        record["peak_rss"], record["peak_pss"] = memory.peak, memory.peak_pss
        await asyncio.sleep(1.0)
        record["survivors"] = memory.end_survivors()
        drain.cancel()
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="folder of sources (default: the PyTorch corpus)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, help="worker processes (default: one per core)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    corpus = args.corpus or ensure_corpus()
    with scratch_folder("repodoc-bench-srvgen-", args.keep) as tmp:
        root = tmp / "ws" / corpus.name
        shutil.copytree(corpus, root)
        env = {**os.environ, "REPODOC_CACHE_DIR": str(tmp / "cache")}
        cli = cli_runs(root, tmp, env, args.runs, args.jobs)
        server = asyncio.run(server_session(root, tmp, env, args.runs, args.jobs))
    cli_s = median([r["seconds"] for r in cli])
    runs = server["runs"]
    srv_s = median([r["seconds"] for r in runs]) if runs else None
    ratio = srv_s / cli_s if srv_s else None
    idle = p95(server["idle_hovers"]) if server["idle_hovers"] else None
    busy_all = server.get("with_hovers", {}).get("busy_hovers", [])
    busy = p95(busy_all) if busy_all else None
    rows: list[list[object]] = [
        [f"CLI repodoc generate, warm cache, empty output (median of {len(cli)})", fmt_s(cli_s), "", ""],
        [f"server repodoc.generate, same (median of {len(runs)})", fmt_s(srv_s),
         f"{ratio:.2f}x the CLI" if ratio else "-", verdict(ratio <= TARGET if ratio else None)],
        ["peak RSS: CLI tree / server tree", f"{fmt_mb(max(r['peak_rss'] for r in cli))} / "
         f"{fmt_mb(server['peak_rss'])}", "", ""],
        ["peak PSS of the server tree (shared pages counted once)", fmt_mb(server["peak_pss"]), "", ""],
        [f"hover p95 idle / during one more command ({len(busy_all)} hovers)",
         f"{fmt_s(idle)} / {fmt_s(busy)}", f"{busy / idle:.2f}x" if busy and idle else "-", ""],
    ]
    print(table(rows, ["measure", "figure", "ratio", f"target <= {TARGET}x"]))
    for line in server["errors"] + [f"survivor: {s}" for s in server["survivors"]]:
        print(f"note: {line}")
    path = write_results("server-generate", {"jobs": args.jobs, "cli": cli, "server": server, "ratio": ratio,
                                             "hover_idle_p95": idle, "hover_busy_p95": busy})
    print(f"wrote {path}")
    return 0 if ratio is not None and not server["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
