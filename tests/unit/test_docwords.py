"""A document's identifiers are the words that are code in it (`analysis/docwords.py`): code spans,
code blocks, reST roles' targets and literals, names shaped like code; never a capitalised English
word of its prose or headings. Its headings stay symbols of their own."""

from __future__ import annotations

import os
from pathlib import Path

from helpers import cli_here, make_workspace

from repodoc_lsp.analysis.model import Language, SymbolKind
from repodoc_lsp.analysis.source import analyse_source
from repodoc_lsp.analysis.text import analyse_text

REST = """Quickstart Guide
================

Basically you create a :class:`~flask.Flask` object. However please call
:func:`make_app <app.factory.make_app>` first; see :doc:`patterns/templates`.
Set ``SERVER_NAME`` or read `Werkzeug <https://werkzeug.example>`_ docs.
The app_config and app.settings names, and the JSONEncoder class.

Section Two
~~~~~~~~~~~

Something happens here::

    from flask import Blueprint
    bp = Blueprint("admin", __name__)  # Register the Blueprint later

.. code-block:: python
   :caption: views.py

   def show_page(name):
       raise ValueError("Nothing found here")

.. note::

   Remember this Warning when Deploying.

>>> render_page()
Traceback (most recent call last):
RuntimeError: Working outside of context.

Another Heading
~~~~~~~~~~~~~~~

Final words.
"""

MARKDOWN = """# Installing Things

However, you should read `load_config()` first. Basically the Settings object
comes from `pkg.settings`. The snake_case and camelCase words count.

## Usage Notes

```python
# Loads Everything at once
client = HttpClient(base_url)
print("Hello World from here")
```

```text
Output Shown Here
```
"""

PROSE = {"Basically", "However", "Quickstart", "Guide", "Section", "Two", "Something", "Remember",
         "Warning", "Deploying", "Another", "Heading", "Final", "Werkzeug", "docs", "Nothing", "Working",
         "Register", "patterns", "templates", "Traceback", "recent", "Installing", "Things", "Settings",
         "Usage", "Notes", "Loads", "Everything", "Hello", "World", "Output", "Shown", "python", "note"}


def test_rest_document_keeps_only_its_code_words() -> None:
    facts = analyse_text(REST, Language.MARKDOWN, rest=True)
    found = set(facts.identifiers)
    assert {"flask", "Flask", "app", "factory", "make_app", "SERVER_NAME", "app_config", "settings",
            "JSONEncoder", "Blueprint", "admin", "__name__", "views", "show_page", "name", "ValueError",
            "render_page", "RuntimeError"} <= found
    assert not PROSE & found, sorted(PROSE & found)
    # headings are symbols of their own, a `~~~` underline no code fence: the headings after it are found
    assert [s.name for s in facts.symbols if s.kind is SymbolKind.HEADING] == \
        ["Quickstart Guide", "Section Two", "Another Heading"]


def test_markdown_document_keeps_only_its_code_words() -> None:
    facts = analyse_text(MARKDOWN, Language.MARKDOWN)
    found = set(facts.identifiers)
    assert {"load_config", "pkg", "settings", "snake_case", "camelCase", "client", "HttpClient", "base_url",
            "print"} <= found
    assert not PROSE & found, sorted(PROSE & found)
    assert [s.name for s in facts.symbols] == ["Installing Things", "Usage Notes"]


def test_rst_files_are_read_as_rest_by_name() -> None:
    rst = analyse_source("docs/guide.rst", REST.encode())
    assert "Blueprint" in rst.identifiers and "Basically" not in rst.identifiers
    assert [s.name for s in rst.symbols] == ["Quickstart Guide", "Section Two", "Another Heading"]


def test_kw_page_of_a_document_lists_its_code_words_and_headings(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", {"manual/guide.rst": REST, "README.md": MARKDOWN,
                                            "pkg/__init__.py": '"""The package."""\n'})
    proc = cli_here("generate", str(root), env={**os.environ, "REPODOC_CACHE_DIR": str(tmp_path / "c")})
    assert proc.returncode == 0, proc.stderr
    for rel, headings, code in (
            ("manual/guide.rst", ["Quickstart Guide", "Another Heading"], ["make_app", "JSONEncoder"]),
            ("README.md", ["Installing Things", "Usage Notes"], ["load_config", "HttpClient"])):
        page = (root / "docs" / f"{rel}_kw.md").read_text(encoding="utf-8")
        identifiers = page.split("### Identifiers", 1)[1].split("\n## ", 1)[0]
        assert all(f"`{w}`" in identifiers for w in code), identifiers
        assert not [w for w in PROSE if f"`{w}`" in identifiers], identifiers
        listed = page.split("### Headings", 1)[1].split("###", 1)[0]
        assert all(f"**`{h}`**" in listed for h in headings), listed


def test_a_literal_over_a_line_end_and_a_prompt_in_a_text_block() -> None:
    doc = ("If there is ``--bar\n--foo``, then the callback for ``bar`` fires.\n\n"
           ".. code-block:: text\n\n    > netstat -ano | findstr 5000\n    TCP 127.0.0.1:5000 LISTENING 6847\n")
    found = set(analyse_text(doc, Language.MARKDOWN, rest=True).identifiers)
    assert {"bar", "foo", "netstat", "ano", "findstr"} <= found
    assert not {"then", "the", "callback", "fires", "TCP", "LISTENING"} & found  # prose, and a command's output


def test_myst_roles_and_directives_in_markdown() -> None:
    doc = ("Read {doc}`Extending Things <extending>` and {func}`gc.collect`.\n\n"
           "```{include} ../README.md\n:start-after: 'code-begin -->'\n```\n\n"
           "```{note}\nThis Note says snake_case.\n```\n\n"
           "```{autofunction} attrs.make_class\n```\n\n"
           "```pycon\n>>> fail()\nValueError: 'x' has to be smaller than 'y'!\n```\n")
    found = set(analyse_text(doc, Language.MARKDOWN).identifiers)
    assert {"collect", "snake_case", "attrs", "make_class", "fail", "ValueError"} <= found
    assert not {"Extending", "Things", "extending", "start", "after", "This", "Note", "has", "smaller", "than"} & found


def test_a_fence_in_a_list_item_and_a_sessions_values() -> None:
    doc = ("- A slotted class:\n\n    ```pycon\n    >>> s.method()\n    False\n"
           "    AttributeError: 'Slotted' object attribute is read-only\n"
           "    <function fits_byte at 0x10fd7a0d0>\n    ```\n\n"
           "```console\n$ flask --app hello run\nInstance: /home/david/instance\n"
           " * Running on http://127.0.0.1:5000/ (Press CTRL+C to quit)\n```\n")
    found = set(analyse_text(doc, Language.MARKDOWN).identifiers)
    assert {"method", "False", "AttributeError", "fits_byte", "flask", "hello", "run"} <= found
    assert not {"only", "read", "object", "x10fd7a0d0", "slotted", "Instance", "home", "david", "Running",
                    "Press", "CTRL", "quit"} & found


def test_a_docstring_in_a_code_block_is_prose() -> None:
    doc = ('```python\ndef func(x: str) -> str:\n    """\n    Do something.\n\n    Args:\n'
           '        x: A very important_value.\n    """\n    return x.upper()\n```\n')
    found = set(analyse_text(doc, Language.MARKDOWN).identifiers)
    assert {"func", "str", "important_value", "return", "upper"} <= found
    assert not {"Do", "something", "Args", "very", "important"} & found


def test_a_directives_name_is_no_word_and_its_argument_is_prose() -> None:
    doc = ".. image:: _static/debugger.png\n\n.. warning:: Never call ``eval_input`` on Data.\n"
    found = set(analyse_text(doc, Language.MARKDOWN, rest=True).identifiers)
    assert {"_static", "eval_input"} <= found
    assert not {"image", "warning", "Never", "Data"} & found
