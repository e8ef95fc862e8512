"""The corpora of bench/bench_languages.py: real code nobody here wrote, each fetched with its registry's
ordinary client into ROOT (skipped when already there).

    python bench/languages_corpus.py [--root ~/.cache/repodoc-bench/langs]

- C++: the torch 2.13.0 wheel's `torch/include` (`pip download`; pip's configuration finds the local
  wheel first) -> `torch-include/torch/include`;
- TypeScript and JavaScript: `npm pack` rxjs 7.8.1 (ships its `src/*.ts`), zod 3.23.8, express 4.21.2
  -> `rxjs/`, `zod/`, `express/` (each `package/`); acorn 8.19.0, the JavaScript parser of
  bench/bench_js_reading.py's second reading -> `acorn/`;
- Rust: the cryptography 41.0.7 sdist (`pip download --no-binary cryptography`: its Rust extension in
  `src/rust`; setuptools-rust prepares its metadata without cargo; a maturin sdist such as
  pydantic-core's or orjson's does not download: maturin runs `cargo metadata`, which needs crates.io)
  -> `rust/`; Debian's librust-regex-syntax-dev (a crate's source) -> `debian/usr/share/cargo/registry`;
- Go: Debian's golang-github-google-go-cmp-dev and golang-github-spf13-cobra-dev (module sources)
  -> `debian/usr/share/gocode/src`;
- Java: Debian's openjdk-17-source, `java.base/java/util` of its `src.zip` -> `jdk17/`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

NPM = {"rxjs": "rxjs@7.8.1", "zod": "zod@3.23.8", "express": "express@4.21.2",
       "acorn": "acorn@8.19.0"}  # acorn: bench_js_reading.py's parser, not a corpus
DEBIAN = ("golang-github-google-go-cmp-dev", "golang-github-spf13-cobra-dev", "librust-regex-syntax-dev")


def _run(*command: str, cwd: Path) -> None:
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stderr.strip()}")


def _only_new(path: Path) -> bool:
    """True when `path` is still to fetch (a `.complete` marker beside it says it is done)."""
    return not path.with_name(path.name + ".complete").exists()


def _done(path: Path) -> None:
    path.with_name(path.name + ".complete").touch()


def fetch(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        include = root / "torch-include"
        if _only_new(include):
            _run(sys.executable, "-m", "pip", "download", "torch==2.13.0", "--no-deps", "-d", str(tmp), cwd=tmp)
            wheel = next(tmp.glob("torch-2.13.0*.whl"))
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(include, [n for n in archive.namelist() if n.startswith("torch/include/")])
            _done(include)
        for folder, package in NPM.items():
            if _only_new(root / folder):
                _run("npm", "pack", package, cwd=tmp)
                with tarfile.open(next(tmp.glob(f"{folder}-*.tgz"))) as archive:
                    archive.extractall(root / folder, filter="data")
                _done(root / folder)
        if _only_new(root / "rust"):
            _run(sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "cryptography",
                 "cryptography==41.0.7", "-d", str(tmp), cwd=tmp)
            with tarfile.open(tmp / "cryptography-41.0.7.tar.gz") as archive:
                archive.extractall(root / "rust", filter="data")
            _done(root / "rust")
        _debian(root, tmp)


def _debian(root: Path, tmp: Path) -> None:
    """Debian's packages of Go and Rust sources and the JDK's, unpacked (`dpkg -x`), not installed."""
    if _only_new(root / "debian"):
        _run("apt-get", "download", *DEBIAN, cwd=tmp)
        for deb in tmp.glob("*.deb"):
            _run("dpkg", "-x", str(deb), str(root / "debian"), cwd=tmp)
        _done(root / "debian")
    if _only_new(root / "jdk17"):
        _run("apt-get", "download", "openjdk-17-source", cwd=tmp)
        unpacked = tmp / "jdk"
        _run("dpkg", "-x", str(next(tmp.glob("openjdk-17-source_*.deb"))), str(unpacked), cwd=tmp)
        with zipfile.ZipFile(next(unpacked.rglob("src.zip"))) as archive:
            archive.extractall(root / "jdk17", [n for n in archive.namelist()
                                                if n.startswith("java.base/java/util/")])
        _done(root / "jdk17")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path(os.path.expanduser("~/.cache/repodoc-bench/langs")))
    fetch(parser.parse_args().root)


if __name__ == "__main__":
    main()
