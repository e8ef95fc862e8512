"""analysis.cursor (the only module that talks to jedi), render.paths (where each page lives) and
render.stamp (the digest of how pages are rendered)."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repodoc_lsp.analysis.cursor import Cursor, word_at
from repodoc_lsp.render import paths, stamp

SOURCE = '''"""A module."""


def make_widget(name: str, size: int = 1) -> "Widget":
    """Make a widget from a name."""
    return Widget(name)


class Widget:
    def __init__(self, name):
        self.name = name


thing = make_widget("x")
'''


def test_word_at_finds_the_identifier_around_a_column() -> None:
    assert word_at(SOURCE, 14, 0) == "thing" and word_at(SOURCE, 14, 5) == "thing"  # start and just past the end
    assert word_at(SOURCE, 14, 10) == "make_widget"
    assert word_at(SOURCE, 14, 6) == ""  # between `=` and a space
    assert word_at(SOURCE, 0, 0) == "" and word_at(SOURCE, 99, 0) == ""  # no such line
    assert word_at("x = 1 + 23\n", 1, 9) == ""  # a number is no identifier
    assert word_at("été = 1\n", 1, 1) == "été"  # columns are code points


def test_describe_resolves_a_call_to_its_definition(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(SOURCE)
    cursor = Cursor(tmp_path)
    info = cursor.describe(SOURCE, path, 14, 10)
    assert info is not None
    assert (info.name, info.full_name, info.jedi_type) == ("make_widget", "mod.make_widget", "function")
    assert len(info.signatures) == 1 and info.signatures[0].startswith("make_widget(name: str, size: int=1)")
    assert info.docstring == "Make a widget from a name." and info.module_path == path
    assert (info.line, info.column) == (4, 4)
    widget = cursor.describe(SOURCE, path, 6, 12)  # `Widget(name)`: the class
    assert widget is not None and (widget.name, widget.jedi_type, widget.line) == ("Widget", "class", 9)


@pytest.mark.parametrize(("line", "column"), [(14, 6), (0, 0), (15, 0), (14, 40), (2, 0)])
def test_describe_is_none_where_there_is_no_name(tmp_path: Path, line: int, column: int) -> None:
    path = tmp_path / "mod.py"
    path.write_text(SOURCE)
    assert Cursor(tmp_path).describe(SOURCE, path, line, column) is None


def test_prepare_never_raises(tmp_path: Path) -> None:
    cursor = Cursor(tmp_path, python_path=str(tmp_path / "no-such-python"))
    cursor.prepare("def broken(:\n", tmp_path / "b.py")  # an environment that does not exist, a syntax error


def test_page_paths() -> None:
    assert paths.pages_of_file("pkg/a.py") == ("pkg/a.py_docs.md", "pkg/a.py_kw.md")
    assert paths.pages_of_folder("") == ("index.md", "doc.md")
    assert paths.pages_of_folder("pkg/sub") == ("pkg/sub/index.md", "pkg/sub/doc.md")
    assert paths.folder_of("pkg/sub/a.py") == "pkg/sub" and paths.folder_of("a.py") == ""
    assert paths.docs_page("README.md") == "README.md_docs.md" and paths.kw_page("x") == "x_kw.md"


def test_render_stamp_follows_templates_and_rendering_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    render = Path(stamp.__file__).parent
    copy = tmp_path / "render"
    shutil.copytree(render, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(stamp, "_RENDER", copy)
    compute = stamp.render_stamp.__wrapped__
    first = compute()
    assert first == stamp.render_stamp() and len(first) == 16 and int(first, 16) >= 0  # the installed one
    (copy / "notes.txt").write_text("not part of rendering\n")
    assert compute() == first
    template = copy / "templates" / "file_kw.md.j2"
    template.write_text(template.read_text() + "\n")
    second = compute()
    assert second != first
    (copy / "markdown.py").write_text((copy / "markdown.py").read_text() + "\n# changed\n")
    third = compute()
    assert third not in (first, second)
    words = tmp_path / "words.py"  # the plural helper pages use, outside render/
    words.write_text(Path(stamp._WORDS).read_text() + "\n# changed\n")
    monkeypatch.setattr(stamp, "_WORDS", words)
    fourth = compute()
    assert fourth not in (first, second, third)
    anchor_state = tmp_path / "anchor_state.py"  # the anchors' record and check (`is_anchor`), outside render/
    anchor_state.write_text(Path(stamp._ANCHOR_STATE).read_text() + "\n# changed\n")
    monkeypatch.setattr(stamp, "_ANCHOR_STATE", anchor_state)
    assert compute() not in (first, second, third, fourth)


@pytest.mark.parametrize("failures, clears", [(1, 0), (2, 1)])
def test_a_parso_cache_file_cut_short_is_read_again_then_cleared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  failures: int, clears: int) -> None:
    """parso writes its cache files in place, shared by every Python server on the machine. A file
    read while another process writes it is cut short once (two servers at once failed a library
    hover in CI): read again, the cache kept. One a killed server left cut short fails again: the
    cache is cleared once, and the name is described."""
    import parso.cache

    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    cursor = Cursor(tmp_path)
    real, cleared = Cursor._names, []
    calls = iter([EOFError("Ran out of input"), pickle.UnpicklingError("pickle data was truncated")][:failures])

    def cut_short(self: Cursor, *args: object) -> list:
        for exc in calls:
            raise exc
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Cursor, "_names", cut_short)
    monkeypatch.setattr(parso.cache, "clear_cache", lambda *a, **k: cleared.append(1))
    info = cursor.describe(SOURCE, path, 14, 10)
    assert info is not None and len(cleared) == clears


def test_a_parso_cache_cut_short_for_good_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache that stays damaged after it was cleared is jedi's error, for the caller to log."""
    import parso.cache

    def always(self: Cursor, *args: object) -> list:
        raise EOFError("Ran out of input")

    monkeypatch.setattr(Cursor, "_names", always)
    monkeypatch.setattr(parso.cache, "clear_cache", lambda *a, **k: None)
    with pytest.raises(EOFError):
        Cursor(tmp_path).describe(SOURCE, tmp_path / "m.py", 14, 10)


_DESCRIBE = """
import json, sys
from pathlib import Path
from repodoc_lsp.analysis.cursor import Cursor
folder = Path(sys.argv[1])
source = ("import os.path\\n\\n\\nclass Shape:\\n    def __init__(self, name: str):\\n"
          "        self.name = name\\n\\n\\nShape('y')\\nos.path.join('a')\\n")
cursor = Cursor(folder)
out = []
for line, column in ((9, 1), (10, 9)):
    info = cursor.describe(source, folder / "m.py", line, column)
    out.append([info.full_name, list(info.signatures)] if info else None)
print(json.dumps(out))
"""


def test_every_file_of_parsos_cache_cut_short_still_describes(tmp_path: Path) -> None:
    """Servers killed while parso wrote its shared disk cache leave files cut short; each later load
    failed, so the class's signature and a library function were missing from hovers (CI: two
    processes of tests at once). A fresh process over such a cache describes both as over a sound one."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # jedi's and parso's own

    def describe() -> list:
        done = subprocess.run([sys.executable, "-c", _DESCRIBE, str(tmp_path)], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    sound = describe()
    assert sound[0] == ["m.Shape", ["Shape(name: str)"]] and sound[1][0] == "os.path.join" and sound[1][1]
    pickles = list((tmp_path / "cache").rglob("*.pkl"))
    assert pickles
    for path in pickles:
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert describe() == sound
