"""Link jobs (`repodoc graph --link K/L --pages M`) of two versions, A/B: CPU and peak memory of each job's process
tree, rounds alternating which version runs first, their records compared byte for byte; then what a link job pays
per file of the tree (T) and per file of its share (S), fitted as bench_shards.py does (the L jobs sum to L T + S,
the one-share job to T + S), and the link step at 1,000,000 files and 32 jobs (T + S / 32).

    python bench/bench_linkjobs.py facts --scale 1 --out /tmp/x1          # the scale corpus's facts (analyze N=3)
    python bench/bench_linkjobs.py facts --scale 2 --out /tmp/x2 --from /tmp/x1   # replicated from the 1x facts
    python bench/bench_linkjobs.py run --before /tmp/main-src --root /tmp/x1/ws --facts /tmp/x1/facts-*.jsonl.gz
    python bench/bench_linkjobs.py model results/linkjobs-*.json

`facts --from` writes the facts files of the corpus replicated (root/r1, root/r2, ...: bench_shards.py's layout) from
the 1x files without analysing again: a file's facts are its content's (the analysis cache's key is the content and
the name's suffix), so each copy's are the original's. Results go to bench/results/linkjobs-*.json. Not a test.
"""

from __future__ import annotations

import argparse
import filecmp
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import run_measured, write_results
from bench_shards import TARGET_FILES, _at, _fit, corpus_root

REPO = Path(__file__).resolve().parent.parent
JOBS = 32  # link jobs at TARGET_FILES (bench/README.md, issue 40's model)


def make_facts(scale: int, out: Path, source: Path | None, n: int = 3) -> None:
    """`out/ws` (the scale corpus `scale` times under r1, r2, ...) and its N facts files `out/facts-K.jsonl.gz`."""
    root = out / "ws"
    if not root.exists():
        for i in range(1, scale + 1):
            shutil.copytree(corpus_root("large"), root / f"r{i}", copy_function=os.link)
    facts = [out / f"facts-{k}.jsonl.gz" for k in range(1, n + 1)]
    if source is None:
        for k, path in enumerate(facts, 1):
            subprocess.run([sys.executable, "-m", "repodoc_lsp", "analyze", root, "--shard", f"{k}/{n}", "--output",
                            path, "--out", out / "docs", "--no-cache", "-q"], check=True)
        return
    sys.path.insert(0, str(REPO))
    from repodoc_lsp.config import Settings
    from repodoc_lsp.shard.facts_file import FactsReader, FactsWriter, Record, tree_of
    from repodoc_lsp.shard.split import file_share
    from repodoc_lsp.store.discover import discover

    records: dict[str, Record] = {}
    lines: dict[str, bytes] = {}  # a file's facts line, decoded when written
    reader = None
    for path in sorted(source.glob("facts-*.jsonl.gz")):
        reader = FactsReader(path)
        records.update((r.path.split("/", 1)[1], r) for r in reader.records(light=True))  # by their path in r1/
        reader.close()
        data = gzip.decompress(path.read_bytes()).split(b"\n")
        for i, line in enumerate(data):
            if line.startswith(b'{"path":') and b'"pages":' in line:
                lines[json.loads(line)["path"]] = data[i + 1]
    assert reader is not None
    found = discover(root, Settings(output=str(out / "docs")))
    for k, path in enumerate(facts, 1):
        mine = [rel for rel in found.files if file_share(rel, n) == k]
        writer = FactsWriter(path, tree_of(root, found.files), (k, n), len(mine))
        for rel in mine:
            record = records[rel.split("/", 1)[1]]  # rK/a.py: r1/a.py's copy
            facts = reader.with_facts(record, lines[record.path]).facts if record.analysed else None
            writer.add(Record(rel, record.digest, record.size, facts, record.skipped))
        writer.close()


def run(before: Path, root: Path, facts: list[str], rounds: int, links: int, pages: int, start: int = 0
        ) -> dict[str, Any]:
    """Each link job of `links` (`pages` page shares) and the one-share job, of both versions, `rounds` times
    (round r runs the version before first when r is even; `start`: the first round's r)."""
    versions = {"before": before, "after": REPO}
    work = root.parent / "linkjobs"
    jobs = [(links, k, pages) for k in range(1, links + 1)] + [(1, 1, 1)]
    found: list[dict[str, Any]] = []
    work.mkdir(exist_ok=True)
    for r in range(start, start + rounds):
        for n, k, m in jobs:
            outs = {}
            for name in (("before", "after") if r % 2 == 0 else ("after", "before")):
                out = outs[name] = work / f"{name}-{k}-of-{n}"
                shutil.rmtree(out, ignore_errors=True)
                load = os.getloadavg()[0]
                measured = run_measured([sys.executable, "-m", "repodoc_lsp", "graph", str(root), "--out",
                                         str(work / "docs"), "--facts", *facts, "--link", f"{k}/{n}", "--pages",
                                         str(m), "--output", str(out), "-q"],
                                        env={**os.environ, "PYTHONPATH": str(versions[name])}, timeout=7200,
                                        cwd=work)  # (`-m` takes the current folder's package before PYTHONPATH)
                if measured.proc.returncode:
                    raise RuntimeError(measured.proc.stderr[-3000:])
                found.append({"round": r, "version": name, "job": f"{k}/{n}", "cpu": round(measured.cpu_seconds, 2),
                              "peak_rss": measured.peak_rss, "load": [round(load, 1), round(os.getloadavg()[0], 1)]})
                print(json.dumps(found[-1]), flush=True)
            names = sorted(os.listdir(outs["before"]))
            same = names == sorted(os.listdir(outs["after"])) and all(
                filecmp.cmp(outs["before"] / f, outs["after"] / f, shallow=False) for f in names)
            print(f"  link {k}/{n}: records byte-identical: {same}", flush=True)
            if not same:
                raise RuntimeError(f"link {k}/{n}: the versions' records differ")
    files = sum(1 for p in root.rglob("*") if p.is_file())
    return {"files": files, "links": links, "jobs": found}


def model(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per version: T and S per file (medians of the rounds), fitted over the scales; the link step at 1M."""
    result: dict[str, Any] = {}
    for name in ("before", "after"):
        tree, share = [], []
        for rec in records:
            links = rec["links"]
            whole = _median(rec, name, "1/1")
            t = (sum(_median(rec, name, f"{k}/{links}") for k in range(1, links + 1)) - whole) / (links - 1)
            tree.append((rec["files"], t))
            share.append((rec["files"], whole - t))
        t_fit, s_fit = _fit(tree), _fit(share)
        result[name] = {"tree": tree, "share": share, "tree_fit": t_fit, "share_fit": s_fit,
                        "step_cpu": _at(t_fit, TARGET_FILES) + _at(s_fit, TARGET_FILES) / JOBS,
                        "tree_cpu": _at(t_fit, TARGET_FILES)}
        print(f"{name}: T {t_fit[1] * 1000:.3f} ms a tree file (+{t_fit[0]:.1f} s), S {s_fit[1] * 1000:.3f} ms a "
              f"share file; at {TARGET_FILES:,} files and {JOBS} jobs: the tree part "
              f"{result[name]['tree_cpu'] / 60:.1f} min, a link job {result[name]['step_cpu'] / 60:.1f} min")
        for (f, t), (_, s) in zip(tree, share, strict=True):
            print(f"  {f:,} files: T {t:.1f} s ({t / f * 1000:.3f} ms a file), S {s:.1f} s")
    return result


def _median(rec: dict[str, Any], version: str, job: str) -> float:
    return statistics.median(j["cpu"] for j in rec["jobs"] if j["version"] == version and j["job"] == job)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("facts")
    f.add_argument("--scale", type=int, required=True)
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--from", dest="source", type=Path, help="the 1x folder whose facts files are replicated")
    r = sub.add_parser("run")
    r.add_argument("--before", type=Path, required=True, help="the other version's sources (e.g. a `git archive`)")
    r.add_argument("--root", type=Path, required=True)
    r.add_argument("--facts", nargs="+", required=True)
    r.add_argument("--rounds", type=int, default=2)
    r.add_argument("--links", type=int, default=2)
    r.add_argument("--pages", type=int, default=2)
    r.add_argument("--start", type=int, default=0, help="the first round's number (odd: the version after first)")
    m = sub.add_parser("model")
    m.add_argument("results", nargs="+", type=Path)
    args = parser.parse_args(argv)
    if args.command == "facts":
        make_facts(args.scale, args.out, args.source)
    elif args.command == "run":
        record = run(args.before, args.root, args.facts, args.rounds, args.links, args.pages, args.start)
        write_results("linkjobs", {"records": [record]})
    else:
        records = sorted((rec for path in args.results for rec in json.loads(path.read_text())["records"]),
                         key=lambda rec: rec["files"])
        model(records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
