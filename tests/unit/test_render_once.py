"""Work a render worker did more than once per page or per object, now done once: the same pages."""

from __future__ import annotations

import gc
import re
import threading
from pathlib import Path

import jinja2
import pytest
from helpers import count_cleandoc, recorded
from hypothesis import given, settings
from hypothesis import strategies as st

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.render import docstrings, file_page, file_sections, fit, folder_pages, links, pages, purpose, rest
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.docstrings import docstring_markdown
from repodoc_lsp.render.pages import Renderer, Site


def _loses_text_line_by_line(source: str, rendered: str) -> bool:
    """`_loses_text` as it was: every line's words found by the expression, every line title-checked."""
    lacking = {w for w in set(re.findall(r"\w+", source)) - set(re.findall(r"\w+", rendered))
               if w.lower() not in docstrings._MARKUP}
    return any(not docstrings._TITLE_LINE.match(line) and not lacking.isdisjoint(re.findall(r"\w+", line))
               for line in source.splitlines())


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("ab Args:\n\r\x0b\x0c\x1c\x85\u2028é_-=~.`\t"), max_size=40),
       st.text(st.sampled_from("ab Args:\n é_"), max_size=12))
def test_loses_text_answers_as_line_by_line(source: str, rendered: str) -> None:
    assert docstrings._loses_text(source, rendered) == _loses_text_line_by_line(source, rendered)


class _CountedPattern:
    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.lines = pattern, []  # type: list[str]

    def match(self, line: str) -> re.Match[str] | None:
        self.lines.append(line)
        return self.pattern.match(line)


def test_only_lines_holding_a_lost_word_are_title_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _CountedPattern(docstrings._TITLE_LINE)
    monkeypatch.setattr(docstrings, "_TITLE_LINE", counted)
    doc = "Sum them.\n\n" + "".join(f"More words, line {i}.\n" for i in range(30)) + \
        "\nArgs:\n    x: The values.\n\nReturns:\n    The sum.\n"
    assert "**Parameters**" in docstrings.docstring_markdown.__wrapped__(doc)
    assert counted.lines == ["Args:"]  # `Args` is lost (a title; `Returns` is markup), nothing else


def _site(files: dict[str, str]) -> Site:
    facts = {rel: analyse_source(rel, text.encode()) for rel, text in files.items()}
    return Site.build(project="p", root="/r", out="/r/docs", embed_max=10**6,
                      relations=Relations({rel: f.imports for rel, f in facts.items()}), facts=facts,
                      sizes={rel: len(text.encode()) for rel, text in files.items()}, folders=[""])


DOC = "Does one thing and says so at some length. " * 6


def test_a_split_page_links_the_signatures_of_each_page_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page whose entries go to part pages worked out the links of every signature for itself
    before `_split` worked them out again for the entries it keeps and for each part."""
    source = "class Base:\n    pass\n\n\nclass C:\n" + "".join(
        f'    def m{i}(self, x: Base) -> Base:\n        """{DOC}"""\n\n' for i in range(400))
    site = _site({"m.py": source})
    seen: list[str] = []
    plain = fit.signature_links

    def counted(classes: list, methods_of: dict, functions: list, *args: object) -> object:
        seen.extend(m.anchor for c in classes for m in methods_of.get(c.anchor, ()))
        seen.extend(f.anchor for f in functions)
        return plain(classes, methods_of, functions, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(fit, "signature_links", counted)
    rendered = Renderer().render_pages(pages.where_of(site), "docs", "m.py", pages.gather_docs(site, "m.py"),
                                       site.facts, source)
    assert len(rendered) > 1  # split
    assert len(seen) == len(set(seen)) == 400


def test_a_folder_s_pages_make_a_file_s_purpose_once(monkeypatch: pytest.MonkeyPatch) -> None:
    site = _site({"a.py": '"""Adds."""\n', "b.py": "def f():\n    pass\n"})
    made: list[str] = []
    plain = purpose._file_purpose

    def counted(rel: str, facts: object, used: dict[str, int]) -> purpose.Purpose:
        made.append(rel)
        return plain(rel, facts, used)  # type: ignore[arg-type]

    monkeypatch.setattr(purpose, "_file_purpose", counted)
    renderer = Renderer()
    for kind, subject in (("docs", "a.py"), ("docs", "b.py"), ("index", ""), ("doc", "")):
        page = renderer.render(site, kind, subject, "" if kind == "docs" else None)
        assert "Adds." in page or kind == "docs"
    assert sorted(made) == ["a.py", "b.py"]


def test_a_class_s_attribute_title_is_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A class's attributes' title (`Members`, `Fields`, `Attributes`: its bases and decorators
    looked at) was worked out for each of its attributes; a class of one name (most) holds its
    attributes and methods without a look at their lines. The same entries."""
    source = ("import enum\n\n\nclass Colour(enum.Enum):\n    RED = 1\n    GREEN = 2\n    BLUE = 3\n\n"
              "    def mix(self):\n        pass\n\n\nif X:\n    class A:\n        x = 1\n\n        def f(self):\n"
              "            pass\nelse:\n    class A:\n        y = 2\n\n        def g(self):\n            pass\n")
    facts = analyse_source("m.py", source.encode())
    classes = [s for s in facts.symbols if s.kind.value == "class"]
    titled: list[str] = []
    plain = file_sections._attribute_title

    def counted(c: object) -> str:
        titled.append(c.qualname)  # type: ignore[attr-defined]
        return plain(c)  # type: ignore[arg-type]

    monkeypatch.setattr(file_sections, "_attribute_title", counted)
    of_class, module = file_sections.attributes(facts, classes)
    assert sorted(titled) == ["A", "A", "Colour"]
    assert {a: (g["title"], [e["name"] for e in g["entries"]]) for a, g in of_class.items()} == {
        "class-Colour": ("Members", ["RED", "GREEN", "BLUE"]), "class-A": ("Attributes", ["x"]),
        "class-A-2": ("Attributes", ["y"])}
    assert module == []
    methods = file_sections.methods_by_class(facts.symbols, classes)
    assert {a: [m.name for m in found] for a, found in methods.items()} == {
        "class-Colour": ["mix"], "class-A": ["f"], "class-A-2": ["g"]}


def test_a_page_s_lists_of_files_work_out_its_folder_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The items of a page's long lists of files (Imported by, its tests; Used by) are made with
    the page's folder worked out once per list, not once per item (`_file_parts`): the same page."""
    files = {"lib/a.py": "def f():\n    pass\n", **{f"users/u{i}.py": "from lib.a import f\n" for i in range(30)},
             **{f"tests/test_u{i}.py": "import lib.a\n" for i in range(3)}}
    site = _site(files)
    expected = Renderer().render(site, "docs", "lib/a.py", "")
    asked: list[str] = []
    plain = links.file_parts

    def counted(page: str, rel: str) -> tuple[str, str, str, str, str]:
        asked.append(rel)
        return plain(page, rel)

    monkeypatch.setattr(links, "file_parts", counted)
    assert Renderer().render(site, "docs", "lib/a.py", "") == expected
    assert "[u29.py](../users/u29.py_docs.md)" in expected and "33 importing files in all" in expected
    assert asked == []


def test_only_a_line_under_a_mark_is_looked_at_as_a_title(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of prose is checked for a reST section title's underline below it only when the next
    line starts with one of the underline's marks (most lines: none): the same Markdown."""
    checked: list[str] = []
    plain = rest._is_underline

    def counted(line: str, title: str, indent: int) -> bool:
        checked.append(line)
        return plain(line, title, indent)

    monkeypatch.setattr(rest, "_is_underline", counted)
    text = "Sum them.\nAll of them,\n  and more.\n\nTitle\n=====\n\nThe end\n-- said someone.\n\tTabbed."
    assert rest.prose(text) == \
        "Sum them.\nAll of them,\nand more.\n\n**Title**\n\nThe end\n-- said someone.\nTabbed."
    assert checked == ["=====", "-- said someone."]


def test_a_file_page_is_rendered_without_filters_over_its_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file page's derived classes, its security findings by level and its related files' counts
    come with its view, not from the template's `selectattr`, `rejectattr`, `list` and `sum` filters
    (each a call through Jinja's async wrapper, per page)."""
    files = {"pkg/a.py": "import os\nimport pickle\n\n\nclass A(Base):\n    pass\n\n\ndef f(x):\n"
                         "    os.system(x)\n    return pickle.loads(x)\n",
             "pkg/b.py": "import pkg.a\n", "pkg/c.py": "X = 1\n"}
    renderer = Renderer()
    used: list[str] = []
    for name in ("selectattr", "rejectattr", "list", "sum"):
        plain = renderer.env.filters[name]
        monkeypatch.setitem(renderer.env.filters, name,
                            lambda *a, _plain=plain, _name=name, **k: used.append(_name) or _plain(*a, **k))
    page = renderer.render(_site(files), "docs", "pkg/a.py", "")
    assert "- `A` derives from `Base`" in page and "Risky" in page and "To check" in page
    assert "Listed above: 1 importing it" in page
    assert used == []


def test_a_parsed_docstring_is_cleaned_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """griffe cleans the text it is given; `docstring_markdown` gives it the text it cleaned already."""
    cleaned = count_cleandoc(monkeypatch)
    doc = "Sum them.\n\n    Args:\n        x: The values.\n\n    Returns:\n        The sum.\n    "
    out = docstring_markdown.__wrapped__(doc)
    assert out == "Sum them.\n\n**Parameters**\n\n- `x`: The values.\n\n**Returns**: The sum."
    assert [d for d in cleaned if d] == [doc]  # griffe's Docstring("") cleans "" (nothing to do)
    # a text griffe's cleaning changes (a tab it expands) is given as it is: griffe cleans it
    assert docstrings._sections("Sum.\n\n\tArgs:\n\t\tx: The values.")


def _link_code_spans_line_by_line(text: str, links: dict[str, str]) -> str:
    """`link_code_spans` as it was: every line looked at for a fence, spans linked line by line."""
    if not links or "`" not in text:
        return text
    out, fence = [], ""
    for line in text.split("\n"):
        opened = md._FENCE_LINE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not opened.group(2).strip():
                fence = ""
        elif opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            fence = opened.group(1)
        else:
            line = md._SPAN.sub(lambda m: f"[{m.group(0)}]({links[k]})" if (k := m.group(2).strip()) in links
                                else m.group(0), line)
        out.append(line)
    return "\n".join(out)


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from("ab`~ \n\r\\[x"), max_size=40))
def test_code_spans_are_linked_as_line_by_line(text: str) -> None:
    links = {"a": "A.md", "ab": "AB.md", "x": "X.md#x", "b a": "BA.md"}
    assert md.link_code_spans(text, links) == _link_code_spans_line_by_line(text, links)


def test_a_text_without_a_fence_is_linked_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _CountedPattern(md._FENCE_LINE)
    monkeypatch.setattr(md, "_FENCE_LINE", counted)
    text = "Uses `a` and `b`.\n\n- `a`: one\n- `c`: `a`"
    assert md.link_code_spans(text, {"a": "A.md"}) == \
        "Uses [`a`](A.md) and `b`.\n\n- [`a`](A.md): one\n- `c`: [`a`](A.md)"
    assert counted.lines == []
    assert md.link_code_spans("```\n`a`\n```\n`a`", {"a": "A.md"}) == "```\n`a`\n```\n[`a`](A.md)"
    assert counted.lines == ["```", "```"]  # only the lines that may be fences are matched


def test_a_long_list_of_members_folds_without_a_macro_call_per_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    called: list[str] = []
    plain = jinja2.runtime.Macro.__call__

    def counted(macro: jinja2.runtime.Macro, *args: object, **kwargs: object) -> object:
        called.append(macro.name)
        return plain(macro, *args, **kwargs)

    monkeypatch.setattr(jinja2.runtime.Macro, "__call__", counted)
    plain_call = jinja2.runtime.Context.call
    others: list[str] = []  # what the page calls that is not a macro (each a Context.call as costly as a macro's)

    def call(context: jinja2.runtime.Context, obj: object, *args: object, **kwargs: object) -> object:
        if not isinstance(obj, jinja2.runtime.Macro):
            others.append(getattr(obj, "__name__", ""))
        return plain_call(context, obj, *args, **kwargs)

    monkeypatch.setattr(jinja2.runtime.Context, "call", call)
    source = "class C:\n" + "".join(f"    a{i} = {i}\n" for i in range(23)) + \
        "".join(f"    def m{i}(self):\n        pass\n" for i in range(25)) + \
        "".join(f"n{i} = {i}\n" for i in range(21))
    page = Renderer().render(_site({"m.py": source}), "docs", "m.py", source)
    assert "\n- <a id=\"method-C.m19\"></a>`m19(self)` ([L63](../m.py#L63))\n\n" \
        "<details><summary>5 more methods</summary>\n\n- <a id=\"method-C.m20\">" in page
    assert "<details><summary>3 more attributes</summary>\n\n" in page
    assert "<details><summary>1 more module-level name</summary>\n\n" in page
    assert "**Methods** (25)\n" in page and "- **Lines**: 95\n" in page
    assert "fold" not in called and called.count("unfold") == 1  # the module-level names'; a class's lists write it
    assert "format" not in others  # counts are the `grouped` filter, not `"{:,}".format(n)`


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["", "/abs/ws", "ws", "../ws", "a b/ws"]), st.sampled_from(["", "/abs/out", "out", "ws/docs"]),
       st.lists(st.sampled_from(["a", "b c", "..", "x_y"]), max_size=3),
       st.sampled_from(["m.py_docs.md", "m.py_kw.md", "index.md"]), st.sampled_from(["m.py", "a/m.py", "b c/#.py"]))
def test_a_source_link_is_the_one_worked_out_for_its_page(root: str, out: str, folders: list[str], name: str,
                                                         rel: str) -> None:
    page = "/".join([*folders, name])
    where = pages.Where("p", root, out, 1000)
    expected = md.href(links.posixpath.relpath(links.posixpath.join(root, rel),
                                               links.posixpath.dirname(links.posixpath.join(out, page))))
    assert links.source_href(where.root, where.out, page, rel) == expected


def test_a_file_s_pages_link_its_source_with_one_relpath(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file's page asked for its source link twice (its link and its line links) and its keyword
    page once more, each a `posixpath.relpath`."""
    site = _site({"pkg/m.py": "def f():\n    pass\n"})
    links.src_in.cache_clear()
    made: list[str] = []
    plain = links.posixpath.relpath
    monkeypatch.setattr(links.posixpath, "relpath", lambda path, start: made.append(path) or plain(path, start))
    renderer = Renderer()
    docs = renderer.render(site, "docs", "pkg/m.py", "def f():\n    pass\n")
    kw = renderer.render(site, "kw", "pkg/m.py")
    assert "m.py#L1" in docs and "(../../" in kw
    assert len(made) == 1


def test_links_to_anchors_of_one_page_work_out_its_path_once() -> None:
    """Links from pages of one folder to anchors of one page share the page's path: worked out once
    (`md.rel_link_in`: 45,219 times for PyTorch's pages, for 16,791 paths), the same links."""
    links.link_in.cache_clear()
    links.rel_in.cache_clear()
    asked = [("a/x.md", "b/y.md", "f1"), ("a/z.md", "b/y.md", "f2"), ("a/x.md", "b/y.md", ""),
             ("a/z.md", "b/y.md", "f1")]
    made = [links.page_link(page, target, fragment) for page, target, fragment in asked]
    assert made == [md.href(md.rel_link_in("a", target), fragment) for _page, target, fragment in asked]
    assert made[0] == "../b/y.md#f1"
    assert links.rel_in.cache_info().misses == 1


def test_a_file_page_s_entries_make_no_context_and_call_no_line_link(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each class, function and members list was an `include` (a new context copying the page's
    variables) and each line link a call of `line_href`: a file page now makes two contexts (its
    own and its macros'), whatever its entries, and writes its line links without a call."""
    made = recorded(monkeypatch, jinja2.Template, "new_context", key=lambda template: template.name or "")
    called: list[int] = []
    plain_links = file_page.line_links
    monkeypatch.setattr(file_page, "line_links", lambda *where: lambda line: called.append(line) or
                        plain_links(*where)(line))
    source = "".join(f"class C{i}:\n    def m(self):\n        pass\n\n\ndef f{i}():\n    pass\n\n\n" for i in range(4))
    page = Renderer().render(_site({"m.py": source}), "docs", "m.py", source)
    assert "#### `class C3` ([L28](../m.py#L28))\n" in page
    assert "- <a id=\"method-C3.m\"></a>`m(self)` ([L29](../m.py#L29))\n" in page
    assert "#### `def f3()` ([L33](../m.py#L33))\n" in page
    assert made == ["file_docs.md.j2", "_macros.md.j2"] and called == []


def _loops_of(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Where the `LoopContext`s (a template's loop reading `loop`) rendered from now on are made: one entry each."""
    made: list[int] = []
    plain = jinja2.runtime.LoopContext.__init__

    def counted(self: jinja2.runtime.LoopContext, *args: object, **kwargs: object) -> None:
        made.append(1)
        plain(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jinja2.runtime.LoopContext, "__init__", counted)
    return made


def _entries(n: int) -> str:
    """A module of `n` imports (each on two lines, with names), `n` decorated functions with doctests, a class
    with `n` decorated methods named as the functions, and `__all__`."""
    return "".join(
        f"import os.path as p{i}\nfrom json import dumps, loads as l{i}\n" for i in range(n)) + \
        f"__all__ = {[f'f{i}' for i in range(n)]!r}\n" + \
        "".join(f"@staticmethod\n@dec{i}\ndef f{i}():\n    '''>>> f{i}()'''\n\n\n" for i in range(n)) + \
        "@dec\nclass C:\n" + "".join(f"    @property\n    @dec\n    def f{i}(self):\n        pass\n" for i in range(n))


def test_a_page_s_short_lists_are_joined_without_a_loop_per_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """An import's lines and names, a definition's decorators, `__all__` and the doctest list of a file page
    (and the members a class inherits: `test_page_api.py`), and the links of each name of a keyword page,
    are each joined by one filter call (`codes`, `linelinks`, `namelinks`, `kwlinks`), not a template loop
    (a `LoopContext` and `loop.last` per entry): pages of 2 and of 6 entries make as many loops."""
    made = _loops_of(monkeypatch)
    counts = []
    for n in (2, 6):
        source = _entries(n)
        site = _site({"m.py": source})
        renderer = Renderer()
        made.clear()
        docs = renderer.render(site, "docs", "m.py", source)
        kw = renderer.render(site, "kw", "m.py")
        counts.append(len(made))
    assert counts[0] == counts[1], counts
    assert "- <a id=\"import-os.path\"></a>`os.path` ([L1](../m.py#L1), [L3](../m.py#L3), [L5](../m.py#L5), " in docs
    assert "- <a id=\"import-json\"></a>`json` ([L2](../m.py#L2), [L4](../m.py#L4), " in docs
    assert "): `dumps`, `loads`\n" in docs
    assert "#### `def f5()` ([L" in docs and ") `@staticmethod` `@dec5`\n" in docs
    assert "- <a id=\"method-C.f5\"></a>`f5(self)` ([L" in docs and ") `@property` `@dec`\n" in docs
    assert "Public API (`__all__`): `f0`, `f1`, `f2`, `f3`, `f4`, `f5`.\n" in docs
    assert "Docstring examples (doctest) in: `f0`, `f1`, `f2`, `f3`, `f4`, `f5`.\n" in docs
    assert "- **`f5`**: [`f5`](m.py_docs.md#function-f5), [`C.f5`](m.py_docs.md#method-C.f5)\n\n*12 standard" in kw


def test_a_folder_s_ranking_summarises_only_the_entries_it_lists(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    """`doc.md` lists the first 20 main classes and functions with their docstrings' summaries and
    counts the others: repodoc's own template is given no summary it does not show (a person's,
    which may show them all, is given every one), and the page is the same."""
    source = "".join(f'class C{i:02}:\n    """Class {i} does a thing."""\n\n\n' for i in range(25)) + \
        "".join(f'def f{i:02}():\n    """Function {i} does a thing."""\n\n\n' for i in range(30))
    site = _site({"m.py": source})
    summarised: list[str | None] = []
    plain = folder_pages.summary_line

    def counted(doc: str | None) -> str:
        summarised.append(doc)
        return plain(doc)

    monkeypatch.setattr(folder_pages, "summary_line", counted)
    own = Renderer().folder_doc(site, "")
    assert len(summarised) == 2 * folder_pages.MAIN_LISTED
    summarised.clear()
    (tmp_path / "empty").mkdir()
    assert Renderer(str(tmp_path / "empty")).folder_doc(site, "") == own  # theirs: the built-in ones, sandboxed
    assert len(summarised) == 25 + 30
    assert "Class 0 does a thing." in own and "25 classes in all." in own and "30 functions in all." in own


# The code-span expressions as CommonMark's reading was first written: the opening run's look behind it first
_CODE_SPAN_AS_READ = re.compile(r"(?<![`\\])(`+)(?!`).+?(?<!`)\1(?!`)")
_LINKED_SPAN_AS_READ = re.compile(r"(?<![`\\\[])(`+)(?!`)(.+?)(?<!`)\1(?!`)")


@settings(max_examples=3000, deadline=None)
@given(st.text(st.sampled_from("``\\[]ab \n"), max_size=24))
def test_code_spans_found_from_their_first_backtick_are_those_read(text: str) -> None:
    """`inline`'s and `link_code_spans`' expressions start with a backtick (`re` looks for one instead of
    trying a match at every character): the same spans, groups and all."""
    for pattern, as_read in ((md._CODE_SPAN, _CODE_SPAN_AS_READ), (md._SPAN, _LINKED_SPAN_AS_READ)):
        assert [(m.span(), m.groups()) for m in pattern.finditer(text)] == \
            [(m.span(), m.groups()) for m in as_read.finditer(text)]


def test_own_templates_make_their_macros_module_once_a_thread_with_each_page_s_variables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """repodoc's own templates import `_macros.md.j2` with context: Jinja made its module per page (its macros a
    reference cycle with the module's context, left to the cycle collector). It is made once a thread for each
    page template importing it, and its macros read the variables of the page being rendered (`src_href` here):
    the pages Jinja's module per page makes (a person's templates folder, here empty: the built-in templates in
    the sandbox's environment)."""
    made = recorded(monkeypatch, jinja2.Template, "make_module", key=lambda template: template.name or "")
    files = {f"m{i}.py": f'"""M{i}."""\n\n\ndef f{i}(x):\n    """Run `x`."""\n    return eval(x)\n' for i in range(3)}
    site = _site(files)
    renderer = Renderer()
    shown = [renderer.render(site, kind, subject, files.get(subject))
             for kind, subject in [*(("docs", rel) for rel in files), ("index", ""), ("doc", "")]]
    assert made.count("_macros.md.j2") == 3  # one per page template importing it (file, folder index and doc)
    assert "- **eval** ([L6](../m2.py#L6)): " in shown[2]
    (tmp_path / "empty").mkdir()
    theirs = Renderer(str(tmp_path / "empty"))
    assert shown == [theirs.render(site, kind, subject, files.get(subject))
                     for kind, subject in [*(("docs", rel) for rel in files), ("index", ""), ("doc", "")]]
    assert made.count("_macros.md.j2") == 3 + len(files) + 2
    gc.collect()
    renderer.render(site, "docs", "m1.py", files["m1.py"])
    assert gc.collect() == 0  # no reference cycle left by the page
    made.clear()
    thread = threading.Thread(target=renderer.render, args=(site, "docs", "m0.py", files["m0.py"]))
    thread.start()
    thread.join()
    assert made == ["_macros.md.j2"]  # another thread's own module (each thread renders its own page)
