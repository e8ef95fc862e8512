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
import re
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


def _wheel_prefix(dist: str, version: str) -> str:
    """How a wheel's file name of `dist==version` begins (normalised name; a local label may follow)."""
    return f"{re.sub(r'[-_.]+', '_', dist).lower()}-{version}"


def find_wheel(wheels: Path, dist: str, version: str) -> Path | None:
    prefix = _wheel_prefix(dist, version)
    found = sorted(
        p for p in wheels.glob("*.whl") if p.name.lower().startswith(prefix) and p.name[len(prefix)] in "-+"
    ) if wheels.is_dir() else []
    return found[0] if found else None


def download_wheels(pins: list[tuple[str, str]], wheels: Path) -> dict[str, Path]:
    """The wheel of each (dist, version), from `wheels` or one `pip download --no-deps` of the missing ones."""
    missing = [(d, v) for d, v in pins if find_wheel(wheels, d, v) is None]
    if missing:
        wheels.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(wheels), "-q",
               *(f"{d}=={v}" for d, v in missing)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise RuntimeError(f"pip download failed ({proc.returncode}):\n{proc.stderr.strip()}")
    found = {d: find_wheel(wheels, d, v) for d, v in pins}
    lost = [d for d, w in found.items() if w is None]
    if lost:
        raise RuntimeError(f"pip download left no wheel of {', '.join(lost)} in {wheels}")
    return {d: w for d, w in found.items() if w is not None}


def extract_sources(wheel: Path, target: Path, package: str) -> None:
    """Extract `package/**/*.py` from `wheel` into `target/package`."""
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith(f"{package}/") and name.endswith(".py"):
                zf.extract(name, target)


def unpack(target: Path, into: Path, packages: list[tuple[str, str, str, int]], wheels: Path | None = None) -> None:
    """Extract `PACKAGE/**/*.py` of each (distribution, version, PACKAGE, expected .py files) wheel into
    `into/PACKAGE`, once: a `.complete` marker in `target`, written when every count matched, makes
    later calls free; a half-finished extraction is started again."""
    marker = target / ".complete"
    if marker.exists() and all((into / package).is_dir() for _, _, package, _ in packages):
        return
    found = download_wheels([(dist, version) for dist, version, _, _ in packages], wheels or cache_root() / "wheels")
    into.mkdir(parents=True, exist_ok=True)
    wrong = []
    for dist, _, package, expected in packages:
        shutil.rmtree(into / package, ignore_errors=True)
        extract_sources(found[dist], into, package)
        count = len(python_files(into / package))
        if count != expected:
            wrong.append(f"{into / package}: {count} .py files, expected {expected}")
    if wrong:
        raise RuntimeError("; ".join(wrong))
    marker.write_text("ok\n")


def ensure_corpus(target: Path | None = None, *, wheels: Path | None = None) -> Path:
    """Return the `torch/` folder of Python sources, extracting it on first use (idempotent)."""
    target = target or default_target()
    unpack(target, target, [("torch", VERSION, "torch", EXPECTED_FILES)], wheels)
    return target / "torch"


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
