"""render/hover.py: hover text from a gathered value, in each mode and format."""

from __future__ import annotations

from repodoc_lsp.render.hover import CANDIDATES_SHOWN, Candidate, Definition, Fact, candidates_text, definition_text

FUNC = Definition(kind="function", full_name="pkg.shapes.make_shape", signatures=("make_shape(name: str) -> Shape",),
                  docstring="Make a shape called NAME.", where="pkg/shapes.py:27",
                  facts=(Fact("function in module {}", ("pkg.shapes",)), Fact("imported by 1 workspace file")),
                  link="file:///ws/docs/pkg/shapes.py_docs.md#function-make_shape")


def test_full_markdown_has_signature_docstring_and_facts() -> None:
    assert definition_text(FUNC, markdown=True) == (
        "```python\ndef make_shape(name: str) -> Shape\n```\n\nMake a shape called NAME.\n\n---\n\n"
        "**Defined in** `pkg/shapes.py:27`\n\n"
        "**Index**: function in module `pkg.shapes` · imported by 1 workspace file\n\n"
        "[Documentation: `shapes.py_docs.md#function-make_shape`]"
        "(file:///ws/docs/pkg/shapes.py_docs.md#function-make_shape)")


def test_extras_leaves_signature_and_docstring_to_the_other_server() -> None:
    text = definition_text(FUNC, markdown=True, mode="extras")
    assert "```" not in text and "Make a shape" not in text and "make_shape(name" not in text
    assert text.startswith("**repodoc** · **Defined in** `pkg/shapes.py:27`")
    assert "imported by 1 workspace file" in text and "#function-make_shape)" in text
    plain = definition_text(FUNC, markdown=False, mode="extras")
    assert plain.startswith("Defined in pkg/shapes.py:27") and "Make a shape" not in plain


def test_off_and_extras_without_facts_say_nothing() -> None:
    assert definition_text(FUNC, markdown=True, mode="off") == ""
    library = Definition(kind="function", full_name="os.path.join", signatures=("join(a, *p)",),
                         where="/usr/lib/python3.11/posixpath.py:71")
    assert definition_text(library, markdown=True, mode="extras") == ""
    assert definition_text(library, markdown=True).startswith("```python\ndef join(a, *p)\n```")


def test_plain_text_has_no_markdown() -> None:
    text = definition_text(FUNC, markdown=False)
    assert text.split("\n\n") == [
        "def make_shape(name: str) -> Shape", "Make a shape called NAME.", "Defined in pkg/shapes.py:27",
        "function in module pkg.shapes", "imported by 1 workspace file",
        "Documentation: file:///ws/docs/pkg/shapes.py_docs.md#function-make_shape"]


def test_module_shows_its_first_paragraph_and_names_are_code() -> None:
    module = Definition(kind="module", full_name="pkg.a`b", docstring="\n  Overview.\n\nDetails.\n",
                        facts=(Fact("module {}: 0 classes", ("pkg.a`b",)),))
    text = definition_text(module, markdown=True)
    assert text.startswith("```python\nmodule pkg.a`b\n```\n\nOverview.") and "Details" not in text
    assert "module ``pkg.a`b``: 0 classes" in text


def test_candidates_are_capped_and_counted() -> None:
    found = [Candidate(kind="method", qualname=f"C{i}.forward", where=f"m{i}.py:{i}",
                       link=f"file:///d/m{i}.py_docs.md#method-C{i}.forward" if i < CANDIDATES_SHOWN else "")
             for i in range(CANDIDATES_SHOWN + 3)]
    text = candidates_text("forward", found, markdown=True)
    assert text.startswith(f"`forward`: not resolved here; the keyword index has {CANDIDATES_SHOWN + 3} definitions")
    assert text.count("([documentation](") == CANDIDATES_SHOWN
    assert text.endswith("- … and 3 more (workspace symbols: forward)")
    assert candidates_text("forward", found, markdown=True, mode="off") == ""
    assert candidates_text("forward", [], markdown=True) == ""
    assert "- method C0.forward in m0.py:0" in candidates_text("forward", found[:1], markdown=False)


def test_used_by_and_subclassed_by_with_links_and_counts() -> None:
    from dataclasses import replace

    from repodoc_lsp.render.hover import Link, Xref

    users = tuple(Link(f"pkg/u{i}.py", f"file:///ws/pkg/u{i}.py#L{i}") for i in range(5))
    xref = Xref(used_by=12, users=users, subclasses=(Link("Circle", "file:///ws/pkg/shapes.py#L20"),),
                subclassed_by=1)
    text = definition_text(replace(FUNC, xref=xref), markdown=True)
    assert ("**Used by** 12 files: [`pkg/u0.py`](file:///ws/pkg/u0.py#L0), [`pkg/u1.py`](file:///ws/pkg/u1.py#L1), "
            "[`pkg/u2.py`](file:///ws/pkg/u2.py#L2), [`pkg/u3.py`](file:///ws/pkg/u3.py#L3), "
            "[`pkg/u4.py`](file:///ws/pkg/u4.py#L4) and 7 more\n\n"
            "**Subclassed by** [`Circle`](file:///ws/pkg/shapes.py#L20)\n\n[Documentation") in text
    plain = definition_text(replace(FUNC, xref=xref), markdown=False)
    assert "Used by 12 files: pkg/u0.py, pkg/u1.py, pkg/u2.py, pkg/u3.py, pkg/u4.py and 7 more" in plain
    assert "Subclassed by Circle" in plain and "](" not in plain
    # a file name with backticks stays one code span; nothing used: said once, no subclass line
    odd = Xref(used_by=1, users=(Link("a`b.py", "file:///ws/a%60b.py#L1"),))
    text = definition_text(replace(FUNC, xref=odd), markdown=True, mode="extras")
    assert "**Used by** 1 file: [``a`b.py``](file:///ws/a%60b.py#L1)" in text and text.startswith("**repodoc**")
    none = definition_text(replace(FUNC, xref=Xref(used_by=0)), markdown=True)
    assert "**Used by** no other workspace file" in none and "Subclassed" not in none
    library = Definition(kind="function", full_name="os.path.join", xref=Xref(used_by=0))
    assert "Used by" in definition_text(library, markdown=True, mode="extras")


def test_an_epytext_docstring_shows_its_fields_as_sections() -> None:
    """Twisted's docstrings (epytext) in a hover: `@param` and `@return` as Parameters and Returns, `C{x}`
    and `L{x}` as code (they were raw lines joined into one paragraph, the markup left literal)."""
    func = Definition(kind="function", full_name="pkg.start", signatures=("start(n)",),
                      docstring="Start a L{Team}.\n\n@param n: how many C{Worker}s.\n@type n: C{int}\n"
                                "@return: a L{Deferred}.\n")
    text = definition_text(func, markdown=True)
    assert "Start a ``Team``." in text and "**Parameters**\n\n- `n` (`int`): how many ``Worker``s." in text
    assert "**Returns**: a ``Deferred``." in text and "@" not in text and "{" not in text
