"""NumPy docstrings read without griffe's parser (`render/numpydoc.py`): the sections griffe's parser
makes, and so the same Markdown, or no reading at all where a section is not read there."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repodoc_lsp.render.docstrings import _section, docstring_markdown
from repodoc_lsp.render.numpydoc import numpy_sections


def _griffe_sections(value: str) -> list[Any]:
    from griffe import Docstring

    docstring = Docstring("")
    docstring.value = value
    return list(docstring.parse("numpy", warnings=False))


def _plain(value: object) -> object:
    """A section's value as plain data: every attribute griffe sets, annotations as text."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "__dict__"):
        return {k: str(v) if k == "annotation" and v is not None else _plain(v) for k, v in vars(value).items()}
    return value


def _dump(sections: list[Any]) -> list[object]:
    return [(type(s).__name__, s.kind.value, s.title, _plain(s.value)) for s in sections]


_TITLES = ["Parameters", "Other Parameters", "Returns", "Yields", "Receives", "Raises", "Warns", "Examples",
           "Notes", "See Also", "Warnings", "Custom Title", "Attributes", "Deprecated", "Methods", "parameters"]
_LINES = ["x : int", "x, y : int, optional", "a : {'x', 'y'}, optional", "b : float, default 1.0",
          "c : str, default: 'a'", "*args : tuple", "**kw", "x: int", "int", "ndarray of shape (n,)", "ValueError",
          "name : ", " : ", ": int", "9 : bad", "out : ndarray or None", "Summary text.", "More text: with a colon.",
          "```", "```python", "    Input array.", "    Continued", "  two spaces", "   ", "", "", "", ">>> f(1)",
          "... g(2)", ">>> f(1)  # doctest: +SKIP", ">>> g()  #doctest:+SKIP", "2  #doctest:x",
          "    >>> f(3)  # doctest: +ELLIPSIS", "<BLANKLINE>", "  <BLANKLINE>  ", "1.0", "-----", "---", " -- ",
          "- item", ".. note::", "    .. math:: x"]


@st.composite
def _numpy_docstrings(draw: Any) -> str:
    lines = [draw(st.sampled_from(["Sum.", "Sum the values.", "```", ""]))]
    for _ in range(draw(st.integers(0, 4))):
        title = draw(st.sampled_from(_TITLES))
        lines += ["" if draw(st.booleans()) else "Text before.", title, draw(st.sampled_from(["-" * len(title), "---",
                                                                                             "-- --"]))]
        lines += draw(st.lists(st.sampled_from(_LINES), max_size=8))
    return "\n".join(lines).strip() or "Sum."


@given(_numpy_docstrings())
@settings(max_examples=1500, deadline=None)
def test_the_sections_are_griffes(value: str) -> None:
    """The sections read here are griffe's NumPy sections of the same text, attribute for attribute,
    whatever the sections, items, doctests and fences; a docstring with a section not read here
    (`Attributes`, `Deprecated`, `Methods`) is not read."""
    try:
        expected = _dump(_griffe_sections(value))
    except IndexError:  # griffe's reading of a section with nothing after its underline
        with pytest.raises(IndexError):
            numpy_sections(value)
        return
    read = numpy_sections(value)
    if read is None:
        assert any(line.lower() in ("attributes", "deprecated", "methods") for line in value.split("\n"))
        return
    assert _dump(read) == expected
    assert [_section(s) for s in read] == [_section(s) for s in _griffe_sections(value)]


def test_doctest_flags_and_blank_lines_are_taken_out_of_examples() -> None:
    doc = ("Sum.\n\nExamples\n--------\nA first one.\n\n>>> f(1)  # doctest: +SKIP\n<BLANKLINE>\n2\n\n"
           ">>> g()\n... # doctest: +ELLIPSIS")
    (_, examples) = numpy_sections(doc) or [None, None]
    assert _plain(examples.value) == [["text", "A first one."], ["examples", ">>> f(1)\n\n2"],
                                      ["examples", ">>> g()\n..."]]
    assert _dump(numpy_sections(doc) or []) == _dump(_griffe_sections(doc))


def test_parameters_returns_and_notes_as_griffe_reads_them() -> None:
    doc = ("Sum.\n\nParameters\n----------\nx, y : {'a', 'b'}, optional\n    The values.\nn : int\n    default 3\n"
           "\nReturns\n-------\nout : ndarray\n    The sum.\n\nNotes\n-----\nCareful.")
    sections = numpy_sections(doc)
    assert sections is not None and _dump(sections) == _dump(_griffe_sections(doc))
    out = docstring_markdown(doc)
    assert "- `x` (`'a', 'b'`): The values." in out and "- `n` (`int`): default 3" in out
    assert "**Returns**: `out` (`ndarray`): The sum." in out and "**Notes**\n\nCareful." in out


def test_a_section_not_read_here_is_griffes() -> None:
    doc = "Sum.\n\nAttributes\n----------\nx : int\n    The x."
    assert numpy_sections(doc) is None
    assert "**Attributes**" in docstring_markdown(doc) and "- `x` (`int`): The x." in docstring_markdown(doc)
