"""No process outlives the server: worker processes (the analysis pool on a fork server,
the regeneration process) are gone soon after `exit`, and neither they nor the server keep the client's pipes open."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers import regen_processes
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from repodoc_lsp.pipeline.runtime import BACKGROUND_NICE


def _tree(pid: int) -> set[int]:
    try:
        return {pid} | {c.pid for c in psutil.Process(pid).children(recursive=True)}
    except psutil.Error:
        return set()


def _workers_nice(server_pid: int) -> dict[int, int]:
    """Nice values of the analysis workers: the children of the server's fork server."""
    found: dict[int, int] = {}
    try:
        for child in psutil.Process(server_pid).children():
            if "forkserver" in " ".join(child.cmdline()):
                found.update({w.pid: w.nice() for w in child.children()})
    except psutil.Error:
        pass
    return found


async def _started(tmp_path: Path, root: Path, **env: str) -> tuple[LanguageClient, Any]:
    """`repodoc serve` on `root` (its cache in `tmp_path`), initialised; its process."""
    client = LanguageClient("process-test", "1")
    client.feature(types.WORKSPACE_CONFIGURATION)(lambda params: [{} for _ in params.items])
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve",
                          env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "cache"), **env})
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities(),
                                                         root_uri=root.as_uri()))
    client.initialized(types.InitializedParams())
    return client, client._server  # type: ignore[attr-defined]


async def test_exit_leaves_no_process(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for i in range(120):  # enough files for the parallel analysis pool, and work enough to see it
        path = root / f"pkg{i // 30}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def func_{i}():\n    pass\n" + "".join(f"def g{j}(x):\n    return x\n" for j in range(300)))
    (root / "docs").mkdir()  # a docs tree exists (its manifest), so a save writes pages
    (root / "docs/.repodoc-manifest.json").write_text('{"pages": {}}')
    temporary = tmp_path / "tmp"  # the system's temporary folder, for the server and its processes
    temporary.mkdir()
    client, server = await _started(tmp_path, root, TMPDIR=str(temporary))
    seen = _tree(server.pid)
    workers: dict[int, int] = {}

    async def watch() -> None:  # meanwhile: the first symbol search waits for the first index
        while True:
            seen.update(_tree(server.pid))
            workers.update(_workers_nice(server.pid))
            await asyncio.sleep(0.01)

    watcher = asyncio.ensure_future(watch())
    for _ in range(400):
        if await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="func_119")):
            break
        await asyncio.sleep(0.025)
    watcher.cancel()
    seen |= _tree(server.pid)
    assert len(seen) > 1, "the analysis pool was not used: the test proves nothing"
    # the analysis workers run below the server's requests (hovers during indexing)
    background = min(19, psutil.Process(server.pid).nice() + BACKGROUND_NICE)
    assert workers and all(n == background for n in workers.values()), (workers, background)
    # A save starts the regeneration process; exit comes while it may still be loading.
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=(root / "pkg0/mod0.py").as_uri())))
    for _ in range(200):
        regen = regen_processes(server.pid)
        if regen:
            break
        await asyncio.sleep(0.05)
    assert regen, "no regeneration process: the test proves less than it says"
    for _ in range(100):  # it lowers its own priority first thing
        if all(p.nice() == background for p in regen):
            break
        await asyncio.sleep(0.05)
    assert all(p.nice() == background for p in regen)
    seen |= {p.pid for p in regen}
    await asyncio.wait_for(client.shutdown_async(None), 10)
    client.exit(None)
    try:
        await asyncio.wait_for(server.wait(), 5)  # also waits for the server's pipes to close
    except TimeoutError:
        raise AssertionError("5 s after exit a process still holds the client's pipes") from None
    assert server.returncode == 0
    deadline = time.monotonic() + 5
    while (alive := [p for p in seen if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]) \
            and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not alive, [psutil.Process(p).cmdline()[:4] for p in alive]
    # nor any file or folder (multiprocessing's `pymp-*`, which an exit by os._exit left)
    assert not list(temporary.iterdir())
    await client.stop()


# -- a regeneration process that stops answering (SIGSTOP: stopped, swapping, a frozen cgroup) ----


def _files(root: Path, count: int, body: int = 1) -> None:
    for i in range(count):
        path = root / f"pkg{i // 30}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'"""Module {i}."""\n' + "".join(f"def func_{i}_{j}():\n    pass\n" for j in range(body)))


async def _session(tmp_path: Path, root: Path, **env: str) -> tuple[LanguageClient, Any]:
    """A server on `root`, indexed (its first symbols answered)."""
    client, server = await _started(tmp_path, root, **env)
    for _ in range(400):
        if await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="func_1_0")):
            break
        await asyncio.sleep(0.05)
    return client, server


async def _end(client: LanguageClient, server: Any, seen: set[int]) -> None:
    """Shut the session down; no process ever seen is left."""
    seen |= _tree(server.pid)
    await asyncio.wait_for(client.shutdown_async(None), 10)
    client.exit(None)
    await asyncio.wait_for(server.wait(), 10)
    await client.stop()
    deadline = time.monotonic() + 5
    while (alive := [p for p in seen if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]) \
            and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    left = [psutil.Process(p).cmdline()[:4] for p in alive]
    for pid in alive:  # not left behind by a failed test
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()
    assert not left, left


async def _until(predicate: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)
    return value


def _gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def test_a_stopped_regeneration_process_is_replaced_and_the_save_written(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    _files(root, 60)
    client, server = await _session(tmp_path, root, REPODOC_PROCESS_TIMEOUT="2")
    seen: set[int] = set()
    try:
        await asyncio.wait_for(client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="repodoc.generate")), 60)  # the process writes the tree
        [stuck] = regen_processes(server.pid)
        seen.add(stuck.pid)
        stuck.suspend()  # SIGSTOP
        mod, kw = root / "pkg0/mod1.py", root / "docs/pkg0/mod1.py_kw.md"
        mod.write_text("def after_stop():\n    pass\n")
        started = time.monotonic()
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=mod.as_uri())))
        await _until(lambda: "**`after_stop`**" in kw.read_text(), 30)  # written by the server
        waited = time.monotonic() - started
        assert _gone(stuck), "the stopped process was not killed"
        fresh = await _until(lambda: [p for p in regen_processes(server.pid) if p.pid != stuck.pid], 20)
        seen |= {p.pid for p in fresh}
        assert waited < 2 + 10, waited  # the deadline, then the server's own write
        mod.write_text("def with_new_process():\n    pass\n")
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=mod.as_uri())))
        await _until(lambda: "**`with_new_process`**" in kw.read_text(), 30)
    finally:
        await _end(client, server, seen)


async def test_cancelling_a_generation_that_waits_on_a_stopped_process(tmp_path: Path) -> None:
    """The regeneration process SIGSTOPped while it writes the tree for `repodoc.generate`, then
    `$/cancelRequest`: the request is answered at once, and the root's thread stops waiting on the
    process at the cancel's deadline (CANCEL_SECONDS, 5 s), not at the silence deadline (20 s
    here): it kills the process, and a command that runs on the thread is answered. Checked by
    order and by the gap between the two deadlines, not by how long the machine takes to answer
    (a bound of 10 s on the whole failed under load 12+)."""
    silence = 20.0  # REPODOC_PROCESS_TIMEOUT: a stopped process is killed this long after its last message
    cancel_deadline = min(5.0, silence)  # regen_process.CANCEL_SECONDS with that setting
    root = tmp_path / "ws"
    _files(root, 400, body=30)
    client, server = await _session(tmp_path, root, REPODOC_PROCESS_TIMEOUT=str(silence))
    seen: set[int] = set()
    try:
        request = client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND, types.ExecuteCommandParams(command="repodoc.generate"), msg_id=77)

        def writing() -> Any:  # its forked workers are writing pages
            return next((p for p in regen_processes(server.pid) if p.children()), None)

        process = await _until(writing, 120)  # a bound for hangs only (the replica loads first)
        seen |= _tree(process.pid)
        process.suspend()  # SIGSTOP while the root's thread waits for its next message
        started = time.monotonic()
        client.protocol.notify("$/cancelRequest", types.CancelParams(id=77))
        with pytest.raises(JsonRpcException):  # RequestCancelled
            await asyncio.wait_for(request, 30)
        # Answered before the thread gave up waiting: the answer does not wait for the thread.
        assert not _gone(process), "the cancel was answered only once the stopped process was killed"
        await _until(lambda: _gone(process), 2 * silence)  # killed by the server, when its thread stops waiting
        killed = time.monotonic() - started
        # At the cancel's deadline (5 s), with 10 s for a loaded machine; the silence deadline
        # (what frees the thread if the cancel does not reach its wait) is 20 s after the last message.
        assert killed < cancel_deadline + 10 < silence - 4, killed
        # The root's thread is free again: a command that runs on it is answered.
        mod = root / "pkg0/mod1.py"
        mod.write_text("def after_cancel():\n    pass\n")
        done = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="repodoc.generateFile", arguments=[mod.as_uri()])), 60)  # a bound for hangs only
        assert str(root / "docs/pkg0/mod1.py_kw.md") in done["written"]
    finally:
        await _end(client, server, seen)


@pytest.mark.parametrize("delay", [0.0, 2.0])
def test_serve_in_a_terminal_ends_on_the_first_ctrl_c(tmp_path: Path, delay: float) -> None:
    """`repodoc serve` started by hand in a terminal: one Ctrl-C ends it (exit 130, no traceback),
    whether it comes while the server starts (its modules still loading) or while it waits for
    input. The first Ctrl-C used to be swallowed by asyncio while pygls' reader thread waited on
    stdin. `delay` counts from the moment repodoc's own modules load (the interpreter says so:
    -X importtime); a fixed 0.5 s from the start came before the interpreter ran any of repodoc's
    code on a loaded machine (CI: a traceback of Python's own start, which no program can catch)."""
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:  # the child: the server, its stdin a terminal
        os.chdir(tmp_path)
        os.environ["PYTHONPROFILEIMPORTTIME"] = "1"  # a line on stderr as each module is imported
        os.execv(sys.executable, [sys.executable, "-m", "repodoc_lsp", "serve"])
    output = b""

    def read(seconds: float) -> None:
        nonlocal output
        if select.select([fd], [], [], seconds)[0]:
            with contextlib.suppress(OSError):
                output += os.read(fd, 65536)

    try:
        deadline = time.monotonic() + 60  # a bound for hangs only
        while b"repodoc_lsp.config" not in output and time.monotonic() < deadline:  # imported by the CLI
            read(0.05)
        assert b"repodoc_lsp.config" in output, output[-2000:]
        started = time.monotonic()
        while time.monotonic() - started < delay:
            read(0.05)
        os.write(fd, b"\x03")  # the terminal turns it into SIGINT for the foreground process
        deadline = time.monotonic() + 10
        status = None
        while status is None and time.monotonic() < deadline:
            read(0.05)
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
        assert status == 130, (status, output)
        assert b"Traceback" not in output, output
    finally:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)


async def test_a_render_worker_killed_during_generate(tmp_path: Path) -> None:
    """`repodoc.generate` while one of the regeneration process's render workers (under its fork
    server) is SIGKILLed (the out-of-memory killer): the generation completes with every page, no
    process is left. The workers run at the regeneration process's priority, not lowered again
    (before: nice 19, starved by any busy program)."""
    root = tmp_path / "ws"
    _files(root, 400, body=30)
    client, server = await _session(tmp_path, root)
    seen: set[int] = set()
    try:
        request = asyncio.ensure_future(client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="repodoc.generate")))
        nice: dict[str, int] = {}

        def a_worker() -> Any:
            for process in regen_processes(server.pid):
                with contextlib.suppress(psutil.Error):
                    below = process.children(recursive=True)
                    if workers := [w for w in below if w.ppid() != process.pid]:
                        seen.update({process.pid, *(w.pid for w in below)})
                        nice.update(process=process.nice(), worker=workers[0].nice())
                        return workers[0]
            return None

        worker = await _until(a_worker, 60)
        await asyncio.sleep(0.1)  # past its initializer, where a worker of the server's runtime lowers itself
        nice["worker"] = worker.nice()
        worker.kill()
        assert nice["worker"] == nice["process"] == min(19, psutil.Process(server.pid).nice() + BACKGROUND_NICE), nice
        result = await asyncio.wait_for(request, 60)
        assert result["cancelled"] is False and result["errors"] == []
        assert result["written"] + result["unchanged"] == 2 * 400 + 2 * 15 + 1  # every page, and llms.txt
        assert len(list((root / "docs").rglob("*.md"))) == 2 * 400 + 2 * 15
    finally:
        await _end(client, server, seen)


async def test_exit_with_a_stopped_regeneration_process(tmp_path: Path) -> None:
    """The regeneration process SIGSTOPped (stopped, a frozen cgroup) when the session ends: the
    server kills it after its exit deadline and waits for it, so no process is left in /proc, not
    even unreaped (before: it stayed stopped for ever, a child of nobody)."""
    root = tmp_path / "ws"
    _files(root, 60)
    client, server = await _session(tmp_path, root)
    await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="repodoc.generate")), 60)  # the process writes the tree
    [stopped] = regen_processes(server.pid)
    children = [p for p in psutil.Process(server.pid).children(recursive=True)]
    stopped.suspend()  # SIGSTOP
    await asyncio.wait_for(client.shutdown_async(None), 10)
    client.exit(None)
    try:
        await asyncio.wait_for(server.wait(), 10)  # the deadline (2 s) and the kill, with room
    except TimeoutError:
        raise AssertionError("the server did not exit within 10 s") from None
    finally:
        await client.stop()
    assert server.returncode == 0
    # Its children are gone from /proc: ended and waited for by the server itself.
    left = [(p.pid, p.status()) for p in children if os.path.exists(f"/proc/{p.pid}") and p.is_running()]
    for process in children:  # not left behind by a failed test
        with contextlib.suppress(psutil.Error):
            process.kill()
    assert not left, left
    assert stopped.pid in {p.pid for p in children}


# -- a checkout: one didChangeWatchedFiles with 1,500 files created, then a save ------------------


def _checkout_module(i: int, files: int) -> str:
    imports = "".join(f"from pkg{j // 50}.mod{j} import func_{j}_0\n" for j in (i // 2, (i * 7) % files) if j != i)
    return f'"""Module {i}."""\n{imports}\n\ndef func_{i}_0(x):\n    return x\n\n\nclass Thing{i}:\n    pass\n'


async def test_a_checkout_of_1500_files_then_a_save(tmp_path: Path) -> None:
    """A `git checkout` creates 1,500 files (one didChangeWatchedFiles), then a file is saved and
    another regenerated by request while the batch runs: both are written after the batch (the
    answer comes once every page of the checkout is on disk), the tree equals a fresh
    `repodoc generate` of the final workspace byte for byte, and no process is left."""
    from edits import differences, tree

    root, old, files = tmp_path / "ws", 300, 1800
    for i in range(files):
        path = root / f"pkg{i // 50}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        if i < old:
            path.write_text(_checkout_module(i, old))  # imports only files that exist yet
    client, server = await _session(tmp_path, root)
    seen: set[int] = set()
    try:
        await asyncio.wait_for(client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="repodoc.generate")), 120)
        seen |= _tree(server.pid)
        created = []
        for i in range(old, files):
            path = root / f"pkg{i // 50}" / f"mod{i}.py"
            path.write_text(_checkout_module(i, files))  # old files and each other
            created.append(types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Created))
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=created))
        await asyncio.sleep(1.0)  # the batch has begun: the save below is not part of it
        saved, asked = root / "pkg0/mod1.py", root / "pkg0/mod2.py"
        saved.write_text(saved.read_text() + "\n\ndef saved_after_checkout():\n    pass\n")
        asked.write_text(asked.read_text() + "\n\ndef asked_after_checkout():\n    pass\n")
        client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=saved.as_uri())))
        answer = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="repodoc.generateFile", arguments=[asked.as_uri()])), 300)  # a generous bound: hangs only
        seen |= _tree(server.pid)
        missing = [i for i in range(old, files) if not (root / f"docs/pkg{i // 50}/mod{i}.py_kw.md").exists()]
        assert missing == [], f"answered before the batch was written: {len(missing)} files without pages"
        assert str(root / "docs/pkg0/mod2.py_kw.md") in answer["written"]
        assert "**`asked_after_checkout`**" in (root / "docs/pkg0/mod2.py_kw.md").read_text()
        await _until(lambda: "**`saved_after_checkout`**" in (root / "docs/pkg0/mod1.py_kw.md").read_text(), 60)
        copy = tmp_path / "fresh" / "ws"
        shutil.copytree(root, copy, ignore=lambda folder, names: ["docs"] if Path(folder) == root else [])
        proc = subprocess.run([sys.executable, "-m", "repodoc_lsp", "generate", str(copy), "--no-cache", "--quiet"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        fresh, deadline = tree(copy / "docs"), time.monotonic() + 60  # the saved file's folder pages may follow
        while (diff := differences(tree(root / "docs"), fresh)) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert diff == [], diff[:20]
    finally:
        await _end(client, server, seen)


async def test_a_server_killed_while_it_indexes_leaves_no_process(tmp_path: Path) -> None:
    """The server SIGKILLed while its analysis workers run (the out-of-memory killer): the fork
    server and its workers end too (before: each worker held the fork server's "alive" pipe, so
    neither noticed, and they waited for work for ever)."""
    root = tmp_path / "ws"
    _files(root, 400, body=60)
    client, server = await _started(tmp_path, root)
    workers = await _until(lambda: _workers_nice(server.pid), 60)  # the pool is analysing
    seen = [psutil.Process(p) for p in _tree(server.pid) - {server.pid}]
    assert len(workers) >= 1 and len(seen) >= 2, seen  # the fork server and its workers
    server.kill()
    await asyncio.wait_for(server.wait(), 10)
    with contextlib.suppress(Exception):  # the pipes may be held by what is left: not waited for
        await asyncio.wait_for(client.stop(), 5)
    deadline = time.monotonic() + 20  # the fork server looks for its parent once a second
    while (alive := [p for p in seen if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]) \
            and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    left = [(p.pid, " ".join(p.cmdline())[:80]) for p in alive]
    for process in alive:  # not left behind by a failed test
        with contextlib.suppress(psutil.Error):
            process.kill()
    assert not left, left
