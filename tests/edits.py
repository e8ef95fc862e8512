"""Random edits of a small workspace for the incremental == fresh property tests.

`EditMachine` applies edits (modules, packages, imports of modules that may appear later,
tests, docstrings, non-Python files; added, changed, deleted, renamed; classes and functions
renamed in place or moved to another file; a subclass's base changed; `__all__` changed; a module
renamed with its importers' imports; a class grown past the part-page threshold and shrunk back;
a file deleted and re-created, or made a syntax error and mended) to a folder on disk and calls
`after_edit` with the paths touched; subclasses run the incremental path there and compare the
kept tree with a fresh generation elsewhere, byte for byte, less the rename aliases the kept
manifest records.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import read_manifest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from repodoc_lsp import cli
from repodoc_lsp.output.manifest import MANIFEST
from repodoc_lsp.render.anchors import strip_aliases
from repodoc_lsp.render.parts import part_paths

# Few examples by default (the CI run stays in tens of seconds); more with the variable.
EXAMPLES = int(os.environ.get("REPODOC_PROPERTY_EXAMPLES", "4"))
STEPS = int(os.environ.get("REPODOC_PROPERTY_STEPS", "8"))
# REPODOC_PROPERTY_TALLY=FILE: count instead of failing: one line per sequence tried
# ("ok", or "stale" and the step) is appended to FILE, and every sequence runs to its end.
TALLY = os.environ.get("REPODOC_PROPERTY_TALLY", "")
SETTINGS = settings(max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None,
                    report_multiple_bugs=False, **({"database": None} if TALLY else {}))

FOLDERS = ["", "foo", "pkg", "pkg/sub", "tests"]
MODULES = ["a", "b", "c", "missing", "helpers", "test_a"]
IMPORTS = [
    "import os", "import requests", "import foo", "import foo.missing", "import foo.a",
    "import pkg.sub.c", "from pkg import a, b", "from pkg import a", "from pkg import helpers, sub",
    "from pkg.sub import c", "from foo import b as bb", "from . import a", "from .a import x",
    "from .. import b", "from tests import helpers", "from a import f", "import b",
    "from a import K", "from pkg.a import K, f", "from .b import K",
    "from pkg import K", "from .a import K as K", "from .sub import c", "from pkg.sub.c import L",
]
DOCS = ['"""A module."""', '"""Other words.\n\nA second paragraph.\n"""', '"""Uses `pkg`."""',
        '"""See :class:`a.K`, ``pkg.a.f`` and `pkg.sub.c.L`."""',
        '"""Built on :class:`K`, :func:`f` and :class:`pkg.K`; see `L` and `Big.m1`."""']
BODIES = [
    "def f():\n    return 1\n",
    'class K:\n    """K things."""\n\n    def m(self):\n        pass\n',
    "def test_it():\n    assert True\n",
    "x = 1\n",
    'class L(K):\n    """Derives from K, wherever K comes from."""\n\n    size: int = 2\n',
    "def g(k: K) -> K:\n    return f(k)\n",
    "def test_local():\n    class Loc(K):\n        def m(self):\n            pass\n\n    assert Loc\n",  # a local class
]
# Definitions renamed in place (`rename_definition`): a line of BODIES, the same line renamed.
RENAMES = [("class K:\n", "class J:\n"), ("def f():\n", "def h():\n"), ("    def m(self):", "    def n(self):")]
# A subclass's base changed in place (`change_base`): its line before and after.
BASES = [("class L(K):\n", "class L(J):\n"), ("class L(K):\n", "class L:\n"), ("class L(J):\n", "class L(K):\n"),
         ("class L(K):\n", "class L(K, Big):\n")]
# `__all__` lines a module or package may carry (`set_all`; "" takes it away).
ALLS = ['__all__ = ["K"]\n', '__all__ = ["f", "L", "c"]\n', "__all__ = []\n", ""]
BROKEN = ["def broken(:\n    pass\n", '"""never closed\n', "class (K):\n"]


def big_class(methods: int) -> str:
    """A class of `methods` methods whose signatures name `K`: 100 pass the part-page threshold
    (`parts.SPLIT_AT`), a few the small budgets of test_parts.py; ended by a marker line."""
    doc = "Does one thing and says so at some length, naming K. " * 7
    body = "".join(f'    def m{i}(self, k: K, j: "K | None" = None) -> K:\n'
                   f'        """{doc}{i}."""\n        return k\n\n' for i in range(methods))
    return f'class Big:\n    """Big."""\n\n{body}    size: int = {methods}\n# end Big\n'

TEXTS = {"README.md": "# Title\n\n## Part\n", "notes.txt": "plain words\n", "data.json": '{"a": 1}\n'}


def join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


@st.composite
def python_source(draw: st.DrawFn) -> str:
    parts = []
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(DOCS)))
    parts.extend(draw(st.lists(st.sampled_from(IMPORTS), max_size=3, unique=True)))
    parts.extend(draw(st.lists(st.sampled_from(BODIES), max_size=2, unique=True)))
    return "\n".join(parts) + "\n"


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repodoc_lsp", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def tree(out: Path) -> dict[str, bytes]:
    """Every file of a docs tree but the manifest (it holds modification times), less exactly the
    rename aliases the manifest records for a page and its parts (a fresh generation has no
    history to keep them from)."""
    pages = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
             if p.is_file() and p.name != MANIFEST}
    manifest = out / MANIFEST
    for page, state in (read_manifest(out).get("anchors", {}) if manifest.exists() else {}).items():
        for shown in [page, *part_paths(page, pages)] if state.get("aliases") and page in pages else []:
            pages[shown] = strip_aliases(pages[shown].decode(), state["aliases"]).encode()  # on a part too
    return pages


def differences(kept: dict[str, bytes], fresh: dict[str, bytes]) -> list[str]:
    return [f"{p}: {'missing' if p not in kept else 'extra' if p not in fresh else 'differs'}"
            for p in sorted(kept.keys() | fresh.keys()) if kept.get(p) != fresh.get(p)]


class EditMachine(RuleBasedStateMachine):
    """A workspace under edit; `after_edit(paths)` checks the incremental path."""

    base: Path  # set by the test: a fresh temporary folder per run of the machine

    def __init__(self) -> None:
        super().__init__()
        self.n = getattr(type(self), "_runs", 0)
        type(self)._runs = self.n + 1
        self.home = self.base / f"run{self.n}"
        self.ws = self.home / "ws"
        self.ws.mkdir(parents=True)
        self.env = {**os.environ, "REPODOC_CACHE_DIR": str(self.home / "cache")}
        self.steps = 0
        self.failed = ""  # tally mode: the first failure of this sequence

    # -- the files -------------------------------------------------------------------
    def files(self) -> list[str]:
        return sorted(p.relative_to(self.ws).as_posix() for p in self.ws.rglob("*")
                      if p.is_file() and "docs" not in p.relative_to(self.ws).parts[:1])

    def folders(self) -> list[str]:
        return sorted({f for rel in self.files() if (f := rel.rpartition("/")[0])})

    def write(self, rel: str, text: str) -> list[str]:
        path = self.ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return [rel]

    def cli(self, *args: str) -> tuple[int, str]:
        """`repodoc ARGS` in this process (its own entry point, this run's cache): exit code and
        output. A subprocess per call cost more than the step (Python and the imports each time);
        `repodoc generate` as a process is tested end to end in test_generate.py and test_incremental.py."""
        with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
            code = cli.main([*args, "--cache-dir", self.env["REPODOC_CACHE_DIR"]])
        return code, out.getvalue() + err.getvalue()

    def fresh(self) -> dict[str, bytes]:
        """A fresh generation of a copy of the workspace (same folder name, no cache)."""
        copy = self.home / f"fresh{self.steps}" / "ws"
        shutil.copytree(self.ws, copy, ignore=lambda folder, names: ["docs"] if Path(folder) == self.ws else [])
        # In this process (the CLI's own entry point): a subprocess per step costs more than the step.
        with contextlib.redirect_stdout(io.StringIO()) as printed, contextlib.redirect_stderr(printed):
            code = cli.main(["generate", str(copy), "--no-cache", "--quiet"])
        assert code == 0, printed.getvalue()
        pages = tree(copy / "docs")
        shutil.rmtree(copy.parent)
        return pages

    def after_edit(self, changed: list[str], folders: list[str]) -> None:
        """Check the step; `folders`: folders that vanished or appeared whole (a watcher may
        report only them), their files being in `changed`."""
        raise NotImplementedError

    def edited(self, changed: list[str], folders: list[str] | None = None) -> None:
        self.steps += 1
        if not TALLY:
            self.after_edit(changed, folders or [])
        elif not self.failed:
            try:
                self.after_edit(changed, folders or [])
            except AssertionError as exc:
                self.failed = f"stale at step {self.steps}: {str(exc).splitlines()[0]}"

    def teardown(self) -> None:
        if TALLY:
            with open(TALLY, "a", encoding="utf-8") as fh:
                fh.write(f"{self.failed or 'ok'} ({self.steps} steps)\n")

    # -- the edits -------------------------------------------------------------------
    @initialize(first=python_source())
    def start(self, first: str) -> None:
        self.write("a.py", first)
        self.edited(["a.py"])

    @rule(folder=st.sampled_from(FOLDERS), name=st.sampled_from(MODULES), text=python_source())
    def write_module(self, folder: str, name: str, text: str) -> None:
        self.edited(self.write(join(folder, f"{name}.py"), text))

    @rule(folder=st.sampled_from(FOLDERS[1:]), doc=st.sampled_from(["", *DOCS]), text=python_source())
    def write_package(self, folder: str, doc: str, text: str) -> None:
        self.edited(self.write(join(folder, "__init__.py"), doc + "\n" + text if doc else text))

    @rule(folder=st.sampled_from(FOLDERS), name=st.sampled_from(sorted(TEXTS)))
    def write_text_file(self, folder: str, name: str) -> None:
        self.edited(self.write(join(folder, name), TEXTS[name]))

    @rule(data=st.data())
    def delete_file(self, data: st.DataObject) -> None:
        files = self.files()
        if files:
            rel = data.draw(st.sampled_from(files), label="delete")
            (self.ws / rel).unlink()
            self.edited([rel])

    @rule(data=st.data(), folder=st.sampled_from(FOLDERS), name=st.sampled_from(MODULES))
    def rename_file(self, data: st.DataObject, folder: str, name: str) -> None:
        files = [f for f in self.files() if f.endswith(".py")]
        new = join(folder, f"{name}.py")
        if files:
            rel = data.draw(st.sampled_from(files), label="rename")
            if rel != new:
                (self.ws / new).parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.ws / rel, self.ws / new)
                self.edited([rel, new])

    @rule(data=st.data(), which=st.sampled_from(RENAMES))
    def rename_definition(self, data: st.DataObject, which: tuple[str, str]) -> None:
        """A class or function renamed in place, its body kept: the kept page holds the old
        anchor as an alias (a fresh one cannot), which the comparison strips as the manifest says."""
        old, new = which
        files = [f for f in self.files() if f.endswith(".py") and old in (self.ws / f).read_text(encoding="utf-8")]
        if files:
            rel = data.draw(st.sampled_from(files), label="rename in")
            self.edited(self.write(rel, (self.ws / rel).read_text(encoding="utf-8").replace(old, new, 1)))

    def python_files(self, having: str = "") -> list[str]:
        return [f for f in self.files() if f.endswith(".py") and having in (self.ws / f).read_text(encoding="utf-8")]

    def read(self, rel: str) -> str:
        return (self.ws / rel).read_text(encoding="utf-8")

    @rule(data=st.data(), body=st.sampled_from([b for b in BODIES if b.startswith(("class", "def f", "def g"))]),
          folder=st.sampled_from(FOLDERS), name=st.sampled_from(MODULES))
    def move_definition(self, data: st.DataObject, body: str, folder: str, name: str) -> None:
        """A class or function cut from one file and pasted at the end of another (new or not)."""
        files = self.python_files(body)
        dest = join(folder, f"{name}.py")
        if files:
            rel = data.draw(st.sampled_from(files), label="move from")
            if rel != dest:
                self.write(rel, self.read(rel).replace(body, "", 1))
                self.write(dest, (self.read(dest) if (self.ws / dest).exists() else "") + "\n" + body)
                self.edited([rel, dest])

    @rule(data=st.data(), which=st.sampled_from(BASES))
    def change_base(self, data: st.DataObject, which: tuple[str, str]) -> None:
        """A subclass's base changed (its base in another file, or none)."""
        old, new = which
        files = self.python_files(old)
        if files:
            rel = data.draw(st.sampled_from(files), label="rebase in")
            self.edited(self.write(rel, self.read(rel).replace(old, new, 1)))

    @rule(data=st.data(), line=st.sampled_from(ALLS))
    def set_all(self, data: st.DataObject, line: str) -> None:
        """A module's or package's `__all__` set, changed or taken away (what it re-exports)."""
        files = self.python_files()
        if files:
            rel = data.draw(st.sampled_from(files), label="__all__ of")
            text = re.sub(r"^__all__ = .*\n", "", self.read(rel), flags=re.M)
            self.edited(self.write(rel, text + line))

    @rule(data=st.data(), folder=st.sampled_from(FOLDERS), name=st.sampled_from(MODULES))
    def rename_imported_module(self, data: st.DataObject, folder: str, name: str) -> None:
        """A module renamed and every import of it rewritten (`pkg.a` -> `foo.b`, `from .a` -> `from .b`
        beside it, `from pkg import a` -> `from foo import b`)."""
        files = [f for f in self.python_files() if not f.endswith("__init__.py")]
        new = join(folder, f"{name}.py")
        if not files or (self.ws / new).exists():
            return
        rel = data.draw(st.sampled_from(files), label="rename imported")
        old_mod, new_mod = rel[:-3].replace("/", "."), new[:-3].replace("/", ".")
        old_pkg, _, old_name = old_mod.rpartition(".")
        new_pkg, _, new_name = new_mod.rpartition(".")
        (self.ws / new).parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.ws / rel, self.ws / new)
        changed = [rel, new]
        for other in self.python_files():
            text = self.read(other)
            lines = [re.sub(rf"\b{re.escape(old_mod)}\b", new_mod, line) if line.startswith(("import ", "from "))
                     else line for line in text.splitlines(keepends=True)]
            fixed = "".join(lines)
            if old_pkg:
                fixed = re.sub(rf"^from {re.escape(old_pkg)} import {old_name}\b",
                               f"from {new_pkg} import {new_name}" if new_pkg else f"import {new_name}",
                               fixed, flags=re.M)
            if other.rpartition("/")[0] == old_pkg.replace(".", "/") and old_pkg == new_pkg:
                fixed = re.sub(rf"^from \.{old_name}\b", f"from .{new_name}", fixed, flags=re.M)
            if fixed != text:
                changed.append(self.write(other, fixed)[0])
        self.edited(changed)

    @rule(data=st.data(), methods=st.sampled_from([0, 2, 12, 100]))
    def resize_class(self, data: st.DataObject, methods: int) -> None:
        """The class `Big` grown or shrunk in place (or added to a file, or taken away: 0): its page
        crosses the part-page threshold and comes back."""
        files = self.python_files()
        if files:
            rel = data.draw(st.sampled_from(files), label="resize in")
            text = re.sub(r"^class Big:\n.*?^# end Big\n", "", self.read(rel), flags=re.M | re.S)
            self.edited(self.write(rel, text + (big_class(methods) if methods else "")))

    @rule(data=st.data())
    def delete_and_recreate(self, data: st.DataObject) -> None:
        """A file deleted (one step), then written again as it was (the next)."""
        files = self.files()
        if files:
            rel = data.draw(st.sampled_from(files), label="delete and re-create")
            text = (self.ws / rel).read_bytes()
            (self.ws / rel).unlink()
            self.edited([rel])
            (self.ws / rel).write_bytes(text)
            self.edited([rel])

    @rule(data=st.data(), bad=st.sampled_from(BROKEN), mend=st.booleans())
    def break_syntax(self, data: st.DataObject, bad: str, mend: bool) -> None:
        """A Python file made a syntax error (one step), and mended as it was (the next) or left so."""
        files = self.python_files()
        if files:
            rel = data.draw(st.sampled_from(files), label="break")
            text = self.read(rel)
            self.edited(self.write(rel, text + bad))
            if mend:
                self.edited(self.write(rel, text))

    @rule(data=st.data())
    def delete_folder(self, data: st.DataObject) -> None:
        folders = self.folders()
        if folders:
            folder = data.draw(st.sampled_from(folders), label="rmtree")
            gone = [f for f in self.files() if f.startswith(folder + "/")]
            shutil.rmtree(self.ws / folder)
            self.edited(gone, [folder])

    @rule(data=st.data(), dest=st.sampled_from(FOLDERS))
    def rename_folder(self, data: st.DataObject, dest: str) -> None:
        folders = [f for f in self.folders() if not dest.startswith(f)]
        if folders and dest and not (self.ws / dest).exists():
            folder = data.draw(st.sampled_from(folders), label="move")
            gone = [f for f in self.files() if f.startswith(folder + "/")]
            (self.ws / dest).parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.ws / folder, self.ws / dest)
            self.edited(gone + [dest + f[len(folder):] for f in gone], [folder, dest])
