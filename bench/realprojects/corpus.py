"""The real-projects corpus of `repodoc check`: pinned sdists with hand-written docs, unpacked once.

    python bench/realprojects/corpus.py            # fetches and unpacks what is missing, prints the roots
    python bench/realprojects/corpus.py --only click,flask

Each project is `pip download --no-deps --no-binary :all: NAME==VERSION` into
${XDG_CACHE_HOME:-~/.cache}/repodoc-bench/sdists, unpacked into .../realprojects/NAME-VERSION
(outside the repository; a `.complete` marker makes later calls free). Only sdists that ship their
hand-written docs are in the list (`docs/` or `doc/` with .rst or .md files; checked on unpack).
(mkdocs 1.6.1, requests 2.32.3, httpx 0.27.2, uvicorn 0.30.6, respx 0.21.1 and markdown-it-py 3.0.0
were tried: their sdists leave the docs out.)
Labels of every item `repodoc check` reports live beside this script: labels/NAME.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

# name, version, docs flavour (what the hand-written docs are written in)
PROJECTS: list[tuple[str, str, str]] = [
    ("click", "8.1.8", "sphinx-rst"),
    ("attrs", "24.2.0", "myst"),
    ("flask", "3.0.3", "sphinx-rst"),
    ("jinja2", "3.1.4", "sphinx-rst"),
    ("werkzeug", "3.0.4", "sphinx-rst"),
    ("pytest", "8.3.3", "sphinx-rst"),
    ("marshmallow", "3.22.0", "sphinx-rst"),
    ("itsdangerous", "2.2.0", "sphinx-rst"),
    ("arrow", "1.3.0", "sphinx-rst"),
    ("structlog", "24.4.0", "myst"),
    ("cattrs", "24.1.2", "myst"),
    ("trio", "0.26.2", "sphinx-rst"),
    ("markupsafe", "2.1.5", "sphinx-rst"),
    ("blinker", "1.8.2", "sphinx-rst"),
    ("pluggy", "1.5.0", "sphinx-rst"),
    ("packaging", "24.1", "sphinx-rst"),
    ("more-itertools", "10.5.0", "sphinx-rst"),
    ("h11", "0.14.0", "sphinx-rst"),
    ("anyio", "4.6.0", "sphinx-rst"),
    ("starlette", "0.38.6", "mkdocs"),
    ("humanize", "4.10.0", "mkdocs"),
    ("typer", "0.12.5", "mkdocs"),
    ("tenacity", "9.0.0", "sphinx-rst"),
    ("cachetools", "5.5.0", "sphinx-rst"),
    ("wrapt", "1.16.0", "sphinx-rst"),
]


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "repodoc-bench"


def sdist_of(name: str, version: str, folder: Path) -> Path | None:
    stem = name.replace("-", "_").lower()
    for p in folder.iterdir() if folder.is_dir() else ():
        low = p.name.lower().replace("-", "_")
        if low.startswith(f"{stem}_{version}.") and p.name.endswith((".tar.gz", ".zip")):
            return p
    return None


def fetch(name: str, version: str) -> Path | None:
    folder = cache_root() / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    found = sdist_of(name, version, folder)
    if found is None:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                               f"{name}=={version}", "-d", str(folder)], capture_output=True, text=True, check=False)
        found = sdist_of(name, version, folder)
        if found is None:
            print(f"{name}=={version}: pip download failed: {done.stderr.strip()[-300:]}", file=sys.stderr)
    return found


def unpack(name: str, version: str) -> Path | None:
    """The project's root (unpacked on first use), or None when it cannot be had."""
    root = cache_root() / "realprojects" / f"{name}-{version}"
    if (root / ".complete").exists():
        return root
    sdist = fetch(name, version)
    if sdist is None:
        return None
    tmp = root.with_name(root.name + ".tmp")
    subprocess.run(["rm", "-rf", str(tmp), str(root)], check=True)
    tmp.mkdir(parents=True)
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as z:
            z.extractall(tmp)
    else:
        with tarfile.open(sdist) as t:
            t.extractall(tmp, filter="data")
    (top,) = list(tmp.iterdir())
    top.rename(root)
    tmp.rmdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # --since needs a repository
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=bench", "-c", "user.email=bench@localhost",
                    "commit", "-q", "-m", "sdist"], check=True)
    (root / ".complete").write_text("")
    return root


def has_docs(root: Path) -> bool:
    return any(p.suffix in (".rst", ".md") for d in ("docs", "doc") for p in (root / d).rglob("*"))


def roots(only: set[str] | None = None) -> list[tuple[str, Path]]:
    out = []
    for name, version, _flavour in PROJECTS:
        if only and name not in only:
            continue
        root = unpack(name, version)
        if root is None:
            continue
        if not has_docs(root):
            print(f"{name}=={version}: the sdist has no docs/ folder; left out", file=sys.stderr)
            continue
        out.append((name, root))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="comma-separated project names")
    args = parser.parse_args()
    for name, root in roots(set(filter(None, args.only.split(","))) or None):
        print(f"{name}\t{root}")


if __name__ == "__main__":
    main()
