"""Random edits of real Python projects (the sdists unpacked in ~/.cache/repodoc-bench/realprojects): after
each, the tree kept by `repodoc generate` equals a fresh one, byte for byte (the manifest aside), and
`repodoc check --no-pages` with the kept cache reports what it reports from an empty cache.

    python bench/check_edits_python.py [--project NAME ...] [--seed N] [--steps N] [--saved] [--kinds a,b]

The property tests (tests/edits.py) edit small synthetic workspaces; this drives the same promise through
real code, with edits that reach across files: a subclass of another module's class, a base added to a
class, a re-export in a package's `__init__.py`, `__all__`, a docstring or a method renamed, a file
moved, a class moved to another module (imported back), a package renamed or deleted, `__init__.py` added
or deleted, non-UTF-8 bytes, CRLF line ends, `pyproject.toml`, a file ignored or unignored (`.gitignore`),
a docs page naming a definition, a symlink loop, the README; else one of `check_edits_polyglot.py`'s
(rename, delete, copy, drop a line, define a name another file calls). Prints one line per step; exit 1
at the first difference, with its diff. `--saved`: the editor's path instead (the workspace kept in
memory, each edit's files regenerated as a save) against a fresh CLI run. `--kinds`: draw from some edits only.
"""

from __future__ import annotations

import argparse
import difflib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_edits_polyglot import edit as any_edit
from check_edits_polyglot import generate, tree
from realprojects.corpus import PROJECTS, cache_root, unpack

_CLASS = re.compile(r"^class\s+([A-Za-z_]\w*)", re.M)
_TOP = re.compile(r"^(?:def|class)\s+([A-Za-z]\w*)", re.M)
_METHOD = re.compile(r"^\s+def\s+([A-Za-z_]\w*)\s*\(", re.M)
_DOC = re.compile(r'("""|\'\'\')([^\n"\']{3,})')


def module_of(ws: Path, f: Path) -> str:
    parts = list(f.relative_to(ws).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts[1:] if parts[:1] == ["src"] else parts)


def _sources(ws: Path) -> list[Path]:
    return sorted(p for p in ws.rglob("*.py") if p.is_file() and ".git" not in p.parts and not p.is_symlink())


def _across(ws: Path, f: Path, text: str, other: Path, kind: str) -> str | None:
    """An edit of `f` naming a class of `other`."""
    classes = sorted(set(_CLASS.findall(other.read_text(encoding="utf-8", errors="replace"))))
    mod = module_of(ws, other)
    if not (classes and mod):
        return None
    c = random.Random(text).choice(classes)
    if kind == "subclass":
        f.write_text(text + f"\n\nfrom {mod} import {c} as _Base{c}\n\n\nclass Sub{c}(_Base{c}):\n"
                     f'    """A subclass of {c}."""\n\n    def extra(self):\n        return 1\n', encoding="utf-8")
        return f"subclass of {mod}.{c} in {f.relative_to(ws)}"
    if kind == "reexport":
        init = f.parent / "__init__.py" if (f.parent / "__init__.py").exists() else f
        before = init.read_text(encoding="utf-8", errors="replace")
        init.write_text(before + f"\nfrom {mod} import {c}\n", encoding="utf-8")
        return f"re-export of {mod}.{c} in {init.relative_to(ws)}"
    m = _CLASS.search(text)
    end = text.find("\n", m.start()) if m else -1
    if m and other != f and end > 0 and "(" not in text[m.start():end] and text[m.start():end].rstrip().endswith(":"):
        head = text[m.start():end].rstrip()[:-1] + f"(_B{c}):"
        f.write_text(f"from {mod} import {c} as _B{c}\n" + text[:m.start()] + head + text[end:], encoding="utf-8")
        return f"base {mod}.{c} added to {m.group(1)} in {f.relative_to(ws)}"
    return None


def _in_file(ws: Path, f: Path, text: str, rnd: random.Random, kind: str) -> str | None:
    """An edit of `f` alone: `__all__`, a docstring, a method renamed."""
    where = f.relative_to(ws)
    if kind == "all" and (names := sorted(set(_TOP.findall(text)))):
        pick = rnd.sample(names, min(len(names), rnd.randint(1, 3)))
        f.write_text(text + f"\n__all__ = {pick!r}\n", encoding="utf-8")
        return f"__all__ = {pick} in {where}"
    if kind == "doc" and (docs := list(_DOC.finditer(text))):
        d = rnd.choice(docs)
        f.write_text(text[:d.start(2)] + "Changed: " + d.group(2)[::-1] + text[d.end(2):], encoding="utf-8")
        return f"docstring at line {text.count(chr(10), 0, d.start()) + 1} of {where}"
    if kind == "method" and (methods := list(_METHOD.finditer(text))):
        d = rnd.choice(methods)
        f.write_text(text[:d.start(1)] + d.group(1) + "_renamed" + text[d.end(1):], encoding="utf-8")
        return f"method {d.group(1)} renamed at line {text.count(chr(10), 0, d.start()) + 1} of {where}"
    return None


def _beside(ws: Path, f: Path, text: str, rnd: random.Random, kind: str) -> str | None:
    """An edit beside the sources: ignore rules, docs prose, a symlink loop, the README, a move."""
    rel = f.relative_to(ws).as_posix()
    ignore = ws / ".gitignore"
    rules = ignore.read_text(encoding="utf-8", errors="replace").splitlines() if ignore.exists() else []
    if kind == "ignore":
        ignore.write_text("\n".join([*rules, rel]) + "\n", encoding="utf-8")
        return f"ignore {rel}"
    if kind == "unignore" and rules:
        drop = rnd.randrange(len(rules))
        ignore.write_text("\n".join(rules[:drop] + rules[drop + 1:]) + "\n", encoding="utf-8")
        return f"unignore {rules[drop]!r}"
    docs = sorted(p for p in ws.rglob("*") if p.suffix in (".md", ".rst") and ("docs" in p.parts or p.parent == ws))
    if kind == "docs" and docs and (names := _TOP.findall(text)):
        page = rnd.choice(docs)
        page.write_text(page.read_text(encoding="utf-8", errors="replace") + f"\n\nSee `{rnd.choice(names)}`.\n",
                        encoding="utf-8")
        return f"docs page {page.relative_to(ws)} names a definition of {rel}"
    if kind == "symlink" and not (link := f.parent / f"loop_{rnd.randrange(1000)}").exists():
        os.symlink(".", link)
        return f"symlink loop {link.relative_to(ws)}"
    if kind == "readme":
        readme = ws / "README.md"
        readme.write_text((readme.read_text(encoding="utf-8", errors="replace") if readme.exists() else "")
                          + "\n\nMore words.\n", encoding="utf-8")
        return "README.md edited"
    if kind == "move":
        dest = rnd.choice(sorted(p for p in ws.rglob("*") if p.is_dir() and ".git" not in p.parts)) / f"moved_{f.name}"
        f.rename(dest)
        return f"move {rel} -> {dest.relative_to(ws)}"
    return None


def _moved_class(ws: Path, f: Path, text: str, other: Path) -> str | None:
    """A top-level class of `f` moved to the end of `other`, `f` importing it from there."""
    m = _CLASS.search(text)
    mod = module_of(ws, other)
    if not m or other == f or not mod:
        return None
    end = re.compile(r"^\S", re.M).search(text, text.find("\n", m.start()) + 1)
    block = text[m.start():end.start() if end else len(text)]
    other.write_text(other.read_text(encoding="utf-8", errors="replace") + "\n\n" + block, encoding="utf-8")
    f.write_text(text[:m.start()] + f"from {mod} import {m.group(1)}\n\n" + text[m.start() + len(block):],
                 encoding="utf-8")
    return f"class {m.group(1)} moved from {f.relative_to(ws)} to {other.relative_to(ws)}"


def _structure(ws: Path, f: Path, text: str, rnd: random.Random, kind: str) -> str | None:
    """An edit of the layout or the bytes: a package renamed or deleted, `__init__.py` added or taken away,
    non-UTF-8 bytes, CRLF line ends, the project's metadata."""
    folder = f.parent
    if kind == "package" and folder != ws and (folder / "__init__.py").exists():
        folder.rename(folder.with_name(folder.name + "_renamed"))
        return f"package {folder.relative_to(ws)} renamed"
    below = sum(1 for _ in folder.rglob("*.py"))
    if kind == "rmtree" and folder != ws and below <= 40 and len(_sources(ws)) - below >= 3:  # sources left to edit
        shutil.rmtree(folder)
        return f"folder {folder.relative_to(ws)} deleted"
    if kind == "init" and folder != ws:
        init = folder / "__init__.py"
        if init.exists():
            init.unlink()
            return f"{init.relative_to(ws)} deleted"
        init.write_text('"""A package now."""\n', encoding="utf-8")
        return f"{init.relative_to(ws)} added"
    if kind == "bytes":
        f.write_bytes(text.encode("utf-8") + b"\n# caf\xe9 \xff\n" if rnd.random() < 0.5 else b"\x00" + text.encode())
        return f"non-UTF-8 bytes in {f.relative_to(ws)}"
    if kind == "crlf":
        f.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
        return f"CRLF line ends in {f.relative_to(ws)}"
    meta = ws / "pyproject.toml"
    if kind == "pyproject" and meta.exists():
        old = meta.read_text(encoding="utf-8")
        new = re.sub(r'^(description\s*=\s*")', r"\1Edited. ", old, count=1, flags=re.M)
        meta.write_text(new if new != old else old + "\n# edited\n", encoding="utf-8")
        return "pyproject.toml description edited"
    return None


KINDS = ("subclass", "reexport", "base", "all", "doc", "method", "ignore", "unignore", "docs", "symlink",
         "readme", "move", "moveclass", "package", "rmtree", "init", "bytes", "crlf", "pyproject", "other")


def edit(ws: Path, rnd: random.Random, kinds: tuple[str, ...] = KINDS) -> str:
    """One random edit of `ws` (of one of `kinds`); what it did."""
    files = _sources(ws)
    f, other, kind = rnd.choice(files), rnd.choice(files), rnd.choice(kinds)
    text = f.read_text(encoding="utf-8", errors="replace")
    done = None
    if kind in ("subclass", "reexport", "base"):
        done = _across(ws, f, text, other, kind)
    elif kind in ("all", "doc", "method"):
        done = _in_file(ws, f, text, rnd, kind)
    elif kind == "moveclass":
        done = _moved_class(ws, f, text, other)
    elif kind in ("package", "rmtree", "init", "bytes", "crlf", "pyproject"):
        done = _structure(ws, f, text, rnd, kind)
    elif kind != "other":
        done = _beside(ws, f, text, rnd, kind)
    return done or any_edit(ws, rnd)


SAVED_KINDS = KINDS  # a saved `.gitignore` decides the inputs in the editor too (store/discover.rules_saved)


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file and link below `root` (links not followed, `.git` aside): its bytes, or where it points."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files + [d for d in dirs if Path(folder, d).is_symlink()]:
            path = Path(folder, name)
            found[path.relative_to(root).as_posix()] = (
                b"-> " + os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return found


def compare(step: int, what: str, kept: dict[str, bytes], fresh: dict[str, bytes]) -> bool:
    """Print the step; at a difference, the diff of its first page. Equal?"""
    differ = [p for p in sorted(kept.keys() | fresh.keys()) if kept.get(p) != fresh.get(p)]
    print(f"  {step}: {what}: {'equal' if not differ else f'{len(differ)} pages differ: {differ[:3]}'}", flush=True)
    if differ:
        sys.stdout.writelines(difflib.unified_diff(
            fresh.get(differ[0], b"").decode().splitlines(True), kept.get(differ[0], b"").decode().splitlines(True),
            f"fresh/{differ[0]}", f"kept/{differ[0]}"))
    return not differ


def references(root: Path, cache: Path) -> str:
    """`repodoc check --no-pages` of `root` with the analysis cache `cache`: its exit code and report (the time
    it took aside)."""
    proc = subprocess.run([sys.executable, "-m", "repodoc_lsp", "check", str(root), "--no-pages", "--cache-dir",
                           str(cache)], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"check failed ({proc.returncode}): {proc.stderr.strip()}")
    return re.sub(r", [\d.]+ s$", "", f"exit {proc.returncode}\n{proc.stdout}", flags=re.M)  # its time aside


def check_cli(source: Path, seed: int, steps: int, kinds: tuple[str, ...] = KINDS) -> bool:
    """The CLI's path: after each edit, the tree `repodoc generate` keeps against a fresh one, and
    `repodoc check`'s report with the kept cache (the names of the last check) against one from an empty cache."""
    rnd = random.Random(f"{seed}/{source.name}")  # each project its own draws of the edits
    with tempfile.TemporaryDirectory(prefix="repodoc-edits-") as tmp:
        base = Path(tmp)
        ws = base / "ws"
        shutil.copytree(source, ws, symlinks=True)
        generate(ws, base / "kept", base / "cache")
        references(ws, base / "cache")
        for step in range(steps):
            what = edit(ws, rnd, kinds)
            generate(ws, base / "kept", base / "cache")
            for gone in ("fresh", "fresh-cache"):
                shutil.rmtree(base / gone, ignore_errors=True)
            generate(ws, base / "fresh", base / "fresh-cache")
            if not compare(step, what, tree(base / "kept"), tree(base / "fresh")):
                return False
            shutil.rmtree(base / "check-cache", ignore_errors=True)
            kept, fresh = references(ws, base / "cache"), references(ws, base / "check-cache")
            if kept != fresh:
                print(f"  {step}: repodoc check differs:", flush=True)
                sys.stdout.writelines(difflib.unified_diff(fresh.splitlines(True), kept.splitlines(True),
                                                           "fresh check", "kept check"))
                return False
    return True


def check_saved(source: Path, seed: int, steps: int, kinds: tuple[str, ...] = SAVED_KINDS) -> bool:
    """The editor's path: the workspace kept in memory, each edit's files (every one whose bytes changed,
    appeared or went, as a watcher reports them) regenerated as a save; the tree against a fresh CLI run."""
    from repodoc_lsp.config import load_settings
    from repodoc_lsp.pipeline.generate import generate as whole
    from repodoc_lsp.pipeline.generate import regenerate
    from repodoc_lsp.render.pages import Renderer
    from repodoc_lsp.store.workspace import Workspace

    rnd = random.Random(f"{seed}/{source.name}")  # each project its own draws of the edits
    with tempfile.TemporaryDirectory(prefix="repodoc-saved-") as tmp:
        base = Path(tmp)
        root = base / "ws"
        shutil.copytree(source, root, symlinks=True)
        ws = Workspace(root, load_settings(root, {"cacheDir": str(base / "cache"), "output": str(base / "kept")})[0])
        whole(root, ws)
        renderer = Renderer()
        for step in range(steps):
            before = _snapshot(root)
            what = edit(root, rnd, kinds)
            after = _snapshot(root)
            saved = [rel for rel in sorted(before.keys() | after.keys()) if before.get(rel) != after.get(rel)]
            regenerate(ws, [rel for rel in saved if rel in ws.facts or ws.filter.is_input(root / rel)], renderer)
            shutil.rmtree(base / "fresh", ignore_errors=True)
            shutil.rmtree(base / "fresh-cache", ignore_errors=True)
            generate(root, base / "fresh", base / "fresh-cache")
            if not compare(step, what, tree(base / "kept"), tree(base / "fresh")):
                return False
    return True


def projects(only: set[str] | None) -> list[tuple[str, Path]]:
    """The projects to edit: the check corpus' sdists (fetched when missing) and every other project
    unpacked beside them (`repodoc check`'s corpus leaves out the sdists without docs; these edits do not
    need docs). A name asked for that is in neither is an error, not an empty run."""
    for name, version, _flavour in PROJECTS:
        if not only or name in only:
            unpack(name, version)
    found = {}
    for root in sorted((cache_root() / "realprojects").glob("*/.complete")):
        name = root.parent.name.rsplit("-", 1)[0]
        found[name] = root.parent
    missing = sorted((only or set()) - found.keys())
    if missing:
        raise SystemExit(f"no unpacked project {', '.join(missing)} in {cache_root() / 'realprojects'}; "
                         f"known: {' '.join(sorted(found))}")
    return [(name, root) for name, root in sorted(found.items()) if not only or name in only]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", action="append",
                        help="a project unpacked in ~/.cache/repodoc-bench/realprojects (default: all)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--saved", action="store_true",
                        help="the editor's path: the workspace in memory, each edit regenerated as a save")
    parser.add_argument("--kinds", help=f"comma-separated edits to draw from (default: all; {','.join(KINDS)})")
    args = parser.parse_args()
    kinds = tuple(args.kinds.split(",")) if args.kinds else SAVED_KINDS if args.saved else KINDS
    if unknown := set(kinds) - set(KINDS):
        parser.error(f"unknown edits: {', '.join(sorted(unknown))}")
    ok = True
    for name, root in projects(set(args.project) if args.project else None):
        print(f"{name} (seed {args.seed}{', saved' if args.saved else ''}):", flush=True)
        if args.saved:
            ok = check_saved(root, args.seed, args.steps, kinds) and ok
        else:
            ok = check_cli(root, args.seed, args.steps, kinds) and ok
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
