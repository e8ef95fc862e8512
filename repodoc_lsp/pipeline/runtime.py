"""Process and runtime policy, chosen once by an entry point and passed down.

The entry points are the CLI (`repodoc generate`, `repodoc check`), the language server and
its page process (`server/regen_process.py`). Each calls its `enter_*` function first: it tunes
the interpreter (the cycle collector, the switch interval, the scheduling priority) and returns
the `Runtime` that library code is given (`Workspace(..., runtime=...)`): how worker processes
start and what they set up. Library code never guesses it (by counting threads, say).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from repodoc_lsp.config import Settings
from repodoc_lsp.pipeline.pool import PARENT_VARIABLE, start_fork_server

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

BACKGROUND_NICE = 10  # the language server's background processes: its requests get a core first


@dataclass(frozen=True, slots=True)
class Runtime:
    """How a process runs its work."""

    # Worker processes are forked from this process (cheapest: it has no threads, so a fork
    # copies no lock held by another thread); else started by a fork server.
    fork: bool
    # Worker processes lower their priority below the language server's requests (nice
    # BACKGROUND_NICE more than this process).
    background: bool
    # Holds what it builds until it exits (`repodoc generate`: every file's facts, the graph): the cycle
    # collector is off while they are made, and they are left out of later collections (`holding`).
    holds: bool = False

    def context(self) -> BaseContext:
        """Where analysis workers come from."""
        if self.fork and "fork" in _start_methods():
            return _context("fork")
        return _fork_server(["repodoc_lsp.store.facts", "repodoc_lsp.pipeline.runtime",
                             "repodoc_lsp.pipeline.forkserver_guard"])

    def forks(self) -> bool:
        """True when this process may start render workers (it has no threads of its own)."""
        return self.fork and "fork" in _start_methods()

    def render_context(self, built_in: bool = False, compiled_in: str = "") -> BaseContext:
        """Where render workers come from: a fork server, a small process of its own, so that
        they do not inherit this one's facts and graph (forked from the CLI after the analysis of
        a large tree, its memory counted again in each worker); they are sent what they render.
        `built_in`: they render with repodoc's own templates, which a fork server started now
        compiles before it forks (`render/precompiled.py`), read from and kept in `compiled_in`
        (the folder of this process's compiled templates, "": none)."""
        if "forkserver" not in _start_methods() or sys.version_info < (3, 11):
            return self.context()  # Python 3.10 cannot start a fork server safely (`_fork_server`): forked
        from repodoc_lsp.render.environment import COMPILED_VARIABLE  # here: Jinja2 only where pages render

        os.environ[COMPILED_VARIABLE] = compiled_in  # read by the fork server's preload, if it starts now
        return _fork_server(["repodoc_lsp.pipeline.rendering", "repodoc_lsp.pipeline.runtime",
                             "repodoc_lsp.pipeline.forkserver_guard",
                             *(["repodoc_lsp.render.precompiled"] if built_in else [])])

    def holding(self) -> contextlib.AbstractContextManager[None]:
        """Around bulk work whose results this process holds to its end (the facts arriving from the
        analysis workers): no cycle collection meanwhile, and what was made is frozen after, when
        `holds` (else nothing): in the CLI's parent, collections of the young facts as they arrived
        took a large share of its CPU and found few objects in cycles."""
        return no_cycle_collection(keep=True) if self.holds else contextlib.nullcontext()

    def worker_setup(self) -> Callable[[], None]:
        """What each analysis worker runs first."""
        return background_worker if self.background else collect_less


def _start_methods() -> list[str]:
    """How worker processes may start here; multiprocessing imported on first use (`pool.py`'s docstring)."""
    import multiprocessing

    return multiprocessing.get_all_start_methods()


def _context(method: str) -> BaseContext:
    """multiprocessing's context of start `method`, imported on first use (`_start_methods`)."""
    import multiprocessing

    return multiprocessing.get_context(method)


def _fork_server(preload: list[str]) -> BaseContext:
    """The fork server's context, the server started (`pool.start_fork_server`) with `preload`."""
    server = _context("forkserver")
    server.set_forkserver_preload(preload)
    os.environ[PARENT_VARIABLE] = str(os.getpid())  # what its guard watches (forkserver_guard)
    start_fork_server()
    return server


# A process with threads and no say of its own (a library call, a test): no forked workers.
LIBRARY = Runtime(fork=False, background=False)
CLI = Runtime(fork=True, background=False, holds=True)
SERVER = Runtime(fork=False, background=True)  # threads: workers come from a fork server
# No threads; itself below the server's requests (`enter_page_process`), which its workers inherit:
# lowered again, they ran at nice 19, starved by any busy program at 0 (a `repodoc.generate` took
# 37 s instead of 1.5 s beside one, and over its 60 s test deadline beside two).
PAGE_PROCESS = Runtime(fork=True, background=False)


def enter_cli() -> Runtime:
    """`repodoc generate` and `repodoc check`: a single-threaded process doing bulk work."""
    collect_less()
    return CLI


def enter_server() -> Runtime:
    """The language server: threads answering requests while others index."""
    # A request's thread waits at most this long for the interpreter lock that a busy
    # background thread holds (default 5 ms, paid up to three times per hover).
    sys.setswitchinterval(0.001)
    # After indexing the heap is frozen (`settle`), so Python's rule of collecting the oldest
    # generation only when it grew by a quarter no longer holds it back: full collections of
    # jedi's caches (each stalling a request) came every few seconds under load. A tenth as
    # often; cycles are still collected.
    gc.set_threshold(700, 10, 100)
    return SERVER


def enter_page_process() -> Runtime:
    """The server's page process: bulk work below the server's requests, without threads."""
    lower_priority()
    collect_less()
    return PAGE_PROCESS


def collect_less() -> None:
    """Tune the cycle collector for bulk analysis and rendering.

    Parsing creates millions of short-lived objects without reference cycles
    (syntax trees, freed by reference counting), and with the default thresholds
    Python walks every live object again and again (a large share of the analysis
    time). Objects alive now (imported modules) leave the scans for good.
    """
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def settle() -> None:
    """What is alive now (a server's facts, index and graph after indexing) lives on: full
    collections of the heap skip it (each stalled every request meanwhile)."""
    gc.freeze()


@contextlib.contextmanager
def no_cycle_collection(keep: bool = False) -> Iterator[None]:
    """For building structures that make no reference cycles (the symbol graph): full
    collections over the facts took many times the build's own time. `keep`: what is alive at the
    end lives on (held until the process exits): it is frozen, left out of every later collection
    (else the first collection after this walks everything made meanwhile, the CLI's graph
    included)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        if collecting:
            gc.enable()


def lower_priority() -> None:
    """Run below the language server's requests: the scheduler gives them a core first."""
    with contextlib.suppress(OSError):
        os.nice(BACKGROUND_NICE)


def background_worker() -> None:
    """An analysis worker of the language server: below its requests for the CPU (a hover during
    cold indexing is slowed by workers at the server's priority)."""
    lower_priority()
    collect_less()


def usable_cpus() -> int:
    """The cores this process may run on (its affinity mask; the machine's count where there is none)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def default_jobs(settings: Settings, requested: int | None = None) -> int:
    """Worker processes: `requested` (the CLI's --jobs), else the `jobs` setting, else one per core this
    process may use; never more than those cores. A checkout's `[tool.repodoc]` may set `jobs`
    (`jobs = 1000000` asked for a process per 8 files): workers past the cores only cost memory."""
    cpus = usable_cpus()
    wanted = requested if requested and requested > 0 else settings.jobs
    return min(wanted, cpus) if wanted > 0 else cpus
