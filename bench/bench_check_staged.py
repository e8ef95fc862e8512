"""`repodoc check` where the pre-commit hook runs it (issue 34): `--staged` after a one-file rename and a
full check of PyTorch's sources, against a floor measured in the same rounds.

    python bench/bench_check_staged.py [--rounds 5] [--before TREE] [--keep]

In one run: copy the corpus into a temporary git repository (one commit) and warm the facts cache (a
full `repodoc check --no-pages`, twice: the second keeps the check's table of names). Each round: the
floor (one Python process that reads and digests every file of the tree: what any check of the tree
does at least), `repodoc check --no-pages .` (nothing changed), a function renamed in one module
(`interpolate` in nn/functional.py, every whole word of that file, as an editor renames it there) and
staged, `repodoc check --staged --no-pages .`, the module put back and unstaged. CPU is user + system
of the process and its children (git). Prints medians, and each run over the floor of its round;
writes bench/results/check-staged-*.json. `--before TREE`: each step also with TREE (a folder holding
another version's `repodoc_lsp`) first on the path, with its own cache folder, right after this one's.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt_s, machine, median, run_measured, table, write_results
from bench_generate import repodoc_command
from corpus import ensure_corpus

EDITED = "torch/nn/functional.py"
RENAMED = ("interpolate", "interpolate_renamed")
TARGETS = {"staged": 1.0, "full": 10.0}  # seconds of wall, on an idle machine
SUMMARY = re.compile(r"(\d+) references? in (\d+) files? checked.*?(\d+) stale")
FLOOR = """
import hashlib, os, sys
for folder, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = [d for d in dirs if d != ".git"]
    for name in files:
        with open(os.path.join(folder, name), "rb") as fh:
            hashlib.blake2b(fh.read(), digest_size=16).hexdigest()
"""


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env, timeout=600)


def check(root: Path, cache: Path, *flags: str, tree: Path | None = None) -> dict[str, Any]:
    env = {**os.environ, "REPODOC_CACHE_DIR": str(cache)}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    m = run_measured([*repodoc_command(), "check", "--no-pages", *flags, "."], env=env, cwd=root)
    found = SUMMARY.search(m.proc.stdout + m.proc.stderr)
    if m.proc.returncode not in (0, 1) or found is None:
        raise RuntimeError(f"repodoc check {' '.join(flags)} exited {m.proc.returncode}:\n{m.proc.stderr[-3000:]}")
    references, files, stale = map(int, found.groups())
    return {"seconds": m.seconds, "cpu_seconds": m.cpu_seconds, "references": references, "files": files,
            "stale": stale, "items": [line for line in m.proc.stdout.splitlines() if not line.startswith("repodoc:")]}


def floor(root: Path) -> dict[str, Any]:
    m = run_measured([sys.executable, "-c", FLOOR, str(root)])
    return {"seconds": m.seconds, "cpu_seconds": m.cpu_seconds}


def _round(root: Path, versions: list[tuple[str, Path | None, Path]], runs: dict[str, list[dict[str, Any]]]) -> None:
    edited = root / EDITED
    original = edited.read_text(encoding="utf-8")
    runs["floor"].append(floor(root))
    for name, tree, cache in versions:
        runs[name + "full"].append(check(root, cache, tree=tree))
    edited.write_text(re.sub(rf"\b{RENAMED[0]}\b", RENAMED[1], original), encoding="utf-8")
    _git(root, "add", EDITED)
    try:
        for name, tree, cache in versions:
            runs[name + "staged"].append(check(root, cache, "--staged", tree=tree))
    finally:
        edited.write_text(original, encoding="utf-8")
        _git(root, "add", EDITED)


def report(runs: dict[str, list[dict[str, Any]]]) -> list[list[object]]:
    floors = runs["floor"]
    rows: list[list[object]] = [["floor (read + digest every file)", fmt_s(median([r["seconds"] for r in floors])),
                                 fmt_s(median([r["cpu_seconds"] for r in floors])), "1", "1", "", "", ""]]
    for step, done in runs.items():
        if step == "floor" or not done:
            continue
        wall = [r["seconds"] / f["seconds"] for r, f in zip(done, floors, strict=False)]
        cpu = [r["cpu_seconds"] / f["cpu_seconds"] for r, f in zip(done, floors, strict=False)]
        last = done[-1]
        rows.append([step, fmt_s(median([r["seconds"] for r in done])), fmt_s(median([r["cpu_seconds"] for r in done])),
                     f"{median(wall):.2f}", f"{median(cpu):.2f}", last["files"], last["references"], last["stale"]])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="folder holding `torch/` (default: the PyTorch corpus)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another version's source tree, measured beside this one")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    corpus = args.corpus / "torch" if args.corpus else ensure_corpus()
    tmp = Path(tempfile.mkdtemp(prefix="repodoc-bench-staged-"))
    versions: list[tuple[str, Path | None, Path]] = [("", None, tmp / "cache")]
    if args.before:
        versions.append(("before ", args.before, tmp / "cache-before"))
    runs: dict[str, list[dict[str, Any]]] = {"floor": [], **{v + s: [] for v, _, _ in versions
                                                            for s in ("full", "staged")}}
    loads = [os.getloadavg()[0]]
    try:
        root = tmp / "repo"
        shutil.copytree(corpus, root / "torch")
        _git(root, "init", "-q")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "corpus")
        for _, tree, cache in versions:
            check(root, cache, tree=tree)  # analyses every file
            check(root, cache, tree=tree)  # keeps the check's table of names
        for i in range(args.rounds):
            _round(root, versions, runs)
            loads.append(os.getloadavg()[0])
            print(f"round {i + 1}/{args.rounds}: load {loads[-1]:.1f}", flush=True)
    finally:
        if args.keep:
            print(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(table(report(runs), ["run", "wall", "CPU", "wall / floor", "CPU / floor", "files checked", "references",
                               "stale"]))
    print(f"load (1 min) {min(loads):.1f} to {max(loads):.1f}; targets (idle machine, wall): "
          + ", ".join(f"{k} < {v:g} s" for k, v in TARGETS.items()))
    for step in ("staged", "before staged"):
        if runs.get(step):
            print(f"{step}: " + ("; ".join(runs[step][-1]["items"][:5]) or "nothing stale"))
    write_results("check-staged", {"machine": machine(), "loads": loads, "runs": runs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
