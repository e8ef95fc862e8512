"""Where a cold `repodoc generate` holds its memory: each process of the tree by role, over time.

    python bench/mem_roles.py ROOT [--pythonpath TREE] [--jobs N] [--interval 0.25] [--json FILE]

Runs one cold `repodoc generate ROOT` (an empty cache and output folder in a temporary folder; with
`--pythonpath`, another version's `repodoc_lsp`, e.g. a `git archive` of it) and samples its process
tree: every process's RSS each `--interval` seconds, and its PSS and USS (Linux's
/proc/PID/smaps_rollup: PSS splits a shared page between its sharers, USS counts the pages only it
maps) each second. Each process gets a role: the parent (the CLI), an analysis worker (forked by
the parent), the fork server, a render worker (forked by the fork server), other. Prints the peak
of each role (summed over its processes at one instant), the tree's peak RSS and PSS sums, and the
phase each peak falls in (scan: analysis workers alive; render: render workers alive; between:
neither, the parent planning or building the graph), and each role's CPU (user + system of each of its
processes as last read, summed: a process loses what it ran after its last sample, at most one interval;
py-spy's samples count a process waiting for a core or for the interpreter lock as running, so on a
loaded machine they overstate the parent's and the render workers' share). Per phase (`cpu_by_phase`):
its wall time, each role's CPU and the cores kept busy (CPU / wall; a stretch near 1 on a 2-core machine
is work one process does while the other core waits).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from _common import Polling

ROLES = ("parent", "analysis", "fork server", "render", "other")


def smaps(pid: int) -> tuple[int, int]:
    """(PSS, USS) of `pid` in bytes, from /proc/PID/smaps_rollup; zeros once gone."""
    pss = uss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key == "Pss":
                    pss = int(rest.split()[0]) * 1024
                elif key in ("Private_Clean", "Private_Dirty"):
                    uss += int(rest.split()[0]) * 1024
    except OSError:
        pass
    return pss, uss


def role(proc: psutil.Process, root: int, server: set[int]) -> str:
    try:
        line = " ".join(proc.cmdline())
        ppid = proc.ppid()
    except psutil.Error:
        return "other"
    if proc.pid == root:
        return "parent"
    if ppid in server:
        return "render"
    if "forkserver" in line:
        server.add(proc.pid)
        return "fork server"
    if "resource_tracker" in line:
        return "other"
    if ppid == root:
        return "analysis"
    return "other"


class Sampler(Polling):
    def __init__(self, pid: int, interval: float) -> None:
        super().__init__(interval)
        self.root = psutil.Process(pid)
        self.server: set[int] = set()
        self.roles: dict[int, str] = {}
        self.cpu: dict[int, float] = {}  # pid -> its user + system seconds when last read
        self.samples: list[dict[str, Any]] = []
        self.started = time.monotonic()
        self._next_smaps = 0.0

    def sample(self) -> None:
        now = time.monotonic()
        deep = now >= self._next_smaps
        if deep:
            self._next_smaps = now + 1.0
        try:
            members = [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            return
        row: dict[str, Any] = {"t": round(now - self.started, 2), "deep": deep}
        for name in ROLES:
            row[name] = {"n": 0, "rss": 0, "pss": 0, "uss": 0, "cpu": 0.0}
        for member in members:
            if member.pid not in self.roles:
                self.roles[member.pid] = role(member, self.root.pid, self.server)
            try:
                rss = member.memory_info().rss
                times = member.cpu_times()
            except psutil.Error:
                continue
            cell = row[self.roles[member.pid]]
            cpu = times.user + times.system
            cell["cpu"] += cpu - self.cpu.get(member.pid, 0.0)  # since the last sample
            self.cpu[member.pid] = cpu
            cell["n"] += 1
            cell["rss"] += rss
            if deep:
                pss, uss = smaps(member.pid)
                cell["pss"] += pss
                cell["uss"] += uss
        self.samples.append(row)

    def cpu_by_role(self) -> dict[str, float]:
        """Each role's CPU seconds: its processes' user + system as last read."""
        found = dict.fromkeys(ROLES, 0.0)
        for pid, seconds in self.cpu.items():
            found[self.roles[pid]] += seconds
        return {name: round(seconds, 2) for name, seconds in found.items()}


def phase(row: dict[str, Any]) -> str:
    if row["render"]["n"]:
        return "render"
    if row["analysis"]["n"]:
        return "scan"
    return "between"


def summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """The tree's peaks and each role's, with the phase and time of each."""
    def total(row: dict[str, Any], key: str) -> int:
        return sum(row[name][key] for name in ROLES)

    out: dict[str, Any] = {}
    deep = [r for r in samples if r["deep"]]
    for label, rows, key in (("tree rss", samples, "rss"), ("tree pss", deep, "pss"), ("tree uss", deep, "uss")):
        best = max(rows, key=lambda r: total(r, key))
        out[label] = {"mb": total(best, key) / 1e6, "t": best["t"], "phase": phase(best),
                      "by role": {n: round(best[n][key] / 1e6) for n in ROLES if best[n]["n"]}}
    for name in ROLES:
        for key, rows in (("rss", samples), ("pss", deep), ("uss", deep)):
            best = max(rows, key=lambda r: r[name][key])
            if best[name]["n"]:
                out[f"{name} {key}"] = {"mb": best[name][key] / 1e6, "n": best[name]["n"], "t": best["t"],
                                        "phase": phase(best)}
    phases: dict[str, list[float]] = {}
    for r in samples:
        phases.setdefault(phase(r), []).append(r["t"])
    out["phases"] = {p: (min(ts), max(ts)) for p, ts in phases.items()}
    out["cpu by phase"] = cpu_by_phase(samples)
    return out


def cpu_by_phase(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Per phase (the neither-nor stretches told apart: "start" before the scan, "between" the scan and the
    render, "end" after it): its wall seconds (the intervals ending in its samples), each role's CPU seconds
    and the cores busy on average (CPU / wall)."""
    phases = [phase(row) for row in samples]
    last_render = max((i for i, p in enumerate(phases) if p == "render"), default=len(phases))
    seen_scan = False
    for i, p in enumerate(phases):
        seen_scan = seen_scan or p == "scan"
        if p == "between":
            phases[i] = "end" if i > last_render else "between" if seen_scan else "start"
    out: dict[str, Any] = {}
    for i in range(1, len(samples)):
        before, row = samples[i - 1], samples[i]
        cell = out.setdefault(phases[i], {"wall": 0.0, **{name: 0.0 for name in ROLES}})
        cell["wall"] += row["t"] - before["t"]
        for name in ROLES:
            cell[name] += row[name]["cpu"]
    for cell in out.values():
        cell["cores busy"] = sum(cell[name] for name in ROLES) / cell["wall"] if cell["wall"] else 0.0
        for key in cell:
            cell[key] = round(cell[key], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--pythonpath", help="another version's tree, put first on PYTHONPATH")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--interval", type=float, default=0.25)
    parser.add_argument("--json", type=Path, help="write every sample there")
    parser.add_argument("--keep", type=Path, help="write the tree there (kept) instead of a temporary folder")
    parser.add_argument("--cache", type=Path, help="an empty cache folder, kept")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    with tempfile.TemporaryDirectory(prefix="mem-roles-") as tmp:
        out = args.keep or Path(tmp) / "out"
        env["REPODOC_CACHE_DIR"] = str(args.cache or Path(tmp) / "cache")
        cmd = [sys.executable, "-m", "repodoc_lsp", "generate", str(args.root), "--out", str(out), "--json", "--quiet"]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with Sampler(proc.pid, args.interval) as sampler:
            stdout, stderr = proc.communicate()
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        print(stderr[-3000:], file=sys.stderr)
        return 1
    tree = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime  # every process of it, reaped
    result = {"seconds": seconds, "summary": summary(sampler.samples),
              "cpu": {"tree": round(tree, 2), **sampler.cpu_by_role()},
              "files": json.loads(stdout).get("files")}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps({**result, "samples": sampler.samples}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
