"""A class defined inside a function (a test's fixture, a closure's helper) is one line on its file's
page: its members' names, each anchored; every link to it or its members (keyword index, other pages)
finds its anchor, also on a page whose other members go to parts. A file of so many local classes
that their lines would fill the page has them on part pages of their own, whole, before any
docstring is shortened."""

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


def _many_local(n: int) -> str:
    """A test file of `n` tests, each with a local schema subclassing the file's `Base`."""
    tests = "".join(f"""

def test_case_{i}():
    \"\"\"{DOC}{i}.\"\"\"

    class Payload{i}(Base):
        first_field_of_payload = 1
        second_field_of_payload = 2

        def check(self):
            return {i}

    assert Payload{i}().check() == {i}
""" for i in range(n))
    return f'"""Tests with many local classes."""\n\n\nclass Base:\n    """The base."""\n{tests}'


def test_local_lines_go_to_parts_when_they_would_fill_the_page() -> None:
    facts = _analyse(_many_local(300))
    of_class, members = part_rule.assign(facts)
    local = part_rule.local_classes(facts)
    assert set(of_class) == local and all(len(ns) == 1 for ns in of_class.values())
    # a line's members go with it; the class's own anchor stays on the page (links land on it)
    assert members["attr-test_case_7.Payload7.first_field_of_payload"] == of_class["class-test_case_7.Payload7"][0]
    assert members["method-test_case_7.Payload7.check"] == of_class["class-test_case_7.Payload7"][0]
    assert not any(a.startswith("class-") for a in members)
    assert len({ns[0] for ns in of_class.values()}) >= 2  # in parts of at most PART_BUDGET estimated bytes
    # a few local classes stay on their lines on the page
    assert not part_rule.assign(_analyse(_many_local(5)))[0]


def test_a_file_of_many_local_classes_keeps_its_docstrings_whole(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"tests/test_many.py": _many_local(300)})
    proc = run_cli("generate", str(root), env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stderr
    out = root / "docs/tests"
    pages = {p.name: p.read_text(encoding="utf-8") for p in out.glob("test_many.py_docs*.md")}
    assert all(len(text.encode()) <= 100_000 for text in pages.values()), {n: len(t) for n, t in pages.items()}
    assert not any("Shortened" in text for text in pages.values())
    page = pages["test_many.py_docs.md"]
    assert "local classes (`test_case_0.Payload0` to " in page and "#local-classes)" in page
    assert '<a id="class-test_case_299.Payload299"></a>' in page  # the class's anchor on its page
    held = [n for n, text in pages.items() if '<a id="attr-test_case_299.Payload299.second_field_of_payload"></a>'
            "`second_field_of_payload`" in text]
    assert held and held[0] != "test_many.py_docs.md"
    kw = (out / "test_many.py_kw.md").read_text(encoding="utf-8")
    assert f"({held[0]}#method-test_case_299.Payload299.check)" in kw
    assert broken_links(root / "docs") == []
