"""Sharding's steps (examples/README.md) on a corpus replicated 1x, 2x, ... (distinct paths): wall time,
CPU time and peak memory (RSS sum of each step's process tree) of one `repodoc generate`, of each
`analyze --shard K/N`, of the graph job (`repodoc graph --pages M`), of the split graph step (L link jobs
`graph --link K/L --pages M`, then `graph --pages J/M --links ...` per page share, and each with L = M = 1:
its answers checked equal to the graph job's, and page jobs answering their share from the link records
themselves, merged and checked equal too), of `generate --facts --graph`
writing every page (a share of one) and each `--pages K/M` share, of `merge` and of the final
`--check`; the merged tree checked equal to the single run's; then each step's cost fitted per file
and extrapolated to 1,000,000 files (`model`).

    python bench/bench_shards.py                               # the scale corpus (corpus_large.py), 1x and 2x
    python bench/bench_shards.py --corpus torch --scales 1,2   # PyTorch's sources only (corpus.py)
    python bench/bench_shards.py --records results/shards-A.json results/shards-B.json   # one model of both

Results go to bench/results/shards-*.json; figures to bench/README.md. Not a test.
"""

from __future__ import annotations

import argparse
import filecmp
import gzip
import json
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt_mb, fmt_s, run_measured, scratch_folder, table, write_results

MANIFEST = ".repodoc-manifest.json.gz"
TARGET_FILES = 1_000_000
RUNNER_MEMORY = 7 << 30  # a standard GitHub-hosted runner: 7 GB, 2 cores
WALL_BUDGET = 30 * 60  # seconds, the whole run
CORES = 2  # a runner's


def corpus_root(name: str) -> Path:
    if name == "torch":
        from corpus import ensure_corpus

        return ensure_corpus().parent  # the folder holding torch/
    from corpus_large import ensure_large_corpus

    return ensure_large_corpus()


def replicate(corpus: Path, root: Path, times: int) -> int:
    """`root/r1/..`, `root/r2/..`: the corpus `times` over under distinct paths (hard links); its files."""
    for i in range(1, times + 1):
        shutil.copytree(corpus, root / f"r{i}", copy_function=os.link)
    return sum(1 for p in root.rglob("*.py"))


def repodoc(*args: object) -> list[str]:
    return [sys.executable, "-m", "repodoc_lsp", *map(str, args)]


def step(record: dict[str, Any], name: str, cmd: list[str], before: Path | None = None) -> None:
    """Run and measure `cmd`; `before`: with another version's sources first on the path (and as its folder)."""
    env = None if before is None else {**os.environ, "PYTHONPATH": str(before)}
    measured = run_measured(cmd, timeout=7200, env=env, cwd=before)
    if measured.proc.returncode != 0:
        raise RuntimeError(f"{name}: exit {measured.proc.returncode}\n{measured.proc.stderr[-3000:]}")
    record[name] = {"seconds": round(measured.seconds, 2), "cpu": round(measured.cpu_seconds, 2),
                    "peak_rss": measured.peak_rss, "peak_single": measured.peak_single}
    print(f"  {name:<14} {fmt_s(measured.seconds):>8}  {fmt_s(measured.cpu_seconds):>8} CPU  "
          f"{fmt_mb(measured.peak_rss):>9}", flush=True)


def same_tree(a: Path, b: Path) -> bool:
    """The two trees hold the same files, byte for byte, and manifests equal but for modification times."""
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    if files != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()):
        return False
    if not all(filecmp.cmp(a / f, b / f, shallow=False) for f in files if f.name != MANIFEST):
        return False

    def manifest(out: Path) -> Any:
        table_ = json.loads(gzip.decompress((out / MANIFEST).read_bytes()))
        table_["pages"] = {page: [e[0], e[1], e[3]] for page, e in table_["pages"].items()}
        return table_
    return manifest(a) == manifest(b)


def inflated(folder: Path) -> dict[str, bytes]:
    """The answers files of a folder, inflated, by name."""
    return {p.name: gzip.decompress(p.read_bytes()) for p in sorted(folder.iterdir())}


def linked(steps: dict[str, Any], root: Path, out: Path, facts: list[Path], links: int, m: int) -> Path:
    """`links` link jobs, then a graph job per page share of `m` from their records (the partitioned graph
    step); the folder of the answers."""
    folders = [root.parent / f"links-{k}-of-{links}" for k in range(1, links + 1)]
    for k, folder in enumerate(folders, 1):
        step(steps, f"link {k}/{links}", repodoc("graph", root, "--out", out, "--facts", *facts, "--link",
                                                 f"{k}/{links}", "--pages", m, "--output", folder))
    answers = root.parent / f"answers-{links}-{m}"
    for j in range(1, m + 1):
        step(steps, f"answer {j}/{m}", repodoc("graph", root, "--out", out, "--facts", *facts, "--pages", f"{j}/{m}",
                                               "--links", *folders, "--output", answers))
    return answers


def measure(corpus: Path, times: int, tmp: Path, n: int, m: int, jobs: int, links: int = 2,
            before: Path | None = None, keep: bool = False) -> dict[str, Any]:
    """Every step on the corpus replicated `times` over, in `tmp`; `before` (the sources of another version):
    its `merge` of the same shares too, first ("merge (before)")."""
    root = tmp / f"x{times}" / "ws"
    files = replicate(corpus, root, times)
    print(f"{times}x: {files:,} files", flush=True)
    out = root.parent / "docs-out"  # outside the root: no input
    flags = ["--out", out, "--cache-dir", tmp / "cache", "--no-cache", "-q", "--jobs", jobs]
    record: dict[str, Any] = {"times": times, "files": files, "n": n, "m": m, "links": links, "steps": {}}
    steps = record["steps"]
    step(steps, "single", repodoc("generate", root, *flags))
    single = out.rename(root.parent / "single")
    facts = [root.parent / f"facts-{k}.jsonl.gz" for k in range(1, n + 1)]
    for k, path in enumerate(facts, 1):
        step(steps, f"analyze {k}/{n}", repodoc("analyze", root, "--shard", f"{k}/{n}", "--output", path, "--out",
                                                out, "--no-cache", "--jobs", jobs))
    record["facts_bytes"] = sum(p.stat().st_size for p in facts)
    graph, whole = root.parent / "graph", root.parent / "graph-1"
    step(steps, "graph", repodoc("graph", root, "--out", out, "--facts", *facts, "--pages", m, "--output", graph))
    record["answers_bytes"] = sum(p.stat().st_size for p in graph.iterdir())
    step(steps, "graph 1", repodoc("graph", root, "--out", out, "--facts", *facts, "--pages", 1, "--output", whole))
    step(steps, "pages 1/1", repodoc("generate", root, *flags, "--facts", *facts, "--pages", "1/1", "--graph", whole))
    shutil.rmtree(out)
    answered = linked(steps, root, out, facts, links, m)  # the partitioned graph step: the same answers
    record["links_bytes"] = sum(p.stat().st_size for p in root.parent.glob("links-*/*"))
    record["answers_equal"] = inflated(answered) == inflated(graph)
    one = linked(steps, root, out, facts, 1, 1)  # one link job, one share: what each holds for every file
    record["answers_equal"] &= inflated(one) == inflated(whole)
    print(f"  answers from link jobs == the graph job's: {record['answers_equal']}", flush=True)
    shares = []
    for k in range(1, m + 1):
        step(steps, f"pages {k}/{m}", repodoc("generate", root, *flags, "--facts", *facts, "--pages", f"{k}/{m}",
                                              "--graph", graph))
        shares.append(out.rename(root.parent / f"pages-{k}"))
    if before is not None:  # into the same folder (the shares' links are relative to it), emptied after
        step(steps, "merge (before)", repodoc("merge", *shares, "--out", out), before)
        record["equal_before"] = same_tree(single, out)
        shutil.rmtree(out)
    step(steps, "merge", repodoc("merge", *shares, "--out", out))
    step(steps, "check", repodoc("generate", root, *flags, "--facts", *facts, "--check"))
    record["equal"] = same_tree(single, out)
    shutil.rmtree(out)
    together = root.parent / "links-together"  # as the example workflow's page jobs download them
    for folder in root.parent.glob(f"links-*-of-{links}"):
        shutil.copytree(folder, together, dirs_exist_ok=True)
    from_links = []
    for k in range(1, m + 1):  # each answering its share from the link records, then rendering it
        step(steps, f"pages {k}/{m} (links)", repodoc("generate", root, *flags, "--facts", *facts, "--pages",
                                                      f"{k}/{m}", "--graph", together))
        from_links.append(out.rename(root.parent / f"pages-links-{k}"))
    step(steps, "merge (links)", repodoc("merge", *from_links, "--out", out))
    record["equal"] &= same_tree(single, out)
    print(f"  merged tree == single run's: {record['equal']}", flush=True)
    if not keep:  # a scale's copy of the corpus and its trees go before the next scale's
        shutil.rmtree(root.parent)
    return record


def measure_workflow(corpus: Path, times: int, tmp: Path, n: int, m: int, jobs: int, links: int,
                     single_run: bool = True, split: bool = True, keep: bool = False) -> dict[str, Any]:
    """The steps of the example workflow only (examples/README.md), on the corpus replicated `times` over: one
    `generate` (the tree to equal; not when `single_run` is False), N analyze jobs, L link jobs and M page jobs
    answering their share from the link records, the merge and the final `--check`; besides, one link job and
    one page job of a single share (not when `split` is False), which split each job's cost into what it pays
    for the whole tree and for its share."""
    root = tmp / f"x{times}" / "ws"
    files = replicate(corpus, root, times)
    print(f"{times}x: {files:,} files (workflow)", flush=True)
    out = root.parent / "docs-out"  # outside the root: no input
    flags = ["--out", out, "--cache-dir", tmp / "cache", "--no-cache", "-q", "--jobs", jobs]
    record: dict[str, Any] = {"times": times, "files": files, "n": n, "m": m, "links": links, "workflow": True,
                              "steps": {}}
    steps = record["steps"]
    single = root.parent / "single"
    if single_run:
        step(steps, "single", repodoc("generate", root, *flags))
        out.rename(single)
    facts = [root.parent / f"facts-{k}.jsonl.gz" for k in range(1, n + 1)]
    for k, path in enumerate(facts, 1):
        step(steps, f"analyze {k}/{n}", repodoc("analyze", root, "--shard", f"{k}/{n}", "--output", path, "--out",
                                                out, "--no-cache", "--jobs", jobs))
    record["facts_bytes"] = sum(p.stat().st_size for p in facts)
    for count, folder in ((links, root.parent / "links"), (1, root.parent / "links-one"))[:2 if split else 1]:
        for k in range(1, count + 1):  # each link job's records into one folder, as the workflow downloads them
            step(steps, f"link {k}/{count}", repodoc("graph", root, "--out", out, "--facts", *facts, "--link",
                                                     f"{k}/{count}", "--pages", m if count > 1 else 1,
                                                     "--output", folder))
    record["links_bytes"] = sum(p.stat().st_size for p in (root.parent / "links").iterdir())
    if split:
        step(steps, "page 1/1", repodoc("generate", root, *flags, "--facts", *facts, "--pages", "1/1", "--graph",
                                        root.parent / "links-one"))
        shutil.rmtree(out)
    shares = []
    for k in range(1, m + 1):
        step(steps, f"page {k}/{m}", repodoc("generate", root, *flags, "--facts", *facts, "--pages", f"{k}/{m}",
                                             "--graph", root.parent / "links"))
        shares.append(out.rename(root.parent / f"pages-{k}"))
    step(steps, "merge", repodoc("merge", *shares, "--out", out))
    step(steps, "check", repodoc("generate", root, *flags, "--facts", *facts, "--check"))
    if single_run:  # else the final check above is the proof: it exits non-zero on a page out of date
        record["equal"] = same_tree(single, out)
        print(f"  merged tree == single run's: {record['equal']}", flush=True)
    if not keep:  # a scale's copy of the corpus and its trees go before the next scale's
        shutil.rmtree(root.parent)
    return record


def model_workflow(records: list[dict[str, Any]], jobs: int = 32, files: int = TARGET_FILES) -> dict[str, Any]:
    """Per-file fits of the workflow's steps and each step's wall time and peak at `files` files with `jobs`
    jobs per step. CPU seconds stand for wall time: an analyze job's / CORES (its work is on worker processes),
    a link job's as they are (serial); a page job's share between the two (its rendering is on workers, its
    answers are not), both given."""
    n, m, links = records[0]["n"], records[0]["m"], records[0]["links"]
    fits: dict[str, Any] = {}
    for key in ("cpu", "peak_rss"):
        fits.setdefault("analyze", {})[key] = _fit(
            [(r["files"] / n, max(r["steps"][f"analyze {k}/{n}"][key] for k in range(1, n + 1))) for r in records])
        for kind in ("single", "merge", "check"):
            fits.setdefault(kind, {})[key] = _fit([(r["files"], r["steps"][kind][key]) for r in records
                                                   if kind in r["steps"]])
    split = [r for r in records if "page 1/1" in r["steps"]]
    fits["link tree"], fits["link share"] = _split(split, "link", links)
    fits["page tree"], fits["page share"] = _split(split, "page", m)
    # a page job by its share's files (its tree part, 0.1 ms and a few KB a file of the tree, is within the noise of
    # the split above on a loaded machine, which can make it negative): the worst share at each scale
    fits["page job"] = {key: _fit([(r["files"] / m, max(r["steps"][f"page {k}/{m}"][key] for k in range(1, m + 1)))
                                   for r in records]) for key in ("cpu", "peak_rss")}

    def part(kind: str, key: str, divide: float = 1) -> float:
        return _at(fits[f"{kind} tree"][key], files) + _at(fits[f"{kind} share"][key], files) / jobs / divide
    analyze, page_job = fits["analyze"], fits["page job"]
    steps = {"analyze": (_at(analyze["cpu"], files / jobs) / CORES, _at(analyze["peak_rss"], files / jobs)),
             "link": (part("link", "cpu"), part("link", "peak_rss")),
             "page": (_at(page_job["cpu"], files / jobs) / CORES, _at(page_job["peak_rss"], files / jobs)),
             "merge": (_at(fits["merge"]["cpu"], files), _at(fits["merge"]["peak_rss"], files)),
             "check": (_at(fits["check"]["cpu"], files), _at(fits["check"]["peak_rss"], files))}
    return {"fits": fits, "target": {"files": files, "jobs": jobs, "steps": steps,
                                     "page_serial": _at(page_job["cpu"], files / jobs),
                                     "whole": sum(wall for wall, _ in steps.values()),
                                     "whole_serial": sum(wall for wall, _ in steps.values()) - steps["page"][0]
                                     + _at(page_job["cpu"], files / jobs),
                                     "single": (_at(fits["single"]["cpu"], files) / CORES,
                                                _at(fits["single"]["peak_rss"], files)),
                                     "facts_bytes": _at(_fit([(r["files"], r["facts_bytes"]) for r in records]),
                                                        files)}}


def report_workflow(records: list[dict[str, Any]], result: dict[str, Any]) -> None:
    report_steps(records)
    fits = result["fits"]
    for r in records:  # the split's fits (made where a single share ran) against every scale's worst share
        for kind, shares in (("link", r["links"]), ("page", r["m"])):
            worst = max(r["steps"][f"{kind} {k}/{shares}"]["cpu"] for k in range(1, shares + 1))
            said = _at(fits[f"{kind} tree"]["cpu"], r["files"]) + _at(fits[f"{kind} share"]["cpu"], r["files"]) / shares
            print(f"  {r['times']}x, a {kind} job of {shares}: {fmt_s(worst)} CPU measured, {fmt_s(said)} fitted")
    t = result["target"]
    print(f"\nmodel for {t['files']:,} files, {t['jobs']} jobs per step ({CORES}-core runners of "
          f"{fmt_mb(RUNNER_MEMORY)}; CPU seconds as wall):")
    for kind, (wall, peak) in t["steps"].items():
        more = f" (to {fmt_s(t['page_serial'])} if its share were serial; fitted on its share's files)" \
            if kind == "page" else ""
        print(f"  {kind}: {fmt_s(wall)}{more}, peak {fmt_mb(peak)} "
              f"({'fits' if peak < RUNNER_MEMORY else 'does NOT fit'})")
    print(f"  whole run: {fmt_s(t['whole'])} to {fmt_s(t['whole_serial'])} (budget {WALL_BUDGET // 60} min); "
          f"facts files to download {fmt_mb(t['facts_bytes'])}; one machine {fmt_s(t['single'][0])}, "
          f"peak {fmt_mb(t['single'][1])}")


def _fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(a, b) of y = a + b x through the points (least squares; one point: through the origin)."""
    if len(points) == 1:
        x, y = points[0]
        return 0.0, y / x
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    b = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return my - b * mx, b


def _per_step(records: list[dict[str, Any]], key: str) -> dict[str, list[tuple[float, float]]]:
    """kind -> (files, value) points: each kind's worst share (analyze, pages) at each scale."""
    found: dict[str, list[tuple[float, float]]] = {}
    for r in records:
        s, n, m = r["steps"], r["n"], r["m"]
        worst = {"analyze": max(s[f"analyze {k}/{n}"][key] for k in range(1, n + 1)),
                 "pages share": max(s[f"pages {k}/{m}"][key] for k in range(1, m + 1))}
        if "links" in r:
            links = r["links"]
            worst["link share"] = max(s[f"link {k}/{links}"][key] for k in range(1, links + 1))
            worst["answer share"] = max(s[f"answer {k}/{m}"][key] for k in range(1, m + 1))
        for kind, value in {"single": s["single"][key], **worst, "pages all": s["pages 1/1"][key],
                            "graph": s["graph"][key], "merge": s["merge"][key], "check": s["check"][key]}.items():
            found.setdefault(kind, []).append((r["files"], value))
    return found


def model(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-file fits and what they say of TARGET_FILES files on 2-core, 7 GB runners.

    Times are CPU seconds (steady on a loaded machine, where wall time is not), made a 2-core
    runner's wall time: work spread on worker processes (analysis, rendering) CPU / CORES, the rest
    CPU (the graph job, a page job's reading of the facts files, the merge, the check). analyze K/N handles
    F/N files: fitted on its share. A page job pays A(F) for every file (its line of the facts files,
    its imports, its source digested) and its share of R(F) (its own files' facts and answers, their
    pages): the m shares sum to m A + R, the all-pages run (a share of one) to A + R. Its memory is
    likewise H(F) + O(F) / M: the all-pages run's peak is H + O, the worst share's H + O / m."""
    n, m = records[0]["n"], records[0]["m"]
    cpu, memory = _per_step(records, "cpu"), _per_step(records, "peak_rss")
    fits = {kind: {"cpu": _fit(cpu[kind]), "peak_rss": _fit(memory[kind])} for kind in cpu}
    fits["analyze"] = {"cpu": _fit([(f / n, v) for f, v in cpu["analyze"]]),
                       "peak_rss": _fit([(f / n, v) for f, v in memory["analyze"]])}
    hold, render, held, own = [], [], [], []
    for r in records:
        s = r["steps"]
        shares = sum(s[f"pages {k}/{m}"]["cpu"] for k in range(1, m + 1))
        whole = s["pages 1/1"]["cpu"]
        a = (shares - whole) / (m - 1) if m > 1 else 0.0
        hold.append((r["files"], a))
        render.append((r["files"], whole - a))
        worst = max(s[f"pages {k}/{m}"]["peak_rss"] for k in range(1, m + 1))
        o = (s["pages 1/1"]["peak_rss"] - worst) * m / (m - 1) if m > 1 else 0.0
        held.append((r["files"], s["pages 1/1"]["peak_rss"] - o))
        own.append((r["files"], o))
    fits["hold"] = {"cpu": _fit(hold), "peak_rss": _fit(held)}
    fits["render"] = {"cpu": _fit(render), "peak_rss": _fit(own)}
    if all("links" in r for r in records):
        for kind, shares in (("link", records[0]["links"]), ("answer", m)):
            fits[f"{kind} tree"], fits[f"{kind} share"] = _split(records, kind, shares)
    return {"fits": fits, "target": extrapolate(fits)}


def _split(records: list[dict[str, Any]], kind: str, shares: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fits of a partitioned step (`kind` K/`shares` and 1/1): what a job pays for every file of the
    tree (T), and what the whole of the step's own work costs (S), a job doing S / `shares`: the shares'
    CPU sums to shares T + S, the 1/1 job's to T + S; the worst share's peak is T + S / shares."""
    tree_cpu, share_cpu, tree_mem, share_mem = [], [], [], []
    for r in records:
        s, f = r["steps"], r["files"]
        whole = s[f"{kind} 1/1"]
        total = sum(s[f"{kind} {k}/{shares}"]["cpu"] for k in range(1, shares + 1))
        t = (total - whole["cpu"]) / (shares - 1) if shares > 1 else 0.0
        tree_cpu.append((f, t))
        share_cpu.append((f, whole["cpu"] - t))
        worst = max(s[f"{kind} {k}/{shares}"]["peak_rss"] for k in range(1, shares + 1))
        o = (whole["peak_rss"] - worst) * shares / (shares - 1) if shares > 1 else 0.0
        tree_mem.append((f, whole["peak_rss"] - o))
        share_mem.append((f, o))
    return ({"cpu": _fit(tree_cpu), "peak_rss": _fit(tree_mem)}, {"cpu": _fit(share_cpu), "peak_rss": _fit(share_mem)})


def _at(fit: tuple[float, float], x: float) -> float:
    return fit[0] + fit[1] * x


def extrapolate(fits: dict[str, Any], files: int = TARGET_FILES) -> dict[str, Any]:
    """For `files`: the fewest analysis jobs N each under 7 GB and a third of the budget; the fewest page
    jobs M each under 7 GB that render in what is left; each step's peak memory against a runner's."""
    analyze_cpu, analyze_mem = fits["analyze"]["cpu"], fits["analyze"]["peak_rss"]
    n = next((k for k in range(1, 100_000) if _at(analyze_cpu, files / k) / CORES <= WALL_BUDGET / 3
              and _at(analyze_mem, files / k) < RUNNER_MEMORY), None)
    analyze_wall = _at(analyze_cpu, files / n) / CORES if n else math.nan
    hold, render = _at(fits["hold"]["cpu"], files), _at(fits["render"]["cpu"], files)
    held, own = _at(fits["hold"]["peak_rss"], files), _at(fits["render"]["peak_rss"], files)
    serial = {kind: _at(fits[kind]["cpu"], files) for kind in ("graph", "merge", "check")}
    left = WALL_BUDGET - analyze_wall - sum(serial.values())
    m = None
    fits_memory = math.ceil(own / (RUNNER_MEMORY - held)) if held < RUNNER_MEMORY else None  # M, time aside
    if left > hold and held < RUNNER_MEMORY:
        m = max(math.ceil(render / CORES / (left - hold)), math.ceil(own / (RUNNER_MEMORY - held)), 1)
    peaks = {kind: _at(fits[kind]["peak_rss"], files) for kind in ("single", "graph", "merge", "check")}
    partitioned = _partitioned(fits, files, left + serial["graph"], hold, render, held, own) \
        if "link tree" in fits else {}
    return {**partitioned, "largest": _largest(fits), "files": files, "analyze_jobs": n, "analyze_wall": analyze_wall,
            "analyze_peak": _at(analyze_mem, files / n) if n else math.nan, "page_hold_wall": hold,
            "page_hold_peak": held, "render_cpu": render, "render_peak": own, "page_jobs": m,
            "page_wall": hold + render / CORES / m if m else math.nan,
            "pages share_peak": held + own / m if m else math.nan, "merge_wall": serial["merge"],
            "graph_wall": serial["graph"], "page_jobs_memory": fits_memory,
            "check_wall": serial["check"], "single_wall": _at(fits["single"]["cpu"], files) / CORES,
            **{f"{k}_peak": v for k, v in peaks.items()}}


def _partitioned(fits: dict[str, Any], files: int, left: float, hold: float, render: float, held: float,
                 own: float) -> dict[str, Any]:
    """The graph step split (link jobs, then each page job answering its share before rendering it), in
    the `left` seconds the analysis, merge and check leave: the fewest link jobs L under a runner's memory
    within a third of them, then the fewest page jobs M under it within the rest."""
    def part(kind: str, key: str, shares: int) -> float:
        return _at(fits[f"{kind} tree"][key], files) + _at(fits[f"{kind} share"][key], files) / shares

    def page_wall(m: int) -> float:
        return hold + render / CORES / m + part("answer", "cpu", m)

    def page_peak(m: int) -> float:
        return max(held + own / m, part("answer", "peak_rss", m))
    links = next((k for k in range(1, 4097) if part("link", "peak_rss", k) < RUNNER_MEMORY
                  and part("link", "cpu", k) <= left / 3), None)
    link_wall = part("link", "cpu", links) if links else math.nan
    m = next((k for k in range(1, 4097) if page_peak(k) < RUNNER_MEMORY and link_wall + page_wall(k) <= left), None) \
        if links else None
    return {"link_jobs": links, "link_wall": link_wall, "link_peak": part("link", "peak_rss", links) if links else 0,
            "link_tree_peak": _at(fits["link tree"]["peak_rss"], files),
            "answer_tree_peak": _at(fits["answer tree"]["peak_rss"], files),
            "answer_tree_cpu": _at(fits["answer tree"]["cpu"], files),
            "link_tree_cpu": _at(fits["link tree"]["cpu"], files), "split_page_jobs": m,
            "split_page_wall": page_wall(m) if m else math.nan, "split_page_peak": page_peak(m) if m else math.nan,
            "split_answer_wall": part("answer", "cpu", m) if m else math.nan,
            "split_answer_peak": part("answer", "peak_rss", m) if m else math.nan}


def _largest(fits: dict[str, Any], most_pages: int = 64) -> int:
    """The most files (to 10,000) for which every job stays under a runner's memory: a page job with up
    to `most_pages` shares, the graph job, the merge and the check (the analysis has as many shards as it
    needs)."""
    def fit(files: int) -> bool:
        page = _at(fits["hold"]["peak_rss"], files) + _at(fits["render"]["peak_rss"], files) / most_pages
        return max(page, *(_at(fits[kind]["peak_rss"], files) for kind in ("graph", "merge", "check"))) < RUNNER_MEMORY
    files = 0
    while files < 100 * TARGET_FILES and fit(files + 10_000):
        files += 10_000
    return files


def report_steps(records: list[dict[str, Any]]) -> None:
    names = list(dict.fromkeys(name for r in records for name in r["steps"]))

    def cell(s: dict[str, Any]) -> str:
        return f"{fmt_s(s['seconds'])} ({fmt_s(s['cpu'])} CPU) / {fmt_mb(s['peak_rss'])}"
    rows = [[name, *(cell(r["steps"][name]) if name in r["steps"] else "-" for r in records)] for name in names]
    print(table(rows, ["step: wall (CPU) / peak RSS", *(f"{r['times']}x ({r['files']:,} files)" for r in records)]))


def report(records: list[dict[str, Any]], result: dict[str, Any]) -> None:
    report_steps(records)
    t = result["target"]

    def fits(nbytes: float) -> str:
        return f"{fmt_mb(nbytes)} ({'fits' if nbytes < RUNNER_MEMORY else 'does NOT fit'})"
    print(f"\nmodel for {t['files']:,} files ({CORES}-core runners of {fmt_mb(RUNNER_MEMORY)}, "
          f"{WALL_BUDGET // 60} min in all):")
    print(f"  one machine: {fmt_s(t['single_wall'])}, peak {fits(t['single_peak'])}")
    print(f"  analyze: N = {t['analyze_jobs']} jobs of {fmt_s(t['analyze_wall'])}, peak {fits(t['analyze_peak'])}")
    print(f"  graph job: {fmt_s(t['graph_wall'])}, peak {fits(t['graph_peak'])}")
    print(f"  a page job: {fmt_s(t['page_hold_wall'])} and {fmt_mb(t['page_hold_peak'])} for every file (its "
          f"line of the facts files, its imports), its own files' facts, answers and pages "
          f"{fmt_s(t['render_cpu'])} CPU and {fmt_mb(t['render_peak'])} in all, / M -> M = {t['page_jobs']}: "
          f"{fmt_s(t['page_wall'])}, peak {fits(t['pages share_peak'])} (under {fmt_mb(RUNNER_MEMORY)} from "
          f"M = {t['page_jobs_memory']}, time aside)")
    print(f"  merge: {fmt_s(t['merge_wall'])}, peak {fits(t['merge_peak'])}; check: {fmt_s(t['check_wall'])}, "
          f"peak {fits(t['check_peak'])}")
    print(f"  every job under {fmt_mb(RUNNER_MEMORY)} (up to 64 page shares) up to {t['largest']:,} files")
    if "link_jobs" in t:
        print(f"  the graph step split: a link job pays {fmt_s(t['link_tree_cpu'])} CPU and "
              f"{fmt_mb(t['link_tree_peak'])} for the tree, an answer step {fmt_s(t['answer_tree_cpu'])} and "
              f"{fmt_mb(t['answer_tree_peak'])}; "
              f"L = {t['link_jobs']} link jobs of {fmt_s(t['link_wall'])}, peak {fits(t['link_peak'])}; "
              f"M = {t['split_page_jobs']} page jobs of {fmt_s(t['split_page_wall'])} (answers "
              f"{fmt_s(t['split_answer_wall'])}, peak {fmt_mb(t['split_answer_peak'])}), "
              f"peak {fits(t['split_page_peak'])}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("large", "torch"), default="large")
    parser.add_argument("--scales", default="1,2", help="replications, comma-separated (default: 1,2)")
    parser.add_argument("--analyze", type=int, default=3, help="analysis shards N (default: 3)")
    parser.add_argument("--pages", type=int, default=2, help="page shares M (default: 2)")
    parser.add_argument("--links", type=int, default=2, help="link jobs L of the split graph step (default: 2)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument("--before", type=Path, metavar="SRC",
                        help="the sources of another version (e.g. a `git archive` of main): its merge measured too")
    parser.add_argument("--workflow", action="store_true",
                        help="only the example workflow's steps (a third of the time): the issue's 1x/2x/4x run")
    parser.add_argument("--single-scales", metavar="SCALES",
                        help="with --workflow: the scales at which one `generate` is run and the merged tree compared "
                             "with it (default: every scale)")
    parser.add_argument("--split-scales", metavar="SCALES",
                        help="with --workflow: the scales at which one link job and one page job of a single share "
                             "are run, to split each job's cost into its tree part and its share part (default: every "
                             "scale)")
    parser.add_argument("--records", nargs="+", type=Path, metavar="JSON",
                        help="measure nothing: model the records of these results files (runs of other scales)")
    args = parser.parse_args(argv)
    records = []
    if args.records:
        for path in args.records:
            records.extend(json.loads(path.read_text())["records"])
        records.sort(key=lambda r: r["files"])
    else:
        corpus = corpus_root(args.corpus)
        with scratch_folder("repodoc-shards-", keep=args.keep) as tmp:
            for times in (int(s) for s in args.scales.split(",")):
                if args.workflow:
                    single_run = args.single_scales is None or str(times) in args.single_scales.split(",")
                    split = args.split_scales is None or str(times) in args.split_scales.split(",")
                    records.append(measure_workflow(corpus, times, tmp, args.analyze, args.pages, args.jobs,
                                                    args.links, single_run, split, args.keep))
                    write_results("shards-workflow", {"corpus": args.corpus, "records": records})  # kept as it goes
                else:
                    records.append(measure(corpus, times, tmp, args.analyze, args.pages, args.jobs, args.links,
                                           args.before, args.keep))
    if records[0].get("workflow"):
        if not any("single" in r["steps"] for r in records) or not any("page 1/1" in r["steps"] for r in records):
            report_steps(records)  # the model needs one scale with the single run and the split jobs
            print("no model: no scale ran one `generate` and the single-share jobs (add it with --records)")
            return 0
        result = model_workflow(records)
        report_workflow(records, result)
        write_results("shards-workflow", {"corpus": args.corpus, "records": records, **result})
        return 0 if all(r.get("equal", True) for r in records) else 1
    result = model(records)
    report(records, result)
    write_results("shards", {"corpus": args.corpus, "records": records, **result})
    return 0 if all(r["equal"] and r.get("answers_equal", True) for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
