"""Reading a manifest: what the checks of an untrusted manifest cost, and what a hostile one costs.

Two measurements, each against a floor taken in the same run:

- time: `writer.Writer` reading the manifest of a synthetic tree of N pages (the scale corpus's
  size by default: 38,000 pages, anchors on half of them) against the floor, the same bytes
  inflated and parsed by `zlib` and `json.loads` with no check (median of the runs);
- memory: the peak (tracemalloc) of reading a hostile manifest (1.1 MB inflating to 62 MB of `[]`
  under an unknown key, issue 33's finding 5; `--lists` sets the count) by `Writer` against that
  of the floor parsing it (the cost before the bound; `--lists 0` skips it).

    python bench/bench_manifest.py [--pages 38000] [--runs 5] [--lists 31000000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import tracemalloc
import zlib
from pathlib import Path

from _common import fmt_mb, median, table, write_results

from repodoc_lsp.output.manifest import MANIFEST, encode_manifest
from repodoc_lsp.output.writer import Writer


def synthetic(pages: int) -> dict:
    rng = random.Random(1)
    table_: dict = {"generator": "repodoc-lsp bench", "pages": {}, "anchors": {}}
    for i in range(pages):
        page = f"pkg{i % 300}/sub{i % 7}/module_{i}.py_docs.md"
        table_["pages"][page] = [f"{rng.getrandbits(128):032x}", 4000 + i, 1_700_000_000_000_000_000 + i,
                                 f"{rng.getrandbits(128):032x}"]
        if i % 2 == 0:
            defs = " ".join(f"method-C.f{j}:{rng.getrandbits(32):08x}" for j in range(20))
            table_["anchors"][page] = {"src": f"{rng.getrandbits(160):040x}", "defs": defs}
    return table_


def make_tree(out: Path, table_: dict) -> None:
    """The pages of `table_` on disk (small files: what the bound walks), and its manifest."""
    for page in table_["pages"]:
        path = out / page
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"<!-- page -->\n" + b"x" * 2000)
    (out / MANIFEST).write_bytes(encode_manifest(table_))


def floor_read(out: Path) -> object:
    return json.loads(zlib.decompress((out / MANIFEST).read_bytes(), wbits=31))


def timed(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return median(times)


def peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=38_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lists", type=int, default=31_000_000)
    args = parser.parse_args()
    record: dict = {"pages": args.pages, "runs": args.runs, "lists": args.lists}
    with tempfile.TemporaryDirectory(prefix="repodoc-bench-manifest-") as tmp:
        out = Path(tmp, "docs")
        table_ = synthetic(args.pages)
        make_tree(out, table_)
        size = (out / MANIFEST).stat().st_size
        assert Writer(out, check=True).manifest.keys() == table_["pages"].keys()
        floor_s, writer_s = timed(lambda: floor_read(out), args.runs), timed(lambda: Writer(out, check=True), args.runs)
        record.update(manifest_bytes=size, floor_s=floor_s, writer_s=writer_s, ratio=writer_s / floor_s)
        rows = [["read a good manifest", f"{floor_s:.3f} s", f"{writer_s:.3f} s", f"{writer_s / floor_s:.2f}x"]]
        if args.lists:
            small = Path(tmp, "small")
            make_tree(small, synthetic(10))
            good = json.dumps(floor_read(small)).encode()
            junk = b"[" + b"[]," * args.lists + b"[]]"
            text = good[:-1] + b',"junk":' + junk + b',"pad":"' + os.urandom(len(junk) // 120).hex().encode() + b'"}'
            (small / MANIFEST).write_bytes(zlib.compress(text, level=1, wbits=31))
            del text, junk
            hostile = (small / MANIFEST).stat().st_size
            floor_peak, writer_peak = peak(lambda: floor_read(small)), peak(lambda: Writer(small, check=True))
            record.update(hostile_bytes=hostile, floor_peak=floor_peak, writer_peak=writer_peak)
            rows.append([f"peak of a hostile one ({hostile / 1e6:.1f} MB)", fmt_mb(floor_peak), fmt_mb(writer_peak),
                         f"{writer_peak / floor_peak:.4f}x"])
    print(table(rows, ["", "floor (zlib + json.loads)", "Writer", "ratio"]))
    print(f"results: {write_results('manifest', record)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
