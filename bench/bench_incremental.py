"""`repodoc generate` where people feel it (issue 37): the first unchanged run after a cold one, a run
after a one-file edit and `--check` after a one-file edit (what the pre-commit hook runs), against the
floor, on PyTorch's sources.

    python bench/bench_incremental.py [--rounds 3] [--jobs N] [--keep] [--before TREE]

In one run: copy the corpus into a temporary workspace; each round: the floor (read and `ast.parse`
every file in one process), a cold `repodoc generate` (empty cache and output), the same again
(nothing changed: the first unchanged run after a cold one), a comment line appended to one module
then `repodoc generate`, another line then `repodoc generate --check` (it exits 1: the pages showing
that module's size are stale), the module put back. CPU time is user + system of the CLI and its workers. Prints a
table of medians, writes bench/results/incremental-*.json. `--before TREE`: each round also runs the same
steps with TREE (a folder holding another version's `repodoc_lsp`) first on the path, its own cache and
output folder, right after this version's: before and after against the same floors.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, fmt_s, median, run_measured, settle_file_creation, table, verdict, write_results
from bench_generate import repodoc_command
from corpus import ensure_corpus, stats
from floor import measure_floor_fresh

TARGET = 0.1  # each of unchanged, edit and check-after-edit / floor
EDITED = "nn/modules/linear.py"  # a module many others import


def run(root: Path, out: Path, cache: Path, jobs: int | None, *flags: str, tree: Path | None = None) -> dict[str, Any]:
    cmd = [*repodoc_command(), "generate", str(root), "--out", str(out), "--json", "--quiet", *flags]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    # Both versions imported from a folder on PYTHONPATH (this one from the repository): an editable
    # install's import hook, which only this version would go through, made its imports slower.
    env = {**os.environ, "REPODOC_CACHE_DIR": str(cache), "PYTHONPATH": str(tree or REPO)}
    m = run_measured(cmd, env=env)
    if m.proc.returncode not in ((0, 1) if "--check" in flags else (0,)):
        raise RuntimeError(f"repodoc generate {' '.join(flags)} exited {m.proc.returncode}:\n{m.proc.stderr[-3000:]}")
    summary = json.loads(m.proc.stdout)
    return {"seconds": m.seconds, "cpu_seconds": m.cpu_seconds, "internal_seconds": summary.get("seconds"),
            "written": summary.get("written"), "unchanged": summary.get("unchanged"),
            "stale": [s["path"] for s in summary.get("stale", [])], "pages": summary.get("writtenPages", [])[:20]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="folder of sources (default: the PyTorch corpus)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--before", type=Path, help="another version's source tree, measured beside this one")
    args = parser.parse_args(argv)
    versions: list[tuple[str, Path | None]] = [("", None)] + ([("before ", args.before)] if args.before else [])
    corpus = args.corpus or ensure_corpus()
    tmp = Path(tempfile.mkdtemp(prefix="repodoc-bench-incr-"))
    steps = ("cold", "unchanged", "edit", "check")
    runs: dict[str, list[dict[str, Any]]] = {"floor": [], **{v + s: [] for v, _tree in versions for s in steps}}
    notes: list[str] = []
    try:
        root = tmp / "ws" / corpus.name
        shutil.copytree(corpus, root)
        st = stats(root)
        print(f"corpus: {corpus} -> {root}: {st.files} files, {st.lines:,} lines", flush=True)
        edited = root / EDITED
        original = edited.read_bytes()
        for i in range(args.rounds):
            os.sync()
            settle_file_creation(tmp)
            floor = measure_floor_fresh(root, 1)
            runs["floor"].append({"seconds": float(floor["median"]), "cpu_seconds": float(floor["cpu_median"])})
            for version, tree in versions:
                out, cache = tmp / f"out-{i}{version.strip()}", tmp / f"cache-{i}{version.strip()}"
                os.sync()
                settle_file_creation(tmp)
                runs[version + "cold"].append(run(root, out, cache, args.jobs, tree=tree))
                runs[version + "unchanged"].append(run(root, out, cache, args.jobs, tree=tree))
                edited.write_bytes(original + f"\n# edit {i}a\n".encode())
                runs[version + "edit"].append(run(root, out, cache, args.jobs, tree=tree))
                edited.write_bytes(original + f"\n# edit {i}b\n# and a line more\n".encode())  # its sizes change
                runs[version + "check"].append(run(root, out, cache, args.jobs, "--check", tree=tree))
                edited.write_bytes(original)
                run(root, out, cache, args.jobs, tree=tree)  # back as it was, for the next round's cold run
                unchanged = runs[version + "unchanged"][-1]
                if unchanged["written"]:
                    notes.append(f"round {i + 1}: {version}the unchanged run wrote {unchanged['pages']}")
                if not runs[version + "check"][-1]["stale"]:
                    notes.append(f"round {i + 1}: {version}--check after an edit found nothing stale")
                shutil.rmtree(out, ignore_errors=True)
            print(f"round {i + 1}: " + ", ".join(f"{k} {fmt_s(v[-1]['seconds'])}" for k, v in runs.items()), flush=True)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    floor_s = median([r["seconds"] for r in runs["floor"]])
    rows = []
    ratios: dict[str, float] = {}
    labels = (("cold", "cold"), ("unchanged", "first unchanged run after the cold one"),
              ("edit", f"after a one-file edit ({EDITED})"), ("check", "--check after a one-file edit"))
    for name, label in [("floor", "floor (read + ast.parse, 1 process)")] + [
            (version + step, version + label) for version, _tree in versions for step, label in labels]:
        seconds = median([r["seconds"] for r in runs[name]])
        cpu = median([r["cpu_seconds"] for r in runs[name]])
        ratios[name] = seconds / floor_s
        target = name.split()[-1] in ("unchanged", "edit", "check")
        rows.append([label, fmt_s(seconds), fmt_s(cpu), f"{ratios[name]:.3f}", f"<= {TARGET}" if target else "",
                     verdict(ratios[name] <= TARGET) if target else ""])
    print(table(rows, [f"run (median of {args.rounds})", "wall", "CPU", "/ floor", "target", ""]))
    for note in notes:
        print(f"note: {note}")
    path = write_results("incremental", {"runs": runs, "ratios": ratios, "notes": notes, "corpus": str(corpus)})
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
