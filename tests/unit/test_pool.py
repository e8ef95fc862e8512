"""pool: worker processes whose death is noticed (the work is redone by new pools, then `WorkersLost`),
that stop when cancelled, and that never outlive the process that started them."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest

from repodoc_lsp.pipeline import pool

FORK = multiprocessing.get_context("fork")


def _square(n: int) -> int:
    return n * n


def _die_once(arg: tuple[int, str]) -> int:
    """Chunk 3 kills its worker the first time it is run (the marker file remembers)."""
    n, marker = arg
    if n == 3 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(9)  # as the out-of-memory killer would
    return n


def _die(n: int) -> int:
    if n == 1:
        os._exit(9)
    return n


def _slow(n: int) -> int:
    time.sleep(0.5)
    return n


def test_results_come_in_the_chunks_order() -> None:
    assert list(pool.run_chunks(_square, list(range(12)), workers=2, context=FORK)) == [n * n for n in range(12)]


def _timed(n: int) -> tuple[int, float, float]:
    """Chunk 0 is slow (a large file); each chunk says when it started and ended."""
    started = time.monotonic()
    time.sleep(1.5 if n == 0 else 0.05)
    return n, started, time.monotonic()


def test_a_slow_chunk_does_not_hold_the_other_workers() -> None:
    """While chunk 0 runs, the other worker goes on through the chunks after it (given one as soon
    as it is done with one, not when chunk 0 is): the results still come in the chunks' order."""
    got = list(pool.run_chunks(_timed, list(range(16)), workers=2, context=FORK))
    assert [n for n, _started, _ended in got] == list(range(16))
    slow_end = got[0][2]
    during = [n for n, started, _ended in got[1:] if started < slow_end]
    # 2 workers were sent 4 chunks ahead: only chunks 1-3 ran beside chunk 0 when the other worker
    # waited for it; now every other chunk (bounded by HOLD_PER_WORKER) does
    assert len(during) >= 10, during


def test_the_work_of_a_killed_worker_is_redone_once(tmp_path: Path) -> None:
    marker = str(tmp_path / "died")
    got = list(pool.run_chunks(_die_once, [(n, marker) for n in range(8)], workers=2, context=FORK))
    assert os.path.exists(marker)  # a worker did die
    assert sorted(got) == list(range(8))  # every chunk once: what others finished is kept


def _kill_self(n: int) -> int:
    os.kill(os.getpid(), 9)
    return n


@pytest.mark.parametrize("broken", [True, False])
def test_a_closed_pool_is_wound_down_before_the_next_starts(broken: bool) -> None:
    """`_close` returns once the pool's manager thread has ended: its `shutdown(wait=False)`
    forgot the thread, and the next pool of `run_chunks` started while the broken one was still
    joining its workers and closing its queues (before: alive after `_close`, broken or not)."""
    for _ in range(5):
        executor = ProcessPoolExecutor(max_workers=2, mp_context=FORK)
        future = executor.submit(_kill_self if broken else _slow, 1)
        if broken:
            with pytest.raises(BrokenProcessPool):
                future.result(timeout=30)
        else:
            while not executor._processes:  # a worker started
                time.sleep(0.01)
        manager = executor._executor_manager_thread
        assert manager is not None
        pool._close(executor)
        assert not manager.is_alive()


class _BreaksInSubmit(ProcessPoolExecutor):
    """A pool whose third `submit` fails as CPython's does when the pool breaks while `submit`
    starts a worker in a dead one's place (the manager thread closes the pipe the new worker is
    being given: `OSError: handle is closed`); the first pool made only."""

    made = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        type(self).made += 1
        self.breaks = type(self).made == 1
        self.submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.submitted += 1
        if self.breaks and self.submitted == 3:
            raise OSError("handle is closed")
        return super().submit(fn, *args, **kwargs)


def test_a_pool_that_breaks_inside_submit_is_a_lost_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _BreaksInSubmit)  # as `pool._pool` takes it
    got = list(pool.run_chunks(_square, list(range(8)), workers=2, context=FORK))
    assert _BreaksInSubmit.made == 2  # the run went on in a second pool
    assert sorted(got) == [n * n for n in range(8)]  # every chunk once


def test_workers_dying_in_every_pool_is_a_clear_error() -> None:
    before = set(pool.children())
    with pytest.raises(pool.WorkersLost, match=r"^analysis: worker processes died 3 times .* of 4 parts were not done"):
        list(pool.run_chunks(_die, list(range(4)), workers=2, context=FORK, what="analysis"))
    assert set(pool.children()) <= before  # the broken pools' workers are gone


def test_a_cancel_stops_the_run_and_its_workers() -> None:
    cancel = threading.Event()
    results = pool.run_chunks(_slow, list(range(20)), workers=2, context=FORK, cancel=cancel)
    before = set(pool.children())  # (other tests may have left a fork server)
    first = next(results)
    cancel.set()
    assert list(results) == [] and first == 0  # nothing after the cancel
    assert set(pool.children()) <= before  # its workers killed and joined


# In a process of its own: end_children ends every child of the process that calls it.
END_CHILDREN = """
import os, subprocess
from repodoc_lsp.pipeline import pool
polite = subprocess.Popen(["sleep", "0.1"])
stuck = subprocess.Popen(["sleep", "60"])
stopped = subprocess.Popen(["sleep", "60"])
os.kill(stopped.pid, 19)  # SIGSTOP
assert {polite.pid, stuck.pid, stopped.pid} <= set(pool.children()), pool.children()
pool.end_children(grace=[polite.pid], seconds=2.0)
print(pool.children())
"""


def test_end_children_kills_and_reaps_what_is_left() -> None:
    done = subprocess.run([sys.executable, "-c", END_CHILDREN], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n", done.stdout  # none left, a stopped one neither, not even unreaped




# In a process of its own: a worker is killed halfway through sending its result (it writes the
# header of a 1 MB message and 4 bytes of it to the pool's result pipe, inherited by the fork),
# then the run is cancelled. The pool's manager thread reads the rest of that message; until
# `_close` closed this process's write end of the pipe it read for ever, and since Python joins
# that thread at exit, the process never ended.
HALF_SENT = """
import concurrent.futures, os, sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from repodoc_lsp.pipeline import pool
marker = sys.argv[1]
fds = []

class Pool(ProcessPoolExecutor):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        fds.append(self._result_queue._writer.fileno())

def die_halfway(n):
    if n == 1:
        os.write(fds[-1], (1 << 20).to_bytes(4, "big") + b"half")
        with open(marker + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.replace(marker + ".tmp", marker)
        os.kill(os.getpid(), 9)
    return n

def dead(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] == b"Z"  # not reaped yet
    except OSError:
        return True

class Killed:  # the cancel: set once chunk 1's worker is dead
    def is_set(self):
        return os.path.exists(marker) and dead(int(open(marker).read()))

concurrent.futures.ProcessPoolExecutor = Pool  # as `pool._pool` takes it
list(pool.run_chunks(die_halfway, [0, 1], workers=1, context=get_context("fork"), cancel=Killed()))
print("returned")
"""


def test_a_worker_killed_while_it_sends_a_result_does_not_block_the_exit(tmp_path: Path) -> None:
    marker = tmp_path / "died"
    try:
        done = subprocess.run([sys.executable, "-c", HALF_SENT, str(marker)], capture_output=True, text=True,
                              timeout=120)  # a hang detector, not a timing: it ends within a second or two
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the process did not exit (stdout: {exc.stdout!r})") from None
    assert marker.exists(), "the worker did not die: the test proves nothing"
    assert done.returncode == 0 and done.stdout == "returned\n", done.stderr


# In a process of its own (a fork server is one per process): after a pool of the fork server's
# workers, stop_fork_server leaves no child, not even an unreaped one.
STOP_FORK_SERVER = """
import multiprocessing
from repodoc_lsp.pipeline import pool
context = multiprocessing.get_context("forkserver")
assert list(pool.run_chunks(abs, [-1, -2, -3], workers=2, context=context)) == [1, 2, 3]
assert pool.children(), "no fork server started: the test proves nothing"
pool.stop_fork_server()
print(pool.children())
"""


def test_stop_fork_server_ends_and_reaps_it() -> None:
    done = subprocess.run([sys.executable, "-c", STOP_FORK_SERVER], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n", done.stdout


# In a process of its own: a worker dies just before the pool's next `submit`, and the pool's
# manager thread closes the pool's pipes while that `submit` would start a worker under the fork
# server. The delays (the manager's reaction, the sending of the fork server's request) pick one
# interleaving the scheduler may choose; the run's own code is unchanged. Before `_pool` started
# every worker at once, the fork server read half a request and crashed (`EOFError` on stderr),
# and each next pool broke while it was ending ("died 3 times ... 20 of 20 parts", as in CI).
KILLED_BEFORE_A_SUBMIT = """
import sys, time
import multiprocessing.reduction as reduction
from collections.abc import Sequence
from concurrent.futures import process
import psutil
from repodoc_lsp.pipeline import pool, runtime

killed = []

class Chunks(Sequence):
    def __len__(self):
        return 20

    def __getitem__(self, i):
        if i == 1 and not killed:  # made just before its `submit`: the workers started die first
            me = psutil.Process()
            direct = {c.pid for c in me.children()}  # the fork server, the resource tracker
            while not (workers := [c for c in me.children(recursive=True) if c.pid not in direct]):
                time.sleep(0.01)
            for worker in workers:
                worker.kill()
                killed.append(worker.pid)
            time.sleep(0.2)  # the manager thread has seen it
        return 0.05

def later(real, seconds):
    def call(*args, **kwargs):
        time.sleep(seconds)
        return real(*args, **kwargs)
    return call

process._ExecutorManagerThread.terminate_broken = later(process._ExecutorManagerThread.terminate_broken, 0.3)
reduction.sendfds = later(reduction.sendfds, 0.6)
got = list(pool.run_chunks(time.sleep, Chunks(), workers=2, context=runtime.CLI.render_context(), what="test"))
print(len(got), bool(killed))
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="render workers are forked on Python 3.10")
def test_a_worker_killed_before_a_submit_does_not_crash_the_fork_server() -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_BEFORE_A_SUBMIT], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout == "20 True\n", done.stderr
    assert "Traceback" not in done.stderr, done.stderr  # the fork server's EOFError


# A script file (its own folder starts its import path, not the working folder): the fork server
# is killed while its workers work (they die with it); the next pool's fork server is started as
# safely as the first, though CPython starts a dead one again by itself without PYTHONSAFEPATH,
# where the working folder's `struct.py`... would run.
FORK_SERVER_KILLED = """
import multiprocessing.forkserver, os, signal, time
from collections.abc import Sequence
from repodoc_lsp.pipeline import pool, runtime

killed = []

class Chunks(Sequence):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 6 and not killed:
            server = multiprocessing.forkserver._forkserver._forkserver_pid
            os.kill(server, signal.SIGKILL)
            killed.append(server)
        return 0.05

if __name__ == "__main__":  # the workers run this file as their main module
    got = list(pool.run_chunks(time.sleep, Chunks(), workers=2, context=runtime.CLI.render_context(), what="test"))
    print(len(got), multiprocessing.forkserver._forkserver._forkserver_pid not in killed)
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH is Python 3.11's")
def test_a_killed_fork_server_is_started_again_safely(tmp_path: Path) -> None:
    folder = tmp_path / "cwd"
    folder.mkdir()
    sentinel = tmp_path / "ran"
    for name in ("struct", "signal", "socket", "selectors", "threading", "types", "errno", "warnings"):
        (folder / f"{name}.py").write_text(f"open({str(sentinel)!r}, 'a').write({name!r} + chr(10))\n")
    script = tmp_path / "script" / "run.py"
    script.parent.mkdir()
    script.write_text(FORK_SERVER_KILLED)
    done = subprocess.run([sys.executable, str(script)], cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "12 True\n", done.stderr  # a new fork server did the rest
    assert not sentinel.exists(), sentinel.read_text()
