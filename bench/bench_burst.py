"""A checkout that creates many files at once, as the server's regeneration sees it.

`python bench/bench_burst.py [--files 3000] [--new 1500] [--server] [--runs 1]`: a synthetic
workspace of FILES Python files importing each other, its tree generated; then NEW files are
created and their pages written as one batch (`generate.regenerate`, what the regeneration
process does with one didChangeWatchedFiles), against a full `repodoc generate` of the final
tree (a warm cache for the old files, as in the editor). Goal (issue 14): the batch takes no
longer.

`--server`: the same through a real `repodoc serve` over stdio. `repodoc.generate` writes the
tree of the old files; the NEW files are written and announced in one didChangeWatchedFiles;
1 s later a file is changed and `repodoc.generateFile` asked for it (a save that must be
answered), and a second one as soon as every page of the new files is on disk. The batch is timed
from the notification to the last page of the new files on disk (their modification times); the
first save by how long after that its answer came, the second from its request to its answer.
Goals: batch / full generate <= 1, the save answered within 1 s of the batch. Also the server's
RSS (and its process tree's) before and after the batch, and (`--settings-bursts`, 3) bursts of
settings changes after it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _module(i: int, files: int) -> str:
    imports = "".join(f"from pkg{j // 50}.mod{j} import func_{j}_0\n" for j in (i // 2, (i * 7) % files) if j != i)
    body = "".join(f"def func_{i}_{k}(x):\n    '''Doc {k}.'''\n    return x\n\n\n" for k in range(10))
    return f'"""Module {i}."""\n{imports}\n\n{body}class Thing{i}:\n    def method(self):\n        pass\n'


def _write(root: Path, numbers: range, files: int) -> list[str]:
    rels = []
    for i in numbers:
        rel = f"pkg{i // 50}/mod{i}.py"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_module(i, files))
        rels.append(rel)
    return rels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--new", type=int, default=1500)
    parser.add_argument("--server", action="store_true", help="through `repodoc serve` (see above)")
    parser.add_argument("--runs", type=int, default=1, help="--server: sessions (medians)")
    parser.add_argument("--settings-bursts", type=int, default=3, help="--server: settings bursts after the checkout")
    args = parser.parse_args()
    if args.server:
        asyncio.run(server_main(args.files, args.new, args.runs, args.settings_bursts))
        return
    from repodoc_lsp.config import load_settings
    from repodoc_lsp.pipeline.generate import generate, regenerate
    from repodoc_lsp.pipeline.runtime import CLI
    from repodoc_lsp.render.pages import Renderer
    from repodoc_lsp.store.workspace import Workspace

    scratch = Path(tempfile.mkdtemp(prefix="repodoc-burst-"))
    os.environ["REPODOC_CACHE_DIR"] = str(scratch / "cache")
    try:
        root = scratch / "ws"
        old = args.files - args.new
        _write(root, range(old), args.files)
        settings, _ = load_settings(root, {})
        ws = Workspace(root, settings, runtime=CLI)  # a single-threaded process, as the CLI
        generate(root, ws)
        new = _write(root, range(old, args.files), args.files)
        started = time.perf_counter()
        summary = regenerate(ws, new, Renderer(None))
        batch = time.perf_counter() - started
        shutil.rmtree(root / "docs")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
        full = time.perf_counter() - started
        print(f"{args.new} new files in a {args.files}-file workspace: batch {batch:.2f} s "
              f"({len(summary.written)} pages written), full generate of the final tree {full:.2f} s "
              f"(cold pages, warm cache): {batch / full:.2f}x")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _full_generate(root: Path) -> float:
    """A full `repodoc generate` of `root` into an empty folder (warm cache): seconds."""
    out = root.parent / "full-docs"
    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(root), "--out", str(out), "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    shutil.rmtree(out, ignore_errors=True)
    return seconds


async def server_session(scratch: Path, files: int, new: int, settings_bursts: int) -> dict[str, Any]:
    import psutil
    from _common import tree_rss
    from bench_lsp import BenchClient, _drain, _indexed, capabilities
    from lsprotocol import types as t

    root = scratch / "ws"
    old = files - new
    _write(root, range(old), files)
    client = BenchClient({})
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve", env=dict(os.environ), cwd=str(scratch))
    proc = client._server
    assert proc is not None
    stderr: list[bytes] = []
    drain = asyncio.ensure_future(_drain(proc.stderr, stderr))
    server = psutil.Process(proc.pid)
    try:
        await client.initialize_async(t.InitializeParams(
            capabilities=capabilities(), process_id=os.getpid(), root_uri=root.as_uri(),
            workspace_folders=[t.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
        client.initialized(t.InitializedParams())
        await asyncio.sleep(0.5)
        await _indexed(client, 600)
        await client.workspace_execute_command_async(t.ExecuteCommandParams(command="repodoc.generate"))
        rss_before, tree_before = server.memory_info().rss, tree_rss(server)[0]
        rels = _write(root, range(old, files), files)
        wall = time.time()
        client.workspace_did_change_watched_files(t.DidChangeWatchedFilesParams(changes=[
            t.FileEvent(uri=(root / rel).as_uri(), type=t.FileChangeType.Created) for rel in rels]))
        await asyncio.sleep(1.0)
        saved = root / "pkg0/mod1.py"
        saved.write_text(saved.read_text() + "\n\ndef saved_after_checkout():\n    pass\n")
        during = asyncio.ensure_future(client.workspace_execute_command_async(t.ExecuteCommandParams(
            command="repodoc.generateFile", arguments=[saved.as_uri()])))
        during_answered: list[float] = []
        during.add_done_callback(lambda _: during_answered.append(time.time()))
        # A second save as soon as the batch's last page is on disk: it meets the server taking
        # the batch's files (its workspace, graph and index) after the first save.
        pages = [root / "docs" / f"{rel}{kind}" for rel in rels for kind in ("_docs.md", "_kw.md")]
        while not all(p.exists() for p in pages):
            await asyncio.sleep(0.05)
        after = root / "pkg0/mod2.py"
        after.write_text(after.read_text() + "\n\ndef saved_at_the_end():\n    pass\n")
        sent_after = time.time()
        answer_after: Any = await client.workspace_execute_command_async(t.ExecuteCommandParams(
            command="repodoc.generateFile", arguments=[after.as_uri()]))
        after_answered = time.time()
        answer: Any = await during
        assert any(p.endswith("mod1.py_kw.md") for p in answer["written"]), answer
        assert any(p.endswith("mod2.py_kw.md") for p in answer_after["written"]), answer_after
        batch_end = max(p.stat().st_mtime for p in pages)
        # every page the batch wrote (folder pages follow the files'), not those the saves wrote
        by_saves = {*answer["written"], *answer_after["written"]}  # absolute paths
        last_page = max(p.stat().st_mtime for p in (root / "docs").rglob("*.md") if str(p) not in by_saves)
        rss_after, tree_after = server.memory_info().rss, tree_rss(server)[0]
        settings = [await _settings_burst(client, server, n) for n in range(settings_bursts)]
        await asyncio.wait_for(client.shutdown_async(None), 30)
        client.exit(None)
        await asyncio.wait_for(proc.wait(), 30)
    finally:
        drain.cancel()
        await client.stop()
    full = _full_generate(root)
    return {"batch": batch_end - wall, "save_after_batch": during_answered[0] - batch_end, "full": full,
            "save_at_end": after_answered - sent_after, "sent_at_end": sent_after - batch_end,
            "save_after_last_page": during_answered[0] - last_page,
            "rss_before": rss_before, "rss_after": rss_after, "tree_before": tree_before, "tree_after": tree_after,
            "settings": settings}


async def _settings_burst(client: Any, server: Any, n: int) -> dict[str, float]:
    """20 didChangeConfiguration 20 ms apart, each with another maxFileBytes (a setting that needs
    a rescan), as a settings sync or a slider does; waits for the rescan's indexing to end.
    The server's RSS before (idle), at its peak and after (seconds later)."""
    from lsprotocol import types as t

    def indexings() -> list[str]:
        return [tok for tok, title in client.progress_titles.items() if "index" in title.lower()]

    def ended() -> int:
        return sum(1 for _, tok, kind in client.progress_log if kind == "end" and tok in indexings())

    before, ends, peak = server.memory_info().rss, ended(), [0]

    async def sample() -> None:
        while True:
            peak[0] = max(peak[0], server.memory_info().rss)
            await asyncio.sleep(0.05)

    sampler = asyncio.ensure_future(sample())
    started = time.perf_counter()
    for i in range(20):
        client.workspace_did_change_configuration(t.DidChangeConfigurationParams(
            settings={"repodoc": {"maxFileBytes": 1_000_000 - 100 * n - i}}))
        await asyncio.sleep(0.02)
    while ended() <= ends and time.perf_counter() - started < 600:
        await asyncio.sleep(0.05)
    rescans = len(indexings())
    await asyncio.sleep(2.0)  # what stays
    sampler.cancel()
    after = server.memory_info().rss
    print(f"  settings burst {n + 1}: RSS idle {before / 2**20:.0f} MB, peak {peak[0] / 2**20:.0f} MB "
          f"({peak[0] / before:.2f}x), after {after / 2**20:.0f} MB ({after / before:.2f}x); "
          f"{time.perf_counter() - started - 2:.1f} s to the end of the rescan; indexing runs so far: {rescans}",
          flush=True)
    return {"idle": before, "peak": peak[0], "after": after}


async def server_main(files: int, new: int, runs: int, settings_bursts: int) -> None:
    from _common import median

    results = []
    for run in range(runs):
        scratch = Path(tempfile.mkdtemp(prefix="repodoc-burst-"))
        os.environ["REPODOC_CACHE_DIR"] = str(scratch / "cache")
        try:
            r = await server_session(scratch, files, new, settings_bursts)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        results.append(r)
        print(f"run {run + 1}: batch {r['batch']:.2f} s, full generate {r['full']:.2f} s "
              f"({r['batch'] / r['full']:.2f}x); save answered {r['save_after_batch']:.2f} s after the batch "
              f"({r['save_after_last_page']:.2f} s after its last page, folder pages included); "
              f"a save sent {r['sent_at_end']:.2f} s after the batch answered in {r['save_at_end']:.2f} s; "
              f"server RSS {r['rss_before'] / 2**20:.0f} -> {r['rss_after'] / 2**20:.0f} MB, "
              f"tree {r['tree_before'] / 2**20:.0f} -> {r['tree_after'] / 2**20:.0f} MB", flush=True)
    batch, full = median([r["batch"] for r in results]), median([r["full"] for r in results])
    save = median([r["save_after_batch"] for r in results])
    at_end = median([r["save_at_end"] for r in results])
    last_page = median([r["save_after_last_page"] for r in results])
    if settings_bursts:
        first, last = results[0]["settings"][0], results[0]["settings"][-1]
        print(f"settings bursts (20 changes each): peak {first['peak'] / first['idle']:.2f}x the idle server, "
              f"after the last {last['after'] / first['idle']:.2f}x the idle server before the first")
    print(f"server, {new} new files in a {files}-file workspace (median of {runs}): batch {batch:.2f} s / "
          f"full generate {full:.2f} s = {batch / full:.2f}x (goal <= 1); save answered {save:.2f} s after "
          f"the batch's file pages (goal <= 1 s), {last_page:.2f} s after its last page; a save sent as the "
          f"file pages were done answered in {at_end:.2f} s")


if __name__ == "__main__":
    main()
