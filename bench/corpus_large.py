"""The scale corpus: the Python sources of 14 large wheels side by side in one workspace root.

    python bench/corpus_large.py            # prints the root (unpacks on first use)
    python bench/corpus_large.py --verify   # also counts files and lines per package

Each pinned wheel comes from `pip download NAME==VERSION --no-deps` (one call for the missing
ones; pip's configuration may find local copies first) and only `PACKAGE/**/*.py` is
extracted, into `ROOT/PACKAGE/`: every package is a folder of the one root, so its modules
keep their import names (`torch.nn`, `django.db`). 17,150 files, 7.6 million lines,
286 MB. The root lives outside the repository:
${XDG_CACHE_HOME:-~/.cache}/repodoc-bench/scale-1/ws, with a `.complete` marker beside it
written once every package's file count matched: later calls return at once.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import cache_root, stats, unpack

# (distribution, exact version, import package extracted, its .py files in that wheel)
PACKAGES: list[tuple[str, str, str, int]] = [
    ("torch", "2.13.0", "torch", 2285),
    ("transformers", "5.17.0", "transformers", 2681),
    ("tensorflow-cpu", "2.21.0", "tensorflow", 1847),
    ("sympy", "1.14.0", "sympy", 1532),
    ("pandas", "3.0.6", "pandas", 1421),
    ("astropy", "8.0.1", "astropy", 983),
    ("scipy", "1.17.1", "scipy", 973),
    ("statsmodels", "0.15.0", "statsmodels", 913),
    ("keras", "3.15.1", "keras", 904),
    ("django", "5.2.17", "django", 883),
    ("twisted", "26.4.0", "twisted", 860),
    ("scikit-learn", "1.9.1", "sklearn", 671),
    ("jax", "0.10.2", "jax", 617),
    ("networkx", "3.6.1", "networkx", 580),
]
EXPECTED_FILES = sum(n for *_, n in PACKAGES)  # 17,150
NAME = "scale-1"  # a new name when PACKAGES changes, so an old root is never taken for the new one


def default_target() -> Path:
    """The folder that holds the root `ws/` and its `.complete` marker."""
    return cache_root() / NAME


def ensure_large_corpus(target: Path | None = None, *, wheels: Path | None = None) -> Path:
    """Return the workspace root holding every package's sources, extracting them on first use (idempotent)."""
    target = target or default_target()
    unpack(target, target / "ws", PACKAGES, wheels)
    return target / "ws"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, help=f"folder that will hold ws/ (default: {default_target()})")
    parser.add_argument("--verify", action="store_true", help="count files and lines per package")
    args = parser.parse_args(argv)
    root = ensure_large_corpus(args.target)
    print(root)
    if not args.verify:
        return 0
    total = stats(root)
    for dist, version, package, expected in PACKAGES:
        st = stats(root / package)
        mark = "ok" if st.files == expected else f"expected {expected}"
        print(f"  {dist}=={version} -> {package}/: {st.files} files ({mark}), {st.lines:,} lines, "
              f"{st.bytes / 1e6:.1f} MB")
    ok = total.files == EXPECTED_FILES
    print(f"{total.files} .py files ({'ok' if ok else f'expected {EXPECTED_FILES}'}), "
          f"{total.lines:,} lines, {total.bytes / 1e6:.1f} MB")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
