"""The page pipeline (`generate.run`) in a process of its own: pages of saved files, and the whole tree.

The server's interpreter answers hovers with jedi. Regeneration (analysis of the saved
file, rendering, writing, the manifest) on one of its threads shared the interpreter lock
with them: every hand-over between threads (each line pygls reads from stdin, each file
jedi opens) waited for the busy thread's switch interval, and on a large workspace a hover
that met a regeneration took several times its idle time (bench/README.md). This process keeps a replica of the
workspace (facts from the shared cache) and writes the pages; the
server then updates its own workspace from the cache the process filled, without
analysing the file a second time. The whole tree (`repodoc.generate`) is written here too,
after the server's scan: this process has no threads, so it renders with forked workers
as the CLI does (the server's interpreter cannot fork). Each request is a `generate.Job`,
run by the same pipeline as in the CLI and in the server's fallback (`worker.py`), with the
same contract: progress and heartbeats come back as it goes, a cancel goes in, the summary
comes back, and the run's own failures (`RUN_ERRORS`) are raised in the server as they were
raised here.

The channel is the process's stdin and stdout: length-prefixed pickles, read with plain
`os.read` so that `select` tells exactly whether a message is waiting (nothing else is
read from or written to them). When its stdin closes (the server exits or dies) the
process finishes the regeneration under way, if any, stops a whole-tree generation at
the next page, and ends; it holds none of the server's pipes (the LSP stdio) open. It
runs at a lower scheduling priority than the server.

Every wait of the server on it has a deadline: the process sends a message at least every
HEARTBEAT_SECONDS while it works, and one that sends nothing for `TIMEOUT_SECONDS`
(stopped, swapping, a frozen cgroup) is killed; the caller writes the pages itself and the
next save starts a new process. A cancelled generation is answered within CANCEL_SECONDS,
or the process is killed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from repodoc_lsp.envlimits import env_seconds
from repodoc_lsp.pipeline.runtime import Runtime
from repodoc_lsp.store.workspace import CancelToken, FileState, ProgressFn, Workspace

if TYPE_CHECKING:  # the pipeline loads with the first job (`repodoc mcp` writes no page)
    from repodoc_lsp.pipeline.generate import Job, Summary

log = logging.getLogger(__name__)
stderr_log = logging.getLogger(f"{__name__}.stderr")  # what the process writes on its stderr
MAX_LINE = 4096  # a longer line is logged in pieces
CLOSE_WAIT_SECONDS = 1.0  # for a process that failed, then it is killed
# Not `python -m`: that puts the working folder (often the workspace, which may have a `types.py`
# or a `signal/`) first on sys.path. `-c` puts "" there: dropped before anything is imported,
# and the folder this package is imported from goes first instead.
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent.parent)
_BOOT = (f"import sys; sys.path[:] = [{_PACKAGE_PARENT!r}] + [p for p in sys.path if p != '']; "
         "from repodoc_lsp.server.regen_process import main; main()")
POLL_SECONDS = 0.1  # how often a waiting server looks at the cancel token
HEARTBEAT_SECONDS = 1.0  # a working process says so at least this often
TIMEOUT_SECONDS = env_seconds("REPODOC_PROCESS_TIMEOUT", 30.0, minimum=0.5)  # silent this long: taken for stuck
READY_SECONDS = max(120.0, TIMEOUT_SECONDS)  # loading the replica (seconds on a large workspace)
CANCEL_SECONDS = min(5.0, TIMEOUT_SECONDS)  # a cancelled generation ends within this, or is killed
_PIPE_BUF = 4096  # a write of this much to a pipe that select calls writable does not block
_HEADER = struct.Struct("!Q")  # the length of the pickle that follows
CANCEL = ("cancel",)  # the message besides a `Job`


def put(fd: int, message: Any, deadline: float | None = None) -> None:
    """Write one message to the file descriptor `fd` (TimeoutError: not all of it was taken
    by the `deadline`, a `time.monotonic()` value)."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        if deadline is None:
            view = view[os.write(fd, view):]
            continue
        if not select.select([], [fd], [], max(0.0, deadline - time.monotonic()))[1]:
            raise TimeoutError("the other end takes nothing")
        view = view[os.write(fd, view[:_PIPE_BUF]):]


def get(fd: int, deadline: float | None = None) -> Any:
    """Read one message from `fd` (EOFError: the other end closed it; TimeoutError: not all of
    it came by the `deadline`)."""
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size, deadline))
    return pickle.loads(_read_exactly(fd, size, deadline))


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, left = [], size
    while left:
        if deadline is not None and not waiting(fd, max(0.0, deadline - time.monotonic())):
            raise TimeoutError("the other end says nothing")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the channel closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def waiting(fd: int, timeout: float = 0) -> bool:
    """True when a message (or the end of the channel) can be read from `fd`."""
    return bool(select.select([fd], [], [], timeout)[0])


def _relay(stream: IO[bytes]) -> None:
    """Log each line the process writes on its stderr (warnings such as a damaged manifest, as
    the CLI prints them; a traceback if it fails) in the server, until every writer closes it."""
    with contextlib.suppress(OSError, ValueError), stream:
        while raw := stream.readline(MAX_LINE):
            if line := raw.decode("utf-8", "replace").rstrip():
                stderr_log.warning("%s", line)


class RegenProcessError(Exception):
    """The process could not start, or ended: the caller runs the pipeline in its own process."""


@dataclass(frozen=True, slots=True)
class Ran:
    """What a job in the process gave: its summary and, for files changed on disk, each file as
    the replica now holds it, its facts in the cache (the server takes them without reading or
    analysing them again)."""

    summary: Summary
    states: dict[str, FileState] | None


class RegenProcess:
    """The server's side: start the process, send it jobs, stop it."""

    def __init__(self, ws: Workspace) -> None:
        self._lock = threading.Lock()  # one request at a time (the root's thread), or close
        self._ready = False
        self._cancel_sent: float | None = None  # when a CANCEL of the generation under way was sent
        self._proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-c", _BOOT],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            close_fds=True)
        if self._proc.stderr is not None:  # its warnings (a damaged manifest) and failures: the server's log
            threading.Thread(target=_relay, args=(self._proc.stderr,), name="repodoc-regen-stderr",
                             daemon=True).start()
        # It loads the server's view of the workspace while the server goes on; the view is
        # written by a thread, as the process reads it only after its imports (a quarter second).
        self._sender: threading.Thread | None = threading.Thread(
            target=self._send_view, args=((ws.root, ws.settings, ws.state()),),
            name="repodoc-regen-start", daemon=True)
        self._sender.start()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _fds(self) -> tuple[int, int]:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None or proc.stdout.closed:
            raise RegenProcessError("the regeneration process is closed")
        return proc.stdin.fileno(), proc.stdout.fileno()

    def _send_view(self, view: tuple[Path, Any, Any]) -> None:
        """Write the workspace view to the process (a failure shows at the first exchange)."""
        with contextlib.suppress(OSError, ValueError, RegenProcessError):
            put(self._fds()[0], view)

    def ready(self, wait: bool = False, cancel: CancelToken | None = None) -> bool:
        """True once the process has loaded the workspace (`wait`: block until then, until
        `cancel` is set, or READY_SECONDS: then RegenProcessError)."""
        with self._lock:
            if not self._ready:
                fd = self._fds()[1]
                deadline = time.monotonic() + READY_SECONDS
                while not waiting(fd, POLL_SECONDS if wait else 0):
                    if not wait or (cancel is not None and cancel.is_set()):
                        return False
                    if time.monotonic() > deadline:
                        self._stop(kill=True)
                        raise RegenProcessError(f"the regeneration process did not start in {READY_SECONDS:.0f} s: "
                                                "killed")
                status, value = self._exchange(None)
                if status != "ready":
                    raise RegenProcessError(f"the regeneration process did not start:\n{value}")
                self._ready = True
            return True

    def run(self, job: Job, progress: ProgressFn | None = None, cancel: CancelToken | None = None) -> Ran:
        """`generate.run(job)` in the process, on the replica it holds (the workspace as it was
        when the process started, plus the files of every job since): the same pipeline, its
        progress and cancel passed through; the run's own failures (`RUN_ERRORS`) raised here
        as they were raised there. RegenProcessError: the process failed or did not answer."""
        from repodoc_lsp.pipeline.generate import RUN_ERRORS

        self.ready(wait=True, cancel=cancel)
        with self._lock:
            self._cancel_sent = None
            status, value = self._exchange(job, cancel=cancel)
            while status == "progress":  # progress, or a heartbeat (None)
                if progress is not None and value is not None:
                    progress(*value)
                status, value = self._next(cancel)
        if status == "raise" and isinstance(value, RUN_ERRORS):
            raise value
        if status != "ok" or not isinstance(value, Ran):
            raise RegenProcessError(f"page writing failed in its process:\n{value}")
        return value

    def _next(self, cancel: CancelToken | None) -> tuple[str, Any]:
        """The next message; a cancel meanwhile is sent on (the lock is held)."""
        return self._exchange(None, cancel=cancel)

    def _wait(self, fd: int, cancel: CancelToken | None) -> None:
        """Wait for a message on `fd`, sending CANCEL once `cancel` is set; TimeoutError after
        TIMEOUT_SECONDS without one (CANCEL_SECONDS once a cancel is sent)."""
        since = time.monotonic()
        while not waiting(fd, POLL_SECONDS):
            now = time.monotonic()
            if self._cancel_sent is None and cancel is not None and cancel.is_set():
                put(self._fds()[0], CANCEL, now + CANCEL_SECONDS)
                self._cancel_sent = now
            if self._cancel_sent is not None and now - self._cancel_sent > CANCEL_SECONDS:
                raise TimeoutError(f"no answer {CANCEL_SECONDS:.0f} s after a cancel")
            if now - since > TIMEOUT_SECONDS:
                raise TimeoutError(f"no answer for {TIMEOUT_SECONDS:.0f} s (stopped or frozen?)")

    def _exchange(self, message: Any, cancel: CancelToken | None = None) -> tuple[str, Any]:
        """Send `message` (None: nothing) and read the answer, every step with a deadline; the
        lock is held. A process that does not answer in time is killed (RegenProcessError)."""
        try:
            if self._sender is not None:  # the first message is written (the process answers it)
                self._sender.join(TIMEOUT_SECONDS)
                if self._sender.is_alive():
                    raise TimeoutError("it takes no input (stopped or frozen?)")
                self._sender = None
            fd_in, fd_out = self._fds()
            if message is not None:
                put(fd_in, message, time.monotonic() + TIMEOUT_SECONDS)
            self._wait(fd_out, cancel)
            status, value = get(fd_out, time.monotonic() + TIMEOUT_SECONDS)
        except TimeoutError as exc:
            self._stop(kill=True)
            raise RegenProcessError(f"the regeneration process did not answer: {exc}; it was killed") from exc
        except (OSError, EOFError, pickle.UnpicklingError, ValueError) as exc:
            self._stop()
            raise RegenProcessError(f"the regeneration process ended: {exc!r}") from exc
        return str(status), value

    def close(self) -> None:
        """End the process without waiting: its stdin closes, so it ends once the regeneration
        under way (if any) is written, or at the next page of a whole tree, as the server
        exits; still starting (no work given yet), it is killed."""
        proc = self._proc
        if proc is None:
            return
        if not self._ready:  # loading the workspace: nothing of it is worth waiting for
            with contextlib.suppress(OSError):
                proc.kill()
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()

    def _stop(self, kill: bool = False) -> None:
        """End a process that failed: close its pipes, wait a little (`kill`: not), kill it."""
        proc = self._proc
        if proc is None:
            return
        if kill:
            with contextlib.suppress(OSError):
                proc.kill()
        self.close()
        self._proc = None
        with contextlib.suppress(OSError, ValueError):
            if proc.stdout is not None:
                proc.stdout.close()
        try:
            proc.wait(CLOSE_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(CLOSE_WAIT_SECONDS)


# -- the process's side -------------------------------------------------------------------


class _Cancel:
    """The process's cancel token: set by a CANCEL from the server, or by the end of the
    channel when `on_close` (the server is gone: nobody waits for the rest of the tree;
    the pages of saved files are finished)."""

    def __init__(self, fd: int, on_close: bool) -> None:
        self.fd = fd
        self.on_close = on_close
        self._set = False
        self.closed = False

    def is_set(self) -> bool:
        if not self._set and not self.closed and waiting(self.fd):
            try:
                get(self.fd)  # the only message the server sends meanwhile is CANCEL
                self._set = True
            except EOFError:
                self.closed = True
                self._set = self.on_close
        return self._set


def _serve(fd_in: int, fd_out: int, runtime: Runtime) -> None:
    from repodoc_lsp.pipeline.generate import RUN_ERRORS, Job, run
    from repodoc_lsp.render.pages import Renderer

    def reply(status: str, value: Any) -> None:
        put(fd_out, (status, value))

    try:
        root, settings, state = get(fd_in)
    except EOFError:
        return
    try:
        ws = Workspace(root, settings, runtime=runtime)
        ws.restore(state)  # the server's view, facts from the cache its analysis filled
        ws.facts.load_all()  # page renders need them: load them before the first save
        renderer = Renderer(settings.templates or None)
    except Exception:
        reply("error", traceback.format_exc())
        return
    reply("ready", None)
    last = [time.monotonic()]

    def heartbeat() -> None:
        if time.monotonic() - last[0] >= HEARTBEAT_SECONDS:
            last[0] = time.monotonic()
            reply("progress", None)

    while True:
        try:
            message = get(fd_in)
        except EOFError:
            return
        if not isinstance(message, Job):  # a CANCEL that came after the run it was meant for
            continue
        cancel = _Cancel(fd_in, on_close=message.files is None)
        try:
            summary = run(ws, message, renderer, cancel=cancel, pause=heartbeat,
                          progress=lambda *args: reply("progress", args))
            # the facts stay out: the server takes them from the cache after the saves waiting
            # (1,500 files' facts pickled here and unpickled there held up the save after a checkout)
            reply("ok", Ran(summary, None if message.files is None else ws.states(message.files, facts=False)))
        except RUN_ERRORS as exc:  # the run's own failure: the server raises it as it is
            reply("raise", exc)
        except Exception:
            reply("error", traceback.format_exc())
        if cancel.closed:
            return


def main() -> None:
    from repodoc_lsp.exits import end_now
    from repodoc_lsp.pipeline.runtime import enter_page_process

    fd_out = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print cannot corrupt the channel
    # Below the server's requests, the cycle collector tuned for bulk work; no threads, so
    # render workers are forked as the CLI's are.
    runtime = enter_page_process()
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        _serve(sys.stdin.fileno(), fd_out, runtime)
    end_now(0)  # nothing left to write: skip freeing the replica (a tenth of a second on a large workspace)
