"""Worker processes whose death is noticed, and who do not outlive the process that started them.

`multiprocessing.Pool` waits forever for the work of a worker that was killed (what the
out-of-memory killer does); `concurrent.futures.ProcessPoolExecutor` notices (its pool
breaks). The work a dead worker held is given to a new pool, up to POOLS pools in all; losing
the last is `WorkersLost`, a clear error. Each worker asks the kernel to kill it when its
parent dies.

multiprocessing, `concurrent.futures.process` and ctypes are imported where a pool or fork server starts:
a run that renders in its own process (after an edit) does not pay for loading them.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.context import BaseContext

A = TypeVar("A")
R = TypeVar("R")
POLL_SECONDS = 0.1  # how often a waiting caller looks at its cancel token
# No chunk finished for this long: the workers are stopped or frozen, not slow.
STALL_SECONDS = 600.0
# Chunks done and kept, per worker, until the first chunk before them is (`run_chunks`).
HOLD_PER_WORKER = 8
_PR_SET_PDEATHSIG = 1
# Set by a process before it starts a fork server: its id, which the fork server watches.
PARENT_VARIABLE = "REPODOC_FORK_SERVER_PARENT"
SOCKET_FOLDER_BYTES = 75  # the longest temporary folder the fork server's socket path still fits under
# Pools a run's work may need: a broken pool's lost work goes to the next. A third costs nothing
# until needed; an out-of-memory killer that goes on killing still ends the run. (Every pool's
# workers broke twice in CI, "20 of 20 parts were not done": a worker's death had crashed the
# fork server, `_pool`, and the next pools started while it was still ending.)
POOLS = 3
# Before a next pool: a dead worker's memory is freed, a dead fork server is gone (and started again).
RETRY_SECONDS = 0.5


class Cancel(Protocol):
    def is_set(self) -> bool: ...


class WorkersLost(Exception):
    """Worker processes died (killed, for example by the out-of-memory killer) or froze, and the
    work could not be finished."""


def watch_parent(then: Callable[[], None] | None = None) -> None:
    """In a worker: die with the process that forked it (Linux: the kernel sends SIGKILL;
    elsewhere a thread polls the parent's id); then call `then`."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        import ctypes  # in a worker (module docstring)

        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    else:  # pragma: no cover - not Linux
        threading.Thread(target=poll_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # it died before the kernel was told
        os._exit(1)
    if then is not None:
        then()


def children() -> list[int]:
    """The ids of this process's children, zombies included (Linux: read from /proc; elsewhere
    none are known)."""
    me, found = os.getpid(), []
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    fields = stat.read().rpartition(b")")[2].split()  # after "(command name)"
            except OSError:
                continue  # gone meanwhile
            if len(fields) > 1 and fields[1] == str(me).encode():
                found.append(int(name))
    return found


def end_children(grace: Iterable[int] = (), seconds: float = 2.0) -> None:
    """Before this process exits: give the children in `grace` up to `seconds` to end by
    themselves, then SIGKILL every child left (a stopped one too) and wait for each, so that
    none outlives this process, running or unreaped."""
    deadline = time.monotonic() + seconds
    waiting = set(grace)
    while waiting:
        for pid in list(waiting):
            if _reaped(pid):
                waiting.discard(pid)
        if not waiting or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    left = children()
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + seconds  # a process in uninterruptible sleep dies when it wakes
    while left and time.monotonic() < deadline:
        left = [pid for pid in left if not _reaped(pid)]
        if left:
            time.sleep(0.01)


def start_fork_server() -> None:
    """Start multiprocessing's fork server unless it runs (again, when it died). CPython starts it
    as `python -c ...`, whose import path begins with the working folder until it takes this
    process's path: run from a workspace's root (`repodoc generate` in CI), the workspace's
    `struct.py` or `signal.py` would run there. PYTHONSAFEPATH (Python 3.11) leaves the folder
    out; it is set for that start only (an interpreter started with -I passes -I on, as the
    editors start the language server)."""
    import multiprocessing.forkserver  # when workers start (module docstring)

    before, chosen = os.environ.get("PYTHONSAFEPATH"), tempfile.tempdir
    os.environ["PYTHONSAFEPATH"] = "1"
    tempfile.tempdir = _socket_folder()
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        tempfile.tempdir = chosen
        if before is None:
            del os.environ["PYTHONSAFEPATH"]
        else:
            os.environ["PYTHONSAFEPATH"] = before


def _socket_folder() -> str | None:
    """Where multiprocessing may make its folder for the fork server's socket (None: the usual
    temporary folder). A Unix socket's path has at most 107 bytes and multiprocessing adds 32
    to the temporary folder's (`/pymp-XXXXXXXX/listener-XXXXXXXX`): a longer TMPDIR made every run
    that started a fork server fail (Python 3.13 picks a shorter folder itself). Then the first
    short, writable one of the usual system folders."""
    if len(os.fsencode(tempfile.gettempdir())) <= SOCKET_FOLDER_BYTES:
        return None
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK):
            return folder
    return None


def stop_fork_server(seconds: float = 5.0) -> None:
    """End the fork server this process started, if any, and the resource tracker started with
    it, and wait for each (SIGKILLed after `seconds`): none is left behind, and the CPU time of
    the fork server's workers counts as this process's children's."""
    forkserver = sys.modules.get("multiprocessing.forkserver")  # not imported: none was started here
    server = getattr(forkserver, "_forkserver", None)  # not public: best effort
    if getattr(server, "_forkserver_pid", None) is None:
        return
    import multiprocessing.resource_tracker

    _stop(server, "_forkserver_pid", seconds)  # it ends when its "alive" pipe closes
    _stop(multiprocessing.resource_tracker._resource_tracker, "_pid", seconds)  # when its pipe closes


def _stop(helper: object, pid_attribute: str, seconds: float) -> None:
    """`helper._stop()` (a process of multiprocessing's own: closes its pipe, waits for it) with a deadline."""
    pid = getattr(helper, pid_attribute, None)
    if pid is None:
        return
    timer = threading.Timer(seconds, lambda: os.kill(pid, signal.SIGKILL))  # stopped or frozen
    timer.start()
    try:
        with contextlib.suppress(OSError, AttributeError, ChildProcessError):
            helper._stop()  # type: ignore[attr-defined]
    finally:
        timer.cancel()
        timer.join()


def _reaped(pid: int) -> bool:
    """Wait for child `pid` without blocking: True when it has ended (or is not a child)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


def poll_parent(parent: int) -> None:
    """End this process (os._exit) once its parent `parent` is gone (checked every second)."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def run_chunks(fn: Callable[[A], R], chunks: Sequence[A], *, workers: int, context: BaseContext,
               initializer: Callable[[], None] | None = None, cancel: Cancel | None = None,
               what: str = "work") -> Iterator[R]:
    """`fn(chunk)` of each chunk on worker processes, results in the chunks' order (after a
    lost worker, the redone ones last). A chunk is taken from `chunks` when it is sent, a few
    ahead of the results (a sequence may make its chunks then). Stops when `cancel` is set (the
    workers are killed). Raises WorkersLost when the workers of POOLS pools died or none finishes
    a chunk for STALL_SECONDS.

    A worker is given a next chunk as soon as one is done, not when the first of those sent is:
    a slow chunk (a large file) held every other worker idle until it was done. Results done
    before the first are kept until it is, at most
    HOLD_PER_WORKER per worker."""
    from concurrent.futures.process import BrokenProcessPool  # when workers start (module docstring)

    todo = list(range(len(chunks)))
    ahead = 2 * max(1, workers)  # chunks sent and not yet done
    hold = HOLD_PER_WORKER * max(1, workers)  # chunks sent and not yet taken back
    for attempt in range(1, POOLS + 1):
        if attempt > 1:
            time.sleep(RETRY_SECONDS)
            if context.get_start_method() == "forkserver":
                start_fork_server()  # a fork server killed too starts again, as safely as the first time
        pool = _pool(max(1, min(workers, len(todo))), context, initializer)
        lost: list[int] = []
        sent: collections.deque[tuple[int, Future]] = collections.deque()  # in the chunks' order
        rest = iter(todo)
        try:
            while True:
                broken = False
                running = sum(1 for _, f in sent if not f.done())
                for i in itertools.islice(rest, max(0, min(ahead - running, hold - len(sent)))):
                    try:
                        sent.append((i, pool.submit(fn, chunks[i])))
                    except (BrokenProcessPool, OSError, EOFError):  # a worker died already
                        # or could not start (the first `submit` starts them, `_pool`): OSError, or
                        # EOFError when the fork server died as it was asked for one
                        lost.append(i)
                        broken = True
                        break
                if not sent:
                    lost.extend(rest)  # nothing when all was sent
                    break
                if not broken:
                    if cancel is not None and cancel.is_set():
                        return
                    first = sent[0][1]
                    if not first.done():
                        # the first not done, or any of them when more may be sent meanwhile
                        waiting = [first] if len(sent) >= hold else [f for _, f in sent if not f.done()]
                        if not _finished(waiting, cancel, what):
                            return  # cancelled
                        if not first.done():
                            continue  # another is done: its worker is given a next chunk
                    try:
                        result = first.result()
                    except BrokenProcessPool:
                        broken = True
                if broken:
                    # Take what the other workers finished; the rest is redone.
                    wait([f for _, f in sent], timeout=5.0)  # they break all at once
                    for j, other in sent:
                        if other.done() and not other.cancelled() and other.exception() is None:
                            yield other.result()
                        else:
                            lost.append(j)
                    lost.extend(rest)
                    lost.sort()
                    break
                sent.popleft()
                yield result
        finally:
            _close(pool)
        if not lost:
            return
        if attempt == POOLS:
            raise WorkersLost(f"{what}: worker processes died {POOLS} times (killed, perhaps out of memory); "
                              f"{len(lost)} of {len(chunks)} parts were not done")
        todo = lost


def _pool(workers: int, context: BaseContext, initializer: Callable[[], None] | None) -> ProcessPoolExecutor:
    """A pool whose workers all start with its first `submit`, before its manager thread does.

    Not under a fork server by default: CPython starts a worker per `submit` there until the pool
    is full. A worker that died just before one (its pool's manager thread closing the pool's
    pipes as the new worker was being given them) crashed the fork server itself: the pipe closed
    between the request's pickling and its sending, the fork server read half a request (its
    `EOFError` on stderr), and the next pools' workers could not start until it was gone ("died 3
    times" in CI). Started at once, no worker starts while the manager thread can close anything."""
    from concurrent.futures import ProcessPoolExecutor  # when workers start (module docstring)

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=watch_parent,
                               initargs=(initializer,))
    if hasattr(pool, "_safe_to_dynamically_spawn_children"):  # not public: best effort
        pool._safe_to_dynamically_spawn_children = False
    return pool


def _finished(futures: list[Future], cancel: Cancel | None, what: str) -> bool:
    """Wait until one of `futures` is done (or broken): False when `cancel` is set first."""
    started = time.monotonic()
    while not wait(futures, timeout=POLL_SECONDS, return_when=FIRST_COMPLETED).done:
        if cancel is not None and cancel.is_set():
            return False
        if time.monotonic() - started > STALL_SECONDS:
            raise WorkersLost(f"{what}: no worker process finished anything for {STALL_SECONDS:.0f} s "
                              "(stopped or frozen)")
    return True


def _close(pool: ProcessPoolExecutor, seconds: float = 5.0) -> None:
    """Shut the pool down without waiting for work under way: its workers are killed, and the
    pool's manager thread has ended (or `seconds` passed) when this returns, so that a next pool
    does not start while this one is still being wound down.

    The result pipe's write end is closed in this process: a worker killed halfway through
    sending a result left the pool's manager thread reading the rest for ever (this process
    held the only other write end). With no writer left its read ends (EOF) and the pool counts
    as broken."""
    # Not public: best effort. shutdown(wait=False) forgets all three, the manager thread too
    # (a later shutdown(wait=True) then waits for nothing).
    processes = dict(getattr(pool, "_processes", None) or {})
    results = getattr(pool, "_result_queue", None)
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes.values():
        with contextlib.suppress(OSError, ValueError, AttributeError):
            proc.kill()
    for proc in processes.values():
        with contextlib.suppress(OSError, ValueError, AttributeError, AssertionError):
            proc.join(seconds)
    with contextlib.suppress(OSError, AttributeError):
        results._writer.close()  # type: ignore[union-attr]
    pool.shutdown(wait=True)
    if isinstance(manager, threading.Thread):
        manager.join(seconds)
