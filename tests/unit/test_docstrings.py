"""Docstrings as Markdown: every paragraph and section kept, reST roles as code, nothing escapes."""

from __future__ import annotations

import pytest
from helpers import contained_errors, count_cleandoc
from hypothesis import given, settings
from hypothesis import strategies as st

from repodoc_lsp.render.docstrings import _one_text, _parsed, _style, docstring_attributes, docstring_markdown
from repodoc_lsp.render.google_titles import titles_joined, titles_spaced
from repodoc_lsp.render.rest import clean, prose
from repodoc_lsp.render.rest import settled as _settled


def test_google_sections_in_full() -> None:
    doc = ("Sum.\n\nArgs:\n    x (int): first\n    device (:class:`torch.device`): where. Default: ``None``\n\n"
           "Returns:\n    int: the sum\n\nRaises:\n    ValueError: bad\n\nNote:\n    Careful here.\n\n"
           "Warning:\n    Slow on CPU.\n")
    out = docstring_markdown(doc)
    assert "- `x` (`int`): first" in out
    assert "- `device` (`torch.device`): where. Default: ``None``" in out  # not garbled by the role
    assert "**Returns**: `int`: the sum" in out and "- `ValueError`: bad" in out
    assert "**Note**\n\nCareful here." in out and "**Warning**\n\nSlow on CPU." in out
    assert not contained_errors(out)



@pytest.mark.parametrize("blank", ["\n", "\n\n", "\n   \n"])
def test_google_sections_with_a_blank_line_under_their_titles(blank: str) -> None:
    """boltons (`Stats`, `remap`) and PyTorch (`lobpcg`) leave a blank line (or more) between a Google
    section's title and its entries, which griffe reads as text: the title was left a line of text
    and the entries lost their indentation."""
    doc = (f"Fetch things.\n\nArgs:\n{blank}    url (str): the address.\n    timeout (float): seconds,\n"
           f"        at most.\n\nReturns:\n{blank}    bytes: the body.\n\nRaises:\n{blank}    ValueError: bad.\n")
    out = docstring_markdown(doc)
    assert "**Parameters**\n\n- `url` (`str`): the address.\n- `timeout` (`float`): seconds,\n  at most." in out
    assert "**Returns**: `bytes`: the body." in out and "- `ValueError`: bad." in out
    assert "Args:" not in out and "Returns:" not in out
    attrs = "A point.\n\nAttributes:\n\n    x (int): across.\n    y (int): down.\n"
    assert docstring_attributes(attrs) == ("A point.", (("x", "int", ": across."), ("y", "int", ": down.")))


@pytest.mark.parametrize("doc", [
    "Fetch.\n\n```\n\nArgs:\n\n    url (str): the address.\n```\n",  # inside a code fence
    "Fetch.\nArgs:\n\n    url (str): the address.\n",  # no blank line above the title
    "Fetch.\n\nArgs:\n\nurl (str): the address.\n",  # no indented block under it
    "Fetch.\n\nExamples:\n\n    x = fetch()\n",  # a block of code, not entries
    "Fetch.\n\nThe arguments:\n\n    url (str): the address.\n",  # not a section's title
])
def test_a_blank_line_under_other_lines_is_kept(doc: str) -> None:
    """Only a Google section's title alone on its line, after a blank line, over blank lines and an
    indented block outside a code fence, loses the blank lines under it."""
    assert titles_joined(clean(doc)) == clean(doc)

@pytest.mark.parametrize("blank", ["", "\n"])
def test_google_section_titles_right_under_a_line(blank: str) -> None:
    """PyTorch (`is_parametrized`, `fork`) writes a Google section's title right under the last entry of
    the section above or under the summary, with no blank line, which griffe reads as text: the title
    was left a line of text and the entries lost their indentation (the whole docstring shown as prose)."""
    doc = (f"Fetch things.\nArgs:\n{blank}    url (str): the address.\n    timeout (float): seconds,\n"
           f"        at most. Default: ``None``\nReturns:\n{blank}    ``True`` if fetched,\n    else ``False``\n"
           f"Raises:\n    ValueError: bad.\n")
    out = docstring_markdown(doc)
    assert out.startswith("Fetch things.\n\n**Parameters**\n\n- `url` (`str`): the address.\n")
    assert "- `timeout` (`float`): seconds,\n  at most. Default: ``None``\n\n**Returns**\n\n" in out
    assert "- ``True`` if fetched,\n  else ``False``" in out and "**Raises**\n\n- `ValueError`: bad." in out
    assert "Args:" not in out and "Returns:" not in out and "Raises:" not in out
    attrs = "A point.\nAttributes:\n    x (int): across.\n    y (int): down.\n"
    assert docstring_attributes(attrs) == ("A point.", (("x", "int", ": across."), ("y", "int", ": down.")))


@pytest.mark.parametrize("doc", [
    "Fetch.\n\n```\nfetch(url)\nArgs:\n    url (str): the address.\n```\n",  # inside a code fence
    "Fetch what the call\nreturns:\n    the body.\n",  # a sentence's word, not a title
    "Fetch.\nRETURNS:\n    the body.\n",  # in capitals
    "Fetch what follows:\nReturns:\n    the body.\n",  # under a line ending in a colon
    "Fetch.\n\n>>> print(fetch.__doc__)\nArgs:\n    url (str): the address.\n",  # a doctest's output
    "Fetch.\nArgs:\nurl (str): the address.\n",  # no indented block under it
    "Fetch.\nReturns: the body,\n    decoded.\n",  # not alone on its line
    "Fetch.\nExamples:\n    x = fetch()\n",  # a block of code, not entries
    "Fetch.\nThe arguments:\n    url (str): the address.\n",  # not a section's title
    "Args:\n    url (str): the address.\n",  # the first line
    "Fetch.\n\nArgs:\n    url (str): the address.\nRaises:\n    ``ValueError`` if bad.\n",  # an entry griffe drops
])
def test_a_title_under_other_lines_is_kept(doc: str) -> None:
    """Only a Google section's title, capitalised, alone on its line, over an indented block of entries griffe
    reads, outside a code fence and a doctest's output, under a line not ending in a colon, gets a blank line
    above it; the others are rendered as before."""
    assert titles_spaced(clean(doc)) == clean(doc)
    if "ValueError" in doc:  # its Args still read: the title left as text loses nothing
        assert "**Parameters**\n\n- `url` (`str`): the address.\n\nRaises:\n``ValueError`` if bad." in \
            docstring_markdown(doc)


def test_numpy_and_sphinx_styles() -> None:
    numpy = "Sum.\n\nParameters\n----------\nx : int\n    first\n\nSee Also\n--------\nprod : the product\n"
    out = docstring_markdown(numpy)
    assert "- `x` (`int`): first" in out and "prod" in out
    rest = "Sum.\n\n:param x: first\n:type x: int\n:returns: the sum\n"
    out = docstring_markdown(rest)
    assert "`x`" in out and "first" in out and "the sum" in out


@pytest.mark.parametrize("doc", [
    # click's `Context.call_on_close`: one field, the docstring's last line (cleaned: stripped)
    "Register a function.\n\n        :param f: The function to execute on teardown.\n        ",
    # requests' `HTTPAdapter.build_response`: `:rtype:` without `:returns:`
    "Build a response.\n\n:param req: The request.\n:param resp: The urllib3 response.\n:rtype: requests.Response\n",
    # requests' `HTTPDigestAuth.build_digest_header`: the field alone, its first line
    "\n        :rtype: str\n        ",
])
def test_sphinx_fields_at_either_end_and_a_lone_rtype_are_sections(doc: str) -> None:
    """griffe's style detection wants a line break before and after a field, and its Sphinx parser keeps
    `:rtype:` only as the type of a `:returns:`: these were shown as raw field lines, or lost the type."""
    out = docstring_markdown(doc)
    assert ":param" not in out and ":rtype:" not in out
    if ":param" in doc:
        assert "**Parameters**" in out
    if ":rtype:" in doc:
        returned = doc.split(":rtype:")[1].strip()
        assert f"**Returns**: `{returned}`" in out


@pytest.mark.parametrize("style", ["numpy", "google"])
def test_doctest_flags_do_not_turn_a_docstring_into_prose(style: str) -> None:
    """griffe leaves `# doctest: +SKIP` and `<BLANKLINE>` out of examples, as Sphinx's output does: that is
    not text lost, and the sections stay sections (the whole docstring was shown as prose)."""
    examples = ">>> f(1)  # doctest: +SKIP, +ELLIPSIS\n2\n>>> print('a\\n\\nb')\na\n<BLANKLINE>\nb\n"
    if style == "numpy":
        doc = "Sum.\n\nParameters\n----------\nx : int\n    first\n\nExamples\n--------\n" + examples
    else:
        doc = "Sum.\n\nArgs:\n    x (int): first\n\nExamples:\n" + "".join(f"    {line}\n" for line in
                                                                       examples.splitlines())
    out = docstring_markdown(doc)
    assert "- `x` (`int`): first" in out
    assert "```pycon\n>>> f(1)\n2\n>>> print('a\\n\\nb')\na\n\nb\n```" in out


def test_a_returned_value_s_continuation_lines_end_as_written() -> None:
    """A line that continues a returned value (no type of its own, `_joined_lines`) ends as written: it was
    given a colon for the description it did not have ("... coloring.:")."""
    numpy = "Color.\n\nReturns\n-------\nA dictionary keyed by node\nholding its colour.\n"
    assert docstring_markdown(numpy).endswith("**Returns**: `A dictionary keyed by node`: holding its colour.")
    google = "Sum.\n\nReturns:\n    int: the sum\n    or if tokenize=True\n    the tokens\n"
    assert "- `int`: the sum\n  or if tokenize=True\n  the tokens" in docstring_markdown(google)


def test_rest_directives_roles_and_literal_blocks() -> None:
    doc = ("Load a :class:`~torch.nn.Module` with :func:`torch.load`.\n\n.. note::\n    Needs :attr:`x`.\n\n"
           ".. warning:: Unsafe.\n\n.. deprecated:: 2.0\n    Use ``g``.\n\nExample::\n\n    f(1)\n\n"
           ".. code-block:: python\n\n    g(2)\n")
    out = docstring_markdown(doc)
    assert "``torch.nn.Module``" in out and "``torch.load``" in out and ":class:" not in out
    assert "**Note**\n\nNeeds ``x``." in out
    assert "**Warning**: Unsafe." in out
    assert "**Deprecated 2.0**\n\nUse ``g``." in out
    assert "Example:\n\n```\nf(1)\n```" in out
    assert "```python\ng(2)\n```" in out
    assert not contained_errors(out)


def test_every_paragraph_reaches_the_page() -> None:
    """DataLoader-like: notes and warnings between and after the sections are all kept."""
    doc = ("Data loader.\n\nArgs:\n    dataset (Dataset): from which to load.\n\n.. warning:: If the ``spawn``\n"
           "    start method is used, ``worker_init_fn`` cannot be unpicklable.\n\n.. warning:: ``len(dataloader)``\n"
           "    heuristic is based on the sampler.\n\nSee :ref:`multiprocessing-best-practices` on more details.\n")
    out = docstring_markdown(doc)
    for words in ("spawn", "unpicklable", "heuristic is based on the sampler", "multiprocessing-best-practices",
                  "on more details", "from which to load"):
        assert words in out, words


@pytest.mark.parametrize("doc", [
    "Summary.\n\n    \n\nMore.",  # an indented whitespace-only line: was ValueError from min()
    "Summary.\n\n    \n    \n",
    "Title\n~~~~~\n\nText after the underline.\n\n## Not a heading",
    "Text\n```\nnever closed\n\n## Still text",
    "~~~\nnever closed either",
    "<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>",
    "```<img src=x onerror=alert(1)>``",
    "\\`<img src=x onerror=alert(1)>`",
    "Text\n---\nText\n===\n- - -\n1. one\n[ref]: http://x",
    "Args:\n    x (",
    ".. note::",
    "::\n\n    ",
])
def test_odd_docstrings_stay_inside_their_section(doc: str) -> None:
    out = docstring_markdown(doc)
    assert not contained_errors(out), out
    assert not contained_errors(prose(doc))


def test_reST_title_and_stray_fence_keep_their_text() -> None:
    out = docstring_markdown("Title\n~~~~~\n\nText\n```\nmore")
    assert "**Title**" in out and "more" in out and "~~~" not in out


def test_text_a_parser_cannot_place_is_kept() -> None:
    """An item's continuation lines at the item's indent (griffe drops them) and `name: text` blocks."""
    doc = ("Find it.\n\nRaises:\n    RuntimeError: If the graph has subclass inputs; this\n"
           "    is not supported as there is no correspondence\n    between inputs and grads.\n")
    out = docstring_markdown(doc)
    assert "between inputs and grads" in out and "RuntimeError" in out
    doc = "Spec.\n\nget_metadata_fn: (guard, value) -> metadata\n    captures the minimum.\n"
    out = docstring_markdown(doc)
    assert "get_metadata_fn" in out and "captures the minimum" in out
    assert not contained_errors(out)


def test_summary_line_renders_roles() -> None:
    from repodoc_lsp.render.docstrings import summary_line
    from repodoc_lsp.render.markdown import inline

    assert inline(summary_line("\n  Wraps :class:`~torch.nn.Module` <b>.\n\nMore.")) == \
        "Wraps ``torch.nn.Module`` &lt;b&gt;."


def test_numpy_notes_warnings_and_google_deprecated() -> None:
    out = docstring_markdown("F.\n\nParameters\n----------\nx : int, optional\n    The x.\n\nNotes\n-----\nA note.\n\n"
                             "Warnings\n--------\nCareful.\n")
    assert "**Notes**\n\nA note." in out and "**Warnings**\n\nCareful." in out and "- `x` (`int`): The x." in out
    out = docstring_markdown("F.\n\nDeprecated:\n    1.0: Use g instead.\n")
    assert "**Deprecated**" in out and "1.0: Use g instead." in out


_PIECES = ["Sum", "the", "x", "Returns", "Args", "Examples", "Note", ">>> f(1)", "...", "``g``", "`h`", "*", "- a",
           "1.", "#", "==", "~~~", "```", "--", "<b>", "&", ".. note", "\\", "é", "\t", "    ", "  ", " ", ""]


@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=6).map(" ".join), min_size=1, max_size=8)
       .map("\n".join), st.sampled_from(["", "\n", "\n    ", "  "]), st.sampled_from(["", "\n", "\n    ", "  "]))
@settings(max_examples=400, deadline=None)
def test_a_docstring_without_sections_is_rendered_as_its_parse(body: str, head: str, tail: str) -> None:
    """The shortcut taken for a docstring without `:` or `---` (`_one_text`: no parse) renders what
    griffe's parse of it renders, whatever its indentation, blank lines, doctests and markup."""
    text = clean(head + body + tail)
    if text and _one_text(text):
        assert docstring_markdown(head + body + tail) == _parsed(text)


def test_the_shortcut_is_not_taken_when_griffe_would_clean_the_text_again() -> None:
    # cleaned once, the first line is indented less than the next: griffe's cleaning dedents these
    text = clean("\nFoo\n    bar\n    baz")
    assert text == "Foo\n    bar\n    baz" and not _one_text(text)
    assert _one_text(clean("Foo.\n\n    bar\n\nMore text, `code` and >>> f(1).")) and not _one_text("A: b")


@given(st.lists(st.sampled_from(["a", ":", " ", "  ", "\n", "\n\n", "\t", "\r", "\x0c", "\xa0", "\u2028",
                                  "\u3000", "\x1f", "\x1c", "\x85", "\x0b", "-"]), max_size=24).map("".join),
       st.sampled_from(["", "Sum.", " x", "x ", "\n y"]))
@settings(max_examples=1500, deadline=None)
def test_settled_is_cleandoc_leaving_the_text_as_it_is(body: str, edge: str) -> None:
    """`_settled` (whether griffe's cleaning would change a text: no second `cleandoc` of each plain
    docstring) answers what `inspect.cleandoc(text.rstrip()) == text` does, whatever the text's
    whitespace, tabs and line ends, cleaned before or not."""
    import inspect

    for text in (edge + body, body + edge, clean(edge + body) if (edge + body).strip() else ""):
        assert _settled(text) == (inspect.cleandoc(text.rstrip()) == text), repr(text)


def test_a_plain_docstring_is_cleaned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    cleaned = count_cleandoc(monkeypatch)
    assert docstring_markdown("Sum the values.\n\n    More, once.\n    ") == "Sum the values.\n\nMore, once."
    assert len(cleaned) == 1


def test_a_cleaned_docstring_is_not_cleaned_again(monkeypatch: pytest.MonkeyPatch) -> None:
    cleaned = count_cleandoc(monkeypatch)
    assert "- `x`: The x." in docstring_markdown("Sum the values.\n\nArgs:\n    x: The x.")
    assert docstring_markdown("Sum the values.\n\n    More, indented.\nDone.") \
        == "Sum the values.\n\nMore, indented.\n\nDone."
    assert clean("Sum.\n\n  x\ny") == "Sum.\n\n  x\ny"
    # as the analysis keeps docstrings (`ast.get_docstring`): left as they are (griffe cleans an empty one)
    assert cleaned in ([], [""])
    assert clean("Sum.\r\n  x\r\n  y") == "Sum.\nx\ny" and clean("\tSum.\n\tx") == "Sum.\nx"
    assert clean("Sum.\n  x\n  ") == "Sum.\nx" and len(cleaned) in (3, 4)


@given(st.lists(st.sampled_from(["a", "Sum.", " ", "  ", "\n", "\n\n", "\t", "\r", "\r\n", "\x0c", "\xa0",
                                  "\u2028", "\u3000", "\x1f"]), max_size=24).map("".join))
@settings(max_examples=1500, deadline=None)
def test_clean_is_cleandoc_of_the_text_with_tabs_and_line_ends_made_plain(doc: str) -> None:
    import inspect

    assert clean(doc) == inspect.cleandoc(doc.expandtabs(8).replace("\r\n", "\n").replace("\r", "\n"))


_STYLE_PIECES = ["Args", "ARGS", "arguments", "Keyword args", "keyword  args", "Other Parameters", "Returns", "Notes",
                 "Note", "Raises", "Yields", "Examples", "Warning", "deprecated", "param x", "type", "rtype", "ivar",
                 "raise ValueError", "\u017f", "\u212a", "\u0131", "é", "x", "1", "_", ":", "::", "---", "-----",
                 "--", "=", " ", "  ", "\t", "    ", ""]


@given(st.lists(st.lists(st.sampled_from(_STYLE_PIECES), max_size=5).map("".join), min_size=1, max_size=10)
       .map("\n".join), st.sampled_from(["", "Sum.\n", "\n", "  "]))
@settings(max_examples=3000, deadline=None)
def test_the_style_is_the_one_griffe_detects(body: str, head: str) -> None:
    """`_style` (its patterns tried only where a line could start a section) is the style griffe's
    `parser="auto"` detects in a docstring's value (cleaned), Google by default, whatever the text."""
    from griffe import Docstring, infer_docstring_style

    docstring = Docstring(head + body)
    assert _style(docstring.value) == infer_docstring_style(docstring, default="google")[0].value
    docstring.value = docstring.value.encode("ascii", "ignore").decode()  # matched in lower case
    assert _style(docstring.value) == infer_docstring_style(docstring, default="google")[0].value


@pytest.mark.parametrize("text", [
    "F.\n\nArgs:\n    x: The x.", "F.\n\n  keyword ARGUMENTS: all\n  of them", "F.\n\nArg\u017f:\n    x: y",
    "F.\n\n:param x: The x.\n:rtype: int\n", "F.\n\n:returns:\n", "F.\n\nParameters\n----------\nx : int\n",
    "F.\n\nOther parameters\n  ---\n", "F.\n\nSee also\n--------\ng\n", "F.\n\nA: b", "F.\n\nArgs: x\nNo indent.",
    "F.\n\nNote:\n    Careful.\n\nParameters\n----------\nx : int\n"])
def test_the_style_of_section_titles_is_griffes(text: str) -> None:
    from griffe import Docstring, infer_docstring_style

    docstring = Docstring(text)
    assert _style(docstring.value) == infer_docstring_style(docstring, default="google")[0].value


def test_version_notes_after_sphinx_fields_are_the_docstring_s_not_the_last_parameter_s() -> None:
    doc = ("Hold state.\n\n:param color: use colours.\n:param show_default: show defaults.\n\n"
           ".. versionchanged:: 8.1\n    The ``show_default`` parameter is overridden\n    by the command's.\n\n"
           ".. warning::\n   First line of a warning,\n   its second line.\n")
    out = docstring_markdown(doc)
    params, notes = out.split("**Changed in version 8.1**", 1)
    assert "- `show_default`: show defaults." in params and "overridden" not in params
    assert notes.startswith("\n\nThe ``show_default`` parameter is overridden\nby the command's.")  # top level
    assert "**Warning**\n\nFirst line of a warning,\nits second line." in notes


def test_a_google_returns_block_is_one_value_with_its_continuation_lines() -> None:
    out = docstring_markdown("Do it.\n\nReturns:\n    Tensor: the result of the thing, which is long\n"
                             "    and continues here.\n")
    assert out.endswith("**Returns**\n\n- `Tensor`: the result of the thing, which is long\n  and continues here.")
    two = docstring_markdown("Do it.\n\nReturns:\n    int: the count.\n    str: the name.\n")
    assert "- `int`: the count.\n- `str`: the name." in two  # two typed values stay two


def test_rest_links_references_and_escapes_become_markdown() -> None:
    out = docstring_markdown("See `the docs <https://x.org/a_(b)>`_ and `Target`_.\n"
                             "Copies of :class:`Tensor`\\s and ``group[\"lr\"]``\\ s.\n"
                             "Described in `Understanding the difficulty\nof training` - Glorot.\n")
    assert "See [the docs](https://x.org/a_%28b%29) and Target.\n" in out
    assert "Copies of ``Tensor``s and ``group[\"lr\"]``s." in out
    assert "`Understanding the difficulty of training` - Glorot." in out  # a span across lines, kept one


def test_a_summary_is_the_first_sentence_of_the_first_paragraph() -> None:
    from repodoc_lsp.render.docstrings import docstring_rest, summary_line

    doc = ("The context is a special internal object that holds state relevant\nfor the script execution at "
           "every level.  It is normally invisible\nto commands.\n\nMore text.")
    assert summary_line(doc) == ("The context is a special internal object that holds state relevant for the "
                                 "script execution at every level.")
    assert docstring_rest(doc) == 4  # its second line goes on after the sentence: counted with the rest
    assert summary_line("Like a tensor, e.g. a view. Then more.") == "Like a tensor, e.g. a view."
    assert summary_line("Uses :class:`Foo` (see X. Glorot). More.") == "Uses ``Foo`` (see X. Glorot)."
    assert summary_line("No end here\nat all\n\nArgs:\n    x: y") == "No end here at all"
    assert summary_line("Summary.\nArgs:\n    x: y") == "Summary." and docstring_rest("Summary.\nArgs:\n    x: y") == 2


def test_a_summary_goes_on_over_a_line_starting_with_a_role() -> None:
    from repodoc_lsp.render.docstrings import summary_line

    assert summary_line("Run the callable passed to\n:func:`aot_function` once.\n\n:param f: it.") == \
        "Run the callable passed to ``aot_function`` once."
    assert summary_line("Run it\n:param f: the callable.") == "Run it"


EPYTEXT = """Start a L{Team} with C{n} workers, see U{the docs<https://twisted.org/x>}, I{really} B{now}.

Details here::

    x = C{1}

>>> f"C{x}"

@param work: the work to pass on to the
    real worker.
@type work: L{callable}

@ivar size: how many.
@type size: C{int}

@return: a L{Deferred} which fires with C{None} when the
    connection is closed.
@rtype: L{Deferred}
@raise ValueError: when bad.
@see: L{the other thing <pkg.other.Thing>}
@since: 12.0
@note: It is slow.
"""


def test_epytext_fields_and_markup_render_as_the_other_styles() -> None:
    """Epytext (pydoctor's format: Twisted and its ecosystem): fields as sections, `C{x}` and `L{x}` as code
    spans (linked as other spans are), `I{x}` and `B{x}` emphasis, `U{url}` a link; literal blocks and
    doctests as written. They were raw lines joined into one paragraph, the markup left literal."""
    from repodoc_lsp.render.markdown import link_code_spans

    out = docstring_markdown(EPYTEXT)
    assert out.startswith("Start a ``Team`` with ``n`` workers, see [the docs](https://twisted.org/x), *really* "
                          "**now**.")
    assert "```\nx = C{1}\n```" in out and '>>> f"C{x}"' in out
    assert "**Parameters**\n\n- `work` (`callable`): the work to pass on to the\n  real worker." in out
    assert "**Attributes**\n\n- `size` (`int`): how many." in out
    assert "- `Deferred`: a ``Deferred`` which fires with ``None`` when the\n  connection is closed." in out
    assert "**Raises**\n\n- `ValueError`: when bad." in out
    assert "**See also**\n\nthe other thing (``pkg.other.Thing``)" in out
    assert "**New in version 12.0**" in out and "**Note**\n\nIt is slow." in out
    assert "@" not in out.replace('f"C{x}"', "") and not contained_errors(out)
    assert "[``Team``](team.md)" in link_code_spans(out, {"Team": "team.md"})
    # a class's `@ivar`s join its attributes' list, their types without literal marks (`C{int}`: `int`)
    assert docstring_attributes(EPYTEXT)[1][0] == ("size", "int", ": how many.")


def test_epytext_type_of_a_name_no_other_field_names_and_the_summary() -> None:
    """`@type x:` alone (Twisted's `loadApplication`): the parameter's type, not dropped with the whole
    docstring shown raw; the summary's markup as code, its fields not part of it."""
    from repodoc_lsp.render.docstrings import docstring_rest, summary_line

    out = docstring_markdown("Load it from C{filename}.\n\n@type filename: C{str}\n@type kind: C{str}\n")
    assert out.endswith("**Parameters**\n\n- `filename` (`str`)\n- `kind` (`str`)")
    doc = "Tests for L{twisted._threads._team}\nand U{the docs<https://x.org>}.\n@param x: y\n"
    assert summary_line(doc) == "Tests for ``twisted._threads._team`` and the docs (https://x.org)."
    assert docstring_rest(doc) == 1


@pytest.mark.parametrize("doc", [
    "The response of the system function::\n\n    B{n-1}(z)\n\nfor B{k}(z) and A{k}(z), numerators.",  # scipy
    "Format it as f'{name}' or '{0}'.format(x); mail me@example.org.\n\n:param x: the value.",
    "Created on Fri.\n\nUse @param as a word; decorate with @contextmanager.",
])
def test_text_that_is_not_epytext_is_left_as_it_is(doc: str) -> None:
    """A brace after a capital letter in a formula, an `@` in a sentence: no epytext there."""
    assert docstring_markdown(doc) == (_parsed(clean(doc)) if ":" in doc else prose(clean(doc)))
    assert "B{k}(z)" in docstring_markdown(doc) or "B{k}" not in doc


@pytest.mark.parametrize("doc", [
    # a reST hyperlink's `_`: requests, boltons
    "Send it, see `the docs <https://x.org/a>`_.\n\n:param x: the thing.\n:returns: y",
    # a type's alternatives, which griffe writes `int | None`: Sphinx and epytext
    "Send it.\n\n:param x: the thing.\n:type x: int or None\n:returns: y",
])
def test_what_griffe_rightly_rewrites_is_not_text_lost(doc: str) -> None:
    """A docstring whose parse only lost a link's `_` or a type's `or` was shown as prose, its fields raw."""
    out = docstring_markdown(doc)
    assert "**Parameters**" in out and ":param" not in out


def test_markdown_fences_and_numbered_lists_in_docstrings_are_kept() -> None:
    """Docstrings written for mkdocstrings (pydantic, FastAPI): a Markdown fence (its info string kept) is a
    code block, a numbered list a list. The fence's lines were escaped into one paragraph of text, and
    each item's number escaped (`1\\.`) so that the list read as one paragraph."""
    doc = ("Skip it.\n\nExample:\n    ```py test=\"skip\"\n    class Model(BaseModel):\n        a: int = 1  # (1)!\n"
           "    ```\n\n    1. The integer.\n    2. The rest.\n\nTried:\n\n1. charset\n2. replace\n\n"
           "Takes two arguments:\n1. The current schema\n2. The next `f`.\n")
    out = docstring_markdown(doc)
    assert '```py test="skip"\nclass Model(BaseModel):\n    a: int = 1  # (1)!\n```' in out
    assert "1. The integer.\n2. The rest." in out and "1. charset\n2. replace" in out
    assert "Takes two arguments:\n1. The current schema\n2. The next `f`." in out
    assert not contained_errors(out)


def test_a_titled_role_keeps_its_target() -> None:
    """`:class:`HTTPAdapter <requests.adapters.HTTPAdapter>``: the target (it was shown as its title alone,
    and could not be linked); a title that says more, before it; a label's role (`:ref:`), its title as text."""
    out = docstring_markdown("Use the :class:`HTTPAdapter <requests.adapters.HTTPAdapter>` or\n"
                             ":class:`an adapter <requests.adapters.BaseAdapter>`.")
    assert out == "Use the ``requests.adapters.HTTPAdapter`` or\nan adapter (``requests.adapters.BaseAdapter``)."
    assert docstring_markdown("As :meth:`x.to(device) <torch.Tensor.to>`.") == \
        "As ``x.to(device)`` (``torch.Tensor.to``)."  # a title of one word: code
    # a label: its title, as text (as code it was escaped when it spanned two lines)
    assert docstring_markdown("Or a :ref:`(connect timeout,\n    read timeout) <timeouts>` tuple.") == \
        "Or a (connect timeout, read timeout) tuple."


@pytest.mark.parametrize(("field", "name"), [
    (r"\*\*kwargs", "**kwargs"), (r"\*args", "*args"), ("**kwargs", "**kwargs"), ("*args", "*args"),
    (r"dict \*\*kwargs", "**kwargs"), (r"\\*\\*kwargs", "**kwargs"),
])
def test_a_sphinx_field_of_a_starred_parameter_is_a_parameter(field: str, name: str) -> None:
    """requests' `Response.json` (`:param \\*\\*kwargs:`): griffe's detection wants a field's name to be a
    word, so the docstring was read as Google's and shown raw, its escapes doubled; a docstring read as
    Sphinx's showed the name with its backslashes."""
    doc = (f"Decodes the JSON body.\n\n:param {field}: Optional arguments that ``json.loads`` takes.\n"
           ":raises requests.exceptions.JSONDecodeError: If the response body does not\n    contain valid json.\n")
    out = docstring_markdown(doc)
    assert f"**Parameters**\n\n- `{name}`" in out and ":param" not in out and "\\" not in out
    assert "- `requests.exceptions.JSONDecodeError`: If the response body does not\n  contain valid json." in out
    assert not contained_errors(out)
    typed = docstring_markdown(f"Send.\n\n:param x: the thing.\n:param {field}: more.\n:type {field}: dict")
    assert f"- `{name}`" in typed and "\\" not in typed


def test_an_inline_literal_across_lines_is_one_code_span() -> None:
    """reST's ``` ``literal`` ``` may cross a line break (as may a role, a literal once rendered); it was
    shown as escaped backticks. Text that merely holds two backticks is left as it was."""
    assert docstring_markdown("Set the value with ``foo(bar,\nbaz)`` and go on.") == \
        "Set the value with ``foo(bar, baz)`` and go on."
    assert docstring_markdown("A case is :class:`~werkzeug\n.exceptions.HTTPException` which is\nforwarded.") == \
        "A case is ``werkzeug .exceptions.HTTPException`` which is\nforwarded."
    assert prose("Of size ``(C, d_1,\n..., d_K)`` or ``(C,\nd)``, then\n``x``.") == \
        "Of size ``(C, d_1, ..., d_K)`` or ``(C, d)``, then\n``x``."
    assert prose("One ``x`` and ``y``\nnext") == "One ``x`` and ``y``\nnext"  # the single-line case
    assert prose("The mark ``\nis two backticks.\n\nMore ``a``.") == \
        "The mark \\`\\`\nis two backticks.\n\nMore ``a``."  # never closed: left as it is
    assert prose("A ``b\n.. note:: c``") == "A \\`\\`b\n\n**Note**: c\\`\\`"  # a directive ends the paragraph
