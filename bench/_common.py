"""Helpers shared by the benchmarks: statistics, process-tree memory, tables, results files."""

from __future__ import annotations

import argparse
import compileall
import contextlib
import datetime as dt
import json
import math
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import psutil

if TYPE_CHECKING:
    from typing import Self  # (Python 3.11: the package runs on 3.10)

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
REPO = BENCH.parent


def compile_package() -> None:
    """Write the bytecode of repodoc's own modules, as `pip install` does for an installed package.
    These machines set PYTHONDONTWRITEBYTECODE, so an editable install compiles every module from
    source in every process it starts: about 0.2 s of each start (the CLI, its fork server, the
    server), measured here, that no installed repodoc pays. `compileall` writes despite that setting."""
    compileall.compile_dir(REPO / "repodoc_lsp", quiet=1)


compile_package()  # every benchmark imports this module before it starts repodoc


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def p95(values: Sequence[float]) -> float:
    """Nearest-rank 95th percentile (with 20 samples: the 19th smallest)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def tree_rss(proc: psutil.Process, seen: dict[int, psutil.Process] | None = None,
             pss: bool = False) -> tuple[int, int, int]:
    """(sum, largest, proportional sum) resident memory of a process and its descendants, in
    bytes; zeros once gone.

    The sum counts pages that forked children share with their parent once per process, so it
    overstates the real footprint of a forking tool; it is the conservative figure. The
    proportional sum (`pss`: Linux's PSS, each shared page split between its sharers; 0 when
    not asked) is what the tree really holds.
    """
    total = largest = proportional = 0
    try:
        members = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0, 0, 0
    for member in members:
        if seen is not None:
            seen.setdefault(member.pid, member)
        try:
            rss = member.memory_info().rss
            if pss:
                proportional += getattr(member.memory_full_info(), "pss", 0)
        except psutil.Error:
            continue
        total += rss
        largest = max(largest, rss)
    return total, largest, proportional


class Polling:
    """`sample()` called every `interval` seconds on a thread, between entering and leaving a `with` block."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class PeakMemory(Polling):
    """Polls a process tree every `interval` seconds in a thread.

    `.peak` is the largest RSS sum seen, `.peak_single` the largest single process, in bytes;
    with `pss=True` also `.peak_pss`, the largest proportional sum (see `tree_rss`), sampled every
    `pss_interval` seconds only: reading a process's PSS makes the kernel walk its page tables
    (about 10 ms of CPU for a 300 MB process), and at the RSS rate that would take a fifth of a
    core from the measured processes on a 2-core machine. The RSS rate itself: listing a tree's
    processes reads every process's /proc entry; every 50 ms that took 1.4 s of CPU during a cold
    PyTorch run (24 s, 2 cores), every 250 ms 0.3 s, with the same peak (397-399 MB).
    """

    def __init__(self, pid: int, interval: float = 0.25, pss: bool = False, pss_interval: float = 0.5) -> None:
        super().__init__(interval)
        self.proc = psutil.Process(pid)
        self.pss = pss
        self.pss_interval = pss_interval
        self._next_pss = 0.0
        self.peak = 0
        self.peak_single = 0
        self.peak_pss = 0
        self.peak_at = math.nan  # seconds after the start when the RSS sum peaked
        self.started = time.monotonic()
        self.seen: dict[int, psutil.Process] = {}  # every process of the tree ever sampled

    def sample(self) -> None:
        now = time.monotonic()
        with_pss = self.pss and now >= self._next_pss
        if with_pss:
            self._next_pss = now + self.pss_interval
        total, largest, proportional = tree_rss(self.proc, self.seen, with_pss)
        if total > self.peak:
            self.peak, self.peak_at = total, now - self.started
        self.peak_single = max(self.peak_single, largest)
        self.peak_pss = max(self.peak_pss, proportional)

    def survivors(self) -> list[psutil.Process]:
        """Processes of the tree still running (is_running() also checks the start time, so a
        reused pid is not mistaken for one of ours)."""
        alive = []
        for p in self.seen.values():
            with contextlib.suppress(psutil.Error):
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(p)
        return alive

    def end_survivors(self) -> list[str]:
        """Kill what `survivors()` finds (only processes this tree started); return their command lines."""
        found = []
        for p in self.survivors():
            with contextlib.suppress(psutil.Error):
                found.append(" ".join(p.cmdline())[:200])
                p.kill()
        return found


@dataclass
class Measured:
    seconds: float
    peak_rss: int  # bytes, the whole process tree
    peak_single: int  # bytes, the largest process
    proc: subprocess.CompletedProcess[str]
    cpu_seconds: float = math.nan  # user + system time of the process and the children it waited for
    peak_pss: int = 0  # bytes, the whole tree with shared pages counted once (only with pss=True)
    system_seconds: float = math.nan  # the system part of cpu_seconds
    peak_at: float = math.nan  # seconds after the start when the RSS sum peaked (against `seconds`: which phase)


# Creating a file costs about 25 us of system time on this ext4 (no journal), but up to 750 us for a
# minute or more after thousands were deleted: without a journal the kernel skips every recently
# deleted inode when it picks one for a new file (`recently_deleted` in fs/ext4/ialloc.c: 60 s, 360 s
# while the inode table is not yet written back). A generation timed then pays seconds for a deletion
# that came before it (another benchmark's clean-up, anyone's `rm -rf`); the floor creates no file.
CREATE_SETTLED = 50e-6  # seconds of system time per file created (about 25 us when settled)
_PROBE_FOLDERS, _PROBE_FILES = 8, 50  # new folders go to different inode groups, as an output tree's do


def file_creation_cost(folder: Path) -> float:
    """System seconds per file created in new folders under `folder` (their files are kept: deleting
    them would be the very thing measured)."""
    probe = Path(tempfile.mkdtemp(prefix="create-probe-", dir=folder))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    for j in range(_PROBE_FOLDERS):
        (probe / str(j)).mkdir()
        for i in range(_PROBE_FILES):
            os.close(os.open(probe / str(j) / f"f{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return (resource.getrusage(resource.RUSAGE_SELF).ru_stime - before) / (_PROBE_FOLDERS * _PROBE_FILES)


def settle_file_creation(folder: Path, most: float = 420.0, step: float = 10.0) -> dict[str, float]:
    """Wait (at most `most` seconds) until creating a file under `folder` costs no more than
    CREATE_SETTLED; the last cost measured (microseconds) and the seconds waited."""
    waited = 0.0
    while True:
        cost = file_creation_cost(folder)
        if cost <= CREATE_SETTLED or waited >= most:
            if waited:
                print(f"waited {waited:.0f} s for file creation to settle: {cost * 1e6:.0f} us per file", flush=True)
            return {"create_us": round(cost * 1e6), "waited": waited}
        time.sleep(step)
        waited += step


def run_measured(
    cmd: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None, timeout: float = 900,
    pss: bool = False,
) -> Measured:
    """Run `cmd` with its output captured; wall time and peak memory of its process tree (and its PSS)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with PeakMemory(proc.pid, pss=pss) as mem:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            raise RuntimeError(f"timed out after {timeout} s: {' '.join(cmd)}\n{err[-2000:]}") from None
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    system = after.ru_stime - before.ru_stime
    cpu = (after.ru_utime - before.ru_utime) + system
    done = subprocess.CompletedProcess(list(cmd), proc.returncode, out, err)
    return Measured(seconds, mem.peak, mem.peak_single, done, cpu, mem.peak_pss, system, mem.peak_at)


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "loadavg": [round(x, 2) for x in load],
    }


def git_head() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except OSError:
        return ""


def now_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_results(name: str, data: dict[str, Any]) -> Path:
    """Write `data` (plus date, machine and commit) to bench/results/NAME-<date>.json and NAME-latest.json."""
    RESULTS.mkdir(exist_ok=True)
    stamp = now_utc()
    payload = {"benchmark": name, "date": stamp, "commit": git_head(), "machine": machine(), **data}
    text = json.dumps(payload, indent=2, sort_keys=False, default=str) + "\n"
    path = RESULTS / f"{name}-{stamp.replace(':', '')}.json"
    path.write_text(text)
    (RESULTS / f"{name}-latest.json").write_text(text)
    return path


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """A plain aligned text table (first column left, the others right)."""
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def markdown_table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """The same rows as a Markdown table (for bench/README.md)."""
    def line(row: Sequence[object]) -> str:
        return "| " + " | ".join(str(c).strip().replace("|", "/") for c in row) + " |"

    return "\n".join([line(header), "|" + " --- |" * len(header), *(line(r) for r in rows)])


def fmt_s(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds):
        return "n/a"
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def fmt_mb(nbytes: float | None) -> str:
    """Bytes as decimal megabytes (targets are in decimal GB: 1.5 GB = 1,500 MB)."""
    return "n/a" if nbytes is None or nbytes == 0 else f"{nbytes / 1e6:,.0f} MB"


def verdict(ok: bool | None) -> str:
    return {True: "ok", False: "MISSED", None: "n/a"}[ok]


@contextlib.contextmanager
def scratch_folder(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A temporary folder, removed afterwards unless `keep` (then its path is printed)."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield tmp
    finally:
        if keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def checked_tree(description: str, prefix: str) -> Iterator[tuple[argparse.Namespace, Path, Path]]:
    """The command line of the checks that read a generated tree against its sources (`--docs`,
    `--root`, `--show`) and that tree: DOCS, or PyTorch's corpus generated now in a temporary
    folder (removed afterwards, as `check_pages.generate` does it). Yields (arguments, docs, root)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, help="a generated tree (default: PyTorch generated now)")
    parser.add_argument("--root", type=Path, help="the workspace DOCS was generated from")
    parser.add_argument("--show", type=int, default=8, help="disagreements shown per kind")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        if args.docs:
            docs = args.docs
        else:
            from check_pages import generate  # the bench folder is on the path of every script here

            docs = generate(Path(tmp))
        yield args, docs, args.root or docs.parent


_LIST = re.compile(r'^<a id="(list-[^"]+)"></a>\n(.*?)(?=^<a id="|^---\n|\Z)', re.M | re.S)
_TO_LIST = re.compile(r"\]\((?:\./)?[^)\s#/]+\.part\d+\.md#(list-[^)\s]+)\)")


def part_lists(parts: Sequence[str]) -> dict[str, str]:
    """The complete lists a file page's part pages of lists hold (README, "Part pages"), by their
    anchor (`list-imported-by`, `list-users-class-C`, ...): a list going on over two parts is
    both pieces."""
    found: dict[str, str] = {}
    for text in parts:
        for m in _LIST.finditer(text):
            found[m.group(1)] = found.get(m.group(1), "") + m.group(2)
    return found


def with_lists(block: str, lists: dict[str, str]) -> str:
    """`block` of a page and the complete lists it links to on its part pages (a folded list of a
    page over the size budget is there: `All 1,361 importing files: on [c.py_docs.part4.md](...)`)."""
    return block + "".join(lists.get(unquote(anchor), "") for anchor in dict.fromkeys(_TO_LIST.findall(block)))
