"""Open buffers: an edit batch, and saves while a large buffer is being typed in (issue 33).

`python bench/bench_buffers.py [--runs 3] [--no-server]`:

1. Edit batch (in process): one didChange of 1,000 one-line edits of a 940 KB, 18,000-line
   buffer, sent last first (VS Code), first first (Neovim) and in random order, applied by
   `EditorDocument.apply_changes`; against the floor, one join and one split of the text (what
   any batch costs at least), and against pygls's per-edit path (measured on 20 edits, times
   50). Also 1,000 edits within one 980 KB line, last first (one pass over the line).
   Goal: a batch <= 10x the floor for the multi-line buffer.
2. Saves while typing (`repodoc serve` over stdio): a 1.36 MB Python buffer (under the default
   max-file-bytes) opened and edited twelve times 0.35 s apart (a check after each pause),
   then another file saved: the time from didSave to its keyword page on disk, against the
   same save with no buffer open (the floor). Goal: <= 5x the floor.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "robustness"))
sys.path.insert(0, str(HERE.parent / "tests" / "lsp"))


def _edit(row: int, at: int) -> Any:
    from lsprotocol import types as t
    return t.TextDocumentContentChangePartial(range=t.Range(
        start=t.Position(line=row, character=at), end=t.Position(line=row, character=at + 4)), text="title")


def batch(runs: int) -> dict[str, Any]:
    from pygls.workspace import PositionCodec, TextDocument

    from repodoc_lsp.server.convert import EditorDocument, split_lines
    lines = [f"    value_{i} = compute(name, other_{i % 97})  # name é\n" for i in range(18_000)]
    text = "".join(lines)
    rows = list(range(0, 18_000, 18))
    at = {row: len(f"    value_{row} = compute(") for row in rows}
    orders = {"last first": rows[::-1], "first first": rows, "random": random.Random(33).sample(rows, len(rows))}
    floor = statistics.median(_timed(lambda: split_lines("".join(split_lines(text)))) for _ in range(runs))
    found: dict[str, Any] = {"bytes": len(text.encode()), "edits": len(rows), "floor_s": floor}
    for name, order in orders.items():
        changes = [_edit(row, at[row]) for row in order]
        seconds = []
        for _ in range(runs):
            doc = EditorDocument("file:///x.py", text, position_codec=PositionCodec())
            seconds.append(_timed(lambda doc=doc, changes=changes: doc.apply_changes(changes)))
        found[name] = statistics.median(seconds)
    doc = EditorDocument("file:///x.py", text, position_codec=PositionCodec())
    sample = [_edit(row, at[row]) for row in rows[::-1][:20]]
    found["per edit (pygls), extrapolated"] = _timed(lambda: [TextDocument.apply_change(doc, c) for c in sample]) * 50
    line = "x = [" + ", ".join(f"name{i}" for i in range(90_000)) + "]"
    spots = [line.index("name", k * 900) for k in range(1000)][::-1]
    long_changes = [_edit(0, spot) for spot in spots]
    doc = EditorDocument("file:///x.py", line, position_codec=PositionCodec())
    found["one long line"] = _timed(lambda: doc.apply_changes(long_changes))
    return found


def _timed(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def save_latency(typing: bool, base: Path) -> float:
    from lsp_helpers import SAMPLE, build
    from rpc import RawServer
    shutil.rmtree(base, ignore_errors=True)
    big = "".join(f'def function_{i}(a, b):\n    """Doc of :func:`function_{i + 1}`."""\n'
                  f'    return [a, (b, {{"k": a}})]\n\n\n' for i in range(14_000))
    root = build(base / "ws", {**SAMPLE, "pkg/big.py": big})
    server = RawServer({**os.environ, "REPODOC_CACHE_DIR": str(base / "cache")})
    try:
        server.initialize(root.as_uri(), {"cacheDir": str(base / "cache")})
        server.send({"id": 2, "method": "workspace/executeCommand", "params": {"command": "repodoc.generate"}})
        server.response(2, timeout=600)
        if typing:
            uri = (root / "pkg/big.py").as_uri()
            server.send({"method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": big}}})
            time.sleep(2)
            for version in range(2, 14):
                server.send({"method": "textDocument/didChange", "params": {
                    "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": {
                        "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "x"}]}})
                time.sleep(0.35)
        shapes = root / "pkg/shapes.py"
        shapes.write_text(shapes.read_text() + "\n\ndef saved_function():\n    pass\n")
        started = time.monotonic()
        server.send({"method": "textDocument/didSave", "params": {"textDocument": {"uri": shapes.as_uri()}}})
        page = root / "docs/pkg/shapes.py_kw.md"
        while "saved_function" not in page.read_text():
            if time.monotonic() - started > 600:
                return float("nan")
            time.sleep(0.02)
        return time.monotonic() - started
    finally:
        server.proc.kill()
        server.proc.wait()


def main() -> int:
    from _common import fmt_s, scratch_folder, table, verdict, write_results
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-server", action="store_true")
    args = parser.parse_args()
    found = batch(args.runs)
    floor = found["floor_s"]
    rows = [(name, fmt_s(found[name]), f"{found[name] / floor:.1f}x")
            for name in ("last first", "first first", "random", "per edit (pygls), extrapolated", "one long line")]
    worst = max(found[name] for name in ("last first", "first first", "random"))
    print(f"Edit batch: {found['edits']:,} edits of {found['bytes']:,} bytes; floor (join + split) {fmt_s(floor)}")
    print(table(rows, ["order", "time", "x floor"]))
    print(f"goal: a batch <= 10x the floor: {verdict(worst <= 10 * floor)}")
    result: dict[str, Any] = {"batch": found}
    if not args.no_server:
        with scratch_folder("repodoc-bench-buffers-") as tmp:
            quiet = statistics.median(save_latency(False, tmp / f"quiet{i}") for i in range(args.runs))
            typed = statistics.median(save_latency(True, tmp / f"typed{i}") for i in range(args.runs))
        print(table([("no buffer open (floor)", fmt_s(quiet), "1.0x"),
                     ("typing in a 1.36 MB buffer", fmt_s(typed), f"{typed / quiet:.1f}x")],
                    ["save's pages on disk", "time", "x floor"]))
        print(f"goal: <= 5x the floor: {verdict(typed <= 5 * quiet)}")
        result["save"] = {"floor_s": quiet, "typing_s": typed}
    print(write_results("bench_buffers", result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
