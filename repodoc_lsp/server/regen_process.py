"""Regeneration on save in a process of its own.

The server's interpreter answers hovers with jedi. Regeneration (analysis of the saved
file, rendering, writing, the manifest) on one of its threads shared the interpreter lock
with them: every hand-over between threads (each line pygls reads from stdin, each file
jedi opens) waited for the busy thread's switch interval, and on PyTorch a hover that met
a regeneration took 4 to 10 times its idle time. This process keeps a replica of the
workspace (facts from the shared cache: about 90 MB on PyTorch) and writes the pages; the
server then updates its own workspace from the cache the process filled, without
analysing the file a second time.

The channel is the process's stdin and stdout (pickles; nothing else is read from or
written to them). When its stdin closes (the server exits or dies) the process finishes
the regeneration under way, if any, and ends; it holds none of the server's pipes (the
LSP stdio) open. It runs at a lower scheduling priority than the server.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import IO, Any

from repodoc_lsp.generate import Summary
from repodoc_lsp.workspace import Workspace

log = logging.getLogger(__name__)
CLOSE_WAIT_SECONDS = 1.0  # for a process that failed, then it is killed
# Not `python -m`: that puts the working folder (often the workspace, which may have a `types.py`
# or a `signal/`) first on sys.path. `-c` puts "" there: dropped before anything is imported,
# and the folder this package is imported from goes first instead.
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent.parent)
_BOOT = (f"import sys; sys.path[:] = [{_PACKAGE_PARENT!r}] + [p for p in sys.path if p != '']; "
         "from repodoc_lsp.server.regen_process import main; main()")
NICE = 10


class RegenProcessError(Exception):
    """The process could not start, or ended: the caller regenerates in its own process."""


class RegenProcess:
    """The server's side: start the process, send it the files to regenerate, stop it."""

    def __init__(self, ws: Workspace) -> None:
        self._lock = threading.Lock()  # one request at a time (the root's thread), or close
        self._ready = False
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-c", _BOOT],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            close_fds=True)
        # It loads the server's view of the workspace while the server goes on; the view is
        # written by a thread, as the process reads it only after its imports (a quarter second).
        self._sender: threading.Thread | None = threading.Thread(
            target=self._send, args=((ws.root, ws.settings, ws.state()),), kwargs={"quiet": True},
            name="repodoc-regen-start", daemon=True)
        self._sender.start()

    def _send(self, message: Any, quiet: bool = False) -> None:
        """Write `message` to the process (`quiet`: a failure shows at the next exchange)."""
        proc = self._proc
        try:
            if proc is None or proc.stdin is None:
                raise ValueError("closed")
            pickle.dump(message, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.flush()
        except (OSError, ValueError):
            if not quiet:
                raise

    def _receive(self) -> Any:
        assert self._proc is not None and self._proc.stdout is not None
        return pickle.load(self._proc.stdout)

    def ready(self, wait: bool = False) -> bool:
        """True once the process has loaded the workspace (`wait`: block until then)."""
        with self._lock:
            if not self._ready:
                proc = self._proc
                if proc is None or proc.stdout is None:
                    raise RegenProcessError("the regeneration process is closed")
                if not wait and not select.select([proc.stdout], [], [], 0)[0]:
                    return False
                status, value = self._exchange(None)
                if status != "ready":
                    raise RegenProcessError(f"the regeneration process did not start:\n{value}")
                self._ready = True
            return True

    def regenerate(self, rels: list[str]) -> Summary:
        """Regenerate the pages of `rels` (as `generate.regenerate` does) in the process."""
        self.ready(wait=True)
        with self._lock:
            status, value = self._exchange(rels)
        if status != "ok" or not isinstance(value, Summary):
            raise RegenProcessError(f"regeneration failed in its process:\n{value}")
        return value

    def _exchange(self, message: Any) -> tuple[str, Any]:
        """Send `message` (None: nothing) and read the answer; the lock is held."""
        if self._proc is None:
            raise RegenProcessError("the regeneration process is closed")
        if self._sender is not None:  # the first message is written (the process answers it)
            self._sender.join()
            self._sender = None
        try:
            if message is not None:
                self._send(message)
            status, value = self._receive()
        except (OSError, EOFError, pickle.UnpicklingError, ValueError) as exc:
            self._stop()
            raise RegenProcessError(f"the regeneration process ended: {exc!r}") from exc
        return str(status), value

    def close(self) -> None:
        """End the process without waiting: its stdin closes, so it ends once the regeneration
        under way (if any) is written, as the server exits; still starting, it is killed."""
        proc = self._proc
        if proc is None:
            return
        if self._sender is not None and self._sender.is_alive():
            with contextlib.suppress(OSError):
                proc.kill()
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()

    def _stop(self) -> None:
        """End a process that failed: close its pipes, wait a little, kill it."""
        proc = self._proc
        if proc is None:
            return
        self.close()
        self._proc = None
        with contextlib.suppress(OSError, ValueError):
            if proc.stdout is not None:
                proc.stdout.close()
        try:
            proc.wait(CLOSE_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# -- the process's side -------------------------------------------------------------------


def _serve(channel_in: IO[bytes], channel_out: IO[bytes]) -> None:
    from repodoc_lsp.generate import regenerate
    from repodoc_lsp.render import Renderer
    from repodoc_lsp.workspace import collect_less
    from repodoc_lsp.writer import Writer

    def reply(status: str, value: Any) -> None:
        pickle.dump((status, value), channel_out, protocol=pickle.HIGHEST_PROTOCOL)
        channel_out.flush()

    try:
        root, settings, state = pickle.load(channel_in)
    except EOFError:
        return
    try:
        collect_less()
        ws = Workspace(root, settings)
        ws.restore(state)  # the server's view, facts from the cache its analysis filled
        ws.facts.load_all()  # page renders need them: load them before the first save
        renderer = Renderer(settings.templates or None)
    except Exception:
        reply("error", traceback.format_exc())
        return
    reply("ready", None)
    while True:
        try:
            rels = pickle.load(channel_in)
        except EOFError:
            return
        try:
            # The manifest as it is on disk now (the server may have written the whole tree).
            reply("ok", regenerate(ws, rels, Writer(ws.out), renderer))
        except Exception:
            reply("error", traceback.format_exc())


def main() -> None:
    channel_in = sys.stdin.buffer
    channel_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print cannot corrupt the channel
    with contextlib.suppress(OSError):
        os.nice(NICE)  # background work: the scheduler gives a core to the server's requests first
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        _serve(channel_in, channel_out)
    os._exit(0)  # nothing left to write: skip freeing the replica (a tenth of a second on PyTorch)

