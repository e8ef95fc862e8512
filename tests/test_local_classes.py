"""A class defined inside a function (a test's fixture, a closure's helper) is one line on its file's
page: its members' names, each anchored, never sent to a part page; every link to it or its members
(keyword index, other pages) finds its anchor there, also on a page whose other members go to parts."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import broken_links, make_workspace, run_cli

from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.source import analyse_source
from repodoc_lsp.render import parts as part_rule

DOC = "Does one thing and says so at some length. " * 6
FIXTURES = '''"""Tests with local classes."""


def test_fields():
    """Fields are kept."""

    class Point:
        """A point."""

        x: int = 0
        y: int = 0

        def norm(self):
            return self.x

    class Point3(Point):
        z: int = 0

    assert Point3().norm() == 0


class TestMore:
    def test_inner(self):
        class Holder:
            value = 1

            class Deeper:
                depth = 2

        assert Holder.value
'''


def _analyse(text: str) -> FileFacts:
    return analyse_source("t.py", text.encode())


def test_local_classes_are_those_inside_a_function_body() -> None:
    facts = _analyse(FIXTURES)
    assert part_rule.local_classes(facts) == {"class-test_fields.Point", "class-test_fields.Point3",
                                              "class-TestMore.test_inner.Holder",
                                              "class-TestMore.test_inner.Holder.Deeper"}
    # members of local classes never leave the page, even on a page that splits
    big = FIXTURES + "".join(f'\n\ndef f{i}(x):\n    """{DOC}{i}."""\n    return x\n' for i in range(200))
    moved = part_rule.member_parts(_analyse(big))
    assert moved and not any(a.startswith(("method-test_fields.", "attr-test_fields.")) for a in moved)


def test_local_class_is_one_line_with_its_members_anchored(tmp_path: Path) -> None:
    big = FIXTURES + "".join(f'\n\ndef f{i}(x):\n    """{DOC}{i}."""\n    return x\n' for i in range(200))
    root = make_workspace(tmp_path / "ws", {"tests/test_local.py": big})
    proc = run_cli("generate", str(root), env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stderr
    out = root / "docs"
    page = (out / "tests/test_local.py_docs.md").read_text(encoding="utf-8")
    assert (out / "tests/test_local.py_docs.part2.md").is_file()  # its functions went to a part
    line = next(x for x in page.splitlines() if x.startswith('<a id="class-test_fields.Point"></a>'))
    assert line == ('<a id="class-test_fields.Point"></a>`class test_fields.Point` '
                    '([L7](../../tests/test_local.py#L7)), local: A point; attributes '
                    '<a id="attr-test_fields.Point.x"></a>`x`, <a id="attr-test_fields.Point.y"></a>`y`; '
                    'methods <a id="method-test_fields.Point.norm"></a>`norm`')
    assert "#### `class test_fields.Point`" not in page
    assert '<a id="class-TestMore.test_inner.Holder.Deeper"></a>' in page
    kw = (out / "tests/test_local.py_kw.md").read_text(encoding="utf-8")
    assert "(test_local.py_docs.md#method-test_fields.Point.norm)" in kw
    assert broken_links(out) == []


def test_a_nested_function_is_not_said_inside_twice(tmp_path: Path) -> None:
    """`def outer.inner()` names its function already: no ", inside `outer`" after it."""
    nested = "def outer():\n    def inner():\n        return 1\n    return inner\n"
    root = make_workspace(tmp_path / "ws", {"m.py": nested})
    proc = run_cli("generate", str(root), env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stderr
    page = (root / "docs/m.py_docs.md").read_text(encoding="utf-8")
    assert "#### `def outer.inner()` ([L2](../m.py#L2))\n" in page
