"""The benchmark corpus: PyTorch 2.13.0's Python sources, unpacked once into a cache folder.

    python bench/corpus.py            # prints the folder (unpacks on first use)
    python bench/corpus.py --verify   # also counts files and lines

The wheel comes from `pip download torch==2.13.0 --no-deps` (pip's configuration finds a
local wheel first, so this is fast); only `torch/**/*.py` is extracted. The folder lives
outside the repository: ${XDG_CACHE_HOME:-~/.cache}/repodoc-bench/torch-2.13.0/torch. A
`.complete` marker beside it makes later calls free (the same layout the PyTorch keyword
test uses, so both share one copy).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

VERSION = "2.13.0"
EXPECTED_FILES = 2285  # torch/**/*.py in the 2.13.0 wheel


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repodoc-bench"


def default_target() -> Path:
    """The folder that holds `torch/` (the corpus root is `default_target() / "torch"`)."""
    return cache_root() / f"torch-{VERSION}"


@dataclass(frozen=True)
class CorpusStats:
    files: int
    lines: int
    bytes: int


def _download_wheel(wheels: Path) -> Path:
    found = sorted(wheels.glob(f"torch-{VERSION}*.whl"))
    if found:
        return found[0]
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", f"torch=={VERSION}", "--no-deps", "-d", str(wheels), "-q"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"pip download failed ({proc.returncode}):\n{proc.stderr.strip()}")
    found = sorted(wheels.glob(f"torch-{VERSION}*.whl"))
    if not found:
        raise RuntimeError(f"pip download left no torch-{VERSION} wheel in {wheels}")
    return found[0]


def ensure_corpus(target: Path | None = None, *, wheels: Path | None = None) -> Path:
    """Return the `torch/` folder of Python sources, extracting it on first use (idempotent)."""
    target = target or default_target()
    corpus = target / "torch"
    marker = target / ".complete"
    if marker.exists() and corpus.is_dir():
        return corpus
    wheel = _download_wheel(wheels or cache_root() / "wheels")
    if corpus.exists():  # a half-finished extraction: start again
        shutil.rmtree(corpus)
    target.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("torch/") and name.endswith(".py"):
                zf.extract(name, target)
    count = len(python_files(corpus))
    if count != EXPECTED_FILES:
        raise RuntimeError(f"{corpus}: {count} .py files, expected {EXPECTED_FILES}")
    marker.write_text("ok\n")
    return corpus


def python_files(root: Path) -> list[Path]:
    """Every .py file under `root`, sorted (the same set every benchmark reads)."""
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def stats(root: Path) -> CorpusStats:
    files = python_files(root)
    lines = size = 0
    for path in files:
        data = path.read_bytes()
        size += len(data)
        lines += data.count(b"\n")
    return CorpusStats(files=len(files), lines=lines, bytes=size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, help=f"folder that will hold torch/ (default: {default_target()})")
    parser.add_argument("--verify", action="store_true", help="count files and lines")
    args = parser.parse_args(argv)
    corpus = ensure_corpus(args.target)
    print(corpus)
    if args.verify:
        st = stats(corpus)
        ok = st.files == EXPECTED_FILES
        print(
            f"{st.files} .py files ({'ok' if ok else f'expected {EXPECTED_FILES}'}), "
            f"{st.lines:,} lines, {st.bytes / 1e6:.1f} MB"
        )
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
