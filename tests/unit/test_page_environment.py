"""The pages' Jinja2 environment: the sandbox's answers, with repodoc's own data read without its
per-attribute checks (they took a third of the rendering time)."""

from __future__ import annotations

import gc
from pathlib import Path

import jinja2
import pytest
from helpers import make_workspace
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.config import Settings
from repodoc_lsp.generate import plan_pages, site_of
from repodoc_lsp.render import Renderer, Site
from repodoc_lsp.render.environment import (
    OwnContext,
    OwnEnvironment,
    PageEnvironment,
    TemplateFailure,
    make_environment,
)
from repodoc_lsp.render.pages import folder_label
from repodoc_lsp.workspace import Workspace

SOURCE = b'"""Doc."""\nimport os\nfrom a import b as c\n\n@dec\nclass K(Base):\n    """K."""\n    x: int = 1\n' \
         b"    def m(self, y=2):\n        pass\n\ndef f(*a):\n    eval(a)\n"
FACTS = analyse_source("m.py", SOURCE)

# Expressions a template may write over the facts, a dict and a loop; each is rendered by both
# environments and must give the same text (or the same kind of failure).
EXPRESSIONS = [
    "{{ facts.lines }} {{ facts.module_doc }} {{ facts.encoding }} {{ facts.has_main_block }}",
    "{% for s in facts.symbols %}{{ s.name }} {{ s.kind.value }} {{ s.line }} {{ s.anchor }} {{ s.signature }}"
    " {{ s.decorators }} {{ s.bases }} {{ s.docstring }} {{ s.container }}{{ ',' if not loop.last }}{% endfor %}",
    "{% for i in facts.imports %}{{ i.module }} {{ i.names }} {{ i.asnames }} {{ i.bindings() }}{% endfor %}",
    "{% for a in facts.attributes %}{{ a.qualname }} {{ a.value }}{% endfor %}",
    "{% for x in facts.findings %}{{ x.label }} {{ x.line }} {{ x.category.value }}{% endfor %}",
    "{{ facts.keywords()|length }} {{ facts.findings_in(facts.findings[0].category)|length }}",
    "{{ d.href }} {{ d.items()|list }} {{ d.get('href') }} {{ d['lines'] }} {{ d.lines }}",
    "{{ facts.no_such_thing is defined }} {{ d.missing is defined }} {{ facts.syntax_error }}",
    "{{ loop_data|map(attribute='name')|join(',') }}",
    # attributes read through `getitem` (the filters' attribute lookups, subscripts)
    "{{ loop_data|selectattr('bases')|list|length }} {{ loop_data|rejectattr('container')|map(attribute='kind')|list }}"
    " {{ facts.symbols[0]['name'] }} {{ facts['lines'] }} {{ facts['nothing'] is defined }}",
    # a view's own function called in a loop (the loop's variables are not its arguments)
    "{% for s in loop_data %}{{ fn(s.name) }}{% set n = loop.index %}{{ fn(s.container ~ n) }}{% endfor %}",
]
# What the sandbox refuses must stay refused on repodoc's own data too.
REFUSED = [
    "{{ facts.__class__ }}", "{{ facts.symbols[0].__init__ }}", "{{ facts._private }}",
    "{{ facts.extra.update({'a': 'b'}) }}", "{{ facts.extra.clear() }}", "{{ d.update({}) }}",
    "{{ facts.symbols[0].__class__.__mro__ }}", "{% for s in facts.symbols %}{{ loop.__class__ }}{% endfor %}",
    "{{ facts['__class__'] }}", "{{ facts.symbols[0]['_private'] }}", "{{ facts['extra'].update({}) }}",
]


def _env(cls: type[jinja2.Environment]) -> jinja2.Environment:
    return cls(undefined=jinja2.StrictUndefined, autoescape=False)


def _outcome(env: jinja2.Environment, source: str) -> str:
    data = {"facts": FACTS, "d": {"href": "x.md", "lines": [1, 2], "items": "shadowed"},
            "loop_data": list(FACTS.symbols), "fn": folder_label}
    try:
        return env.from_string(source).render(**data)
    except jinja2.TemplateError as exc:
        return f"{type(exc).__name__}"


@pytest.mark.parametrize("source", EXPRESSIONS)
def test_same_answers_as_the_sandbox(source: str) -> None:
    assert _outcome(_env(PageEnvironment), source) == _outcome(_env(ImmutableSandboxedEnvironment), source)


@pytest.mark.parametrize("source", REFUSED)
def test_what_the_sandbox_refuses_stays_refused(source: str) -> None:
    with pytest.raises((SecurityError, jinja2.UndefinedError)):
        _env(PageEnvironment).from_string(source).render(facts=FACTS, d={"href": "x"})


def test_own_data_is_read_without_the_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick way through is taken: no sandbox check for the facts' attributes, a dict's keys or
    the loop (with the plain sandbox, this template makes dozens)."""
    checks: list[tuple[str, str]] = []
    plain = ImmutableSandboxedEnvironment.is_safe_attribute

    def counted(self: jinja2.Environment, obj: object, attr: str, value: object) -> bool:
        checks.append((type(obj).__name__, attr))
        return plain(self, obj, attr, value)  # type: ignore[arg-type]

    monkeypatch.setattr(ImmutableSandboxedEnvironment, "is_safe_attribute", counted)
    template = _env(PageEnvironment).from_string(
        "{% for s in facts.symbols %}{{ s.name }}{{ s.line }}{{ s.docstring }}{{ ',' if not loop.last }}{% endfor %}"
        "{{ facts.lines }}{{ d.href }}")
    assert template.render(facts=FACTS, d={"href": "x"})
    assert checks == []


def _site(tmp_path: Path) -> tuple[Workspace, Site]:
    root = make_workspace(tmp_path / "ws", {"pkg/__init__.py": "from .m import K\n", "pkg/m.py": SOURCE.decode(),
                                            "pkg/use.py": "from pkg import K\n\nclass L(K):\n    '''L.'''\n"})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    return ws, site_of(ws)


def test_built_in_templates_alone_render_unsandboxed_with_the_same_pages(tmp_path: Path) -> None:
    """Without the person's templates every template is repodoc's own: a plain environment (the
    sandbox's checks were a tenth of rendering), and every kind of page the same as in the sandbox."""
    ws, site = _site(tmp_path)
    (tmp_path / "empty").mkdir()
    plain, sandboxed = Renderer(), Renderer(str(tmp_path / "empty"))
    assert not isinstance(plain.env, ImmutableSandboxedEnvironment)
    assert isinstance(sandboxed.env, PageEnvironment)
    pages = plan_pages(ws, site)
    assert {p.kind for p in pages} == {"docs", "kw", "index", "doc"}
    for page in pages:
        text = ws.read_text(page.subject) if page.kind == "docs" else None
        assert plain.render(site, page.kind, page.subject, text) == \
            sandboxed.render(site, page.kind, page.subject, text), page.path


def test_a_rendered_page_leaves_no_reference_cycle(tmp_path: Path) -> None:
    """The contexts holding macros (a page's own, the macro module it imports with its context) are
    emptied once the page is made: nothing of a page waits for the cycle collector (the view of each
    page did, through its macros' code: 6% of a render worker's time on PyTorch's pages)."""
    ws, site = _site(tmp_path)
    renderer = Renderer()
    pages = plan_pages(ws, site)
    assert {p.kind for p in pages} == {"docs", "kw", "index", "doc"}

    def render_all() -> list[str]:
        return [renderer.render(site, p.kind, p.subject, ws.read_text(p.subject) if p.kind == "docs" else None)
                for p in pages]

    first = render_all()  # what a first render makes once (compiled templates, kept caches)
    gc.collect()
    gc.disable()
    try:
        again = render_all()
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert again == first
    assert any("<!--" in text and "](" in text for text in again)


def test_a_person_template_puts_the_built_in_ones_in_the_sandbox_too(tmp_path: Path) -> None:
    """The built-in file page imports `_macros.md.j2`; the person's folder may replace it, so with
    a folder every template renders in the sandbox."""
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl/_macros.md.j2").write_text("{% macro docstring(x) %}{{ cycler.__init__.__globals__ }}"
                                                "{% endmacro %}\n")
    ws, site = _site(tmp_path)
    assert "K." in Renderer().render(site, "docs", "pkg/m.py", ws.read_text("pkg/m.py"))
    with pytest.raises(TemplateFailure, match=r"file_docs\.md\.j2: refused by the template sandbox"):
        Renderer(str(tmp_path / "tpl")).render(site, "docs", "pkg/m.py", ws.read_text("pkg/m.py"))


ENTRIES = b'"""Doc."""\n\nclass K:\n    """K."""\n\n    def m(self):\n        """M."""\n\n' \
          b'    def n(self):\n        """N."""\n\n' \
          b'def f():\n    """F."""\n\ndef g():\n    """G."""\n'


def test_entries_use_the_macros_their_page_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`_function.md.j2` and `_members.md.j2`, included once per entry, use the macros the page's
    template imported (importing them again with context ran `_macros.md.j2` anew for each entry:
    about a tenth of rendering PyTorch's pages), and import them themselves when the template that
    includes them did not (a person's); the pages are the same either way."""
    made: list[str] = []
    plain = jinja2.Template.make_module

    def counted(self: jinja2.Template, *args: object, **kwargs: object) -> object:
        made.append(self.name or "")
        return plain(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(jinja2.Template, "make_module", counted)
    root = make_workspace(tmp_path / "ws", {"m.py": ENTRIES.decode()})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    site = site_of(ws)
    page = Renderer().render(site, "docs", "m.py", ws.read_text("m.py"))
    assert made.count("_macros.md.j2") == 1  # the page's own import; 4 entries include the two templates
    assert all(f"{doc}\n" in page for doc in ("\nK.", "  M.", "  N.", "\nF.", "\nG."))
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl/file_docs.md.j2").write_text(
        "{{ marker }}\n{% for c in classes %}{% include '_members.md.j2' %}{% endfor %}"
        "{% for f in functions %}{% include '_function.md.j2' %}{% endfor %}")
    mine = Renderer(str(tmp_path / "tpl")).render(site, "docs", "m.py", ws.read_text("m.py"))
    assert mine.count("M.") == mine.count("N.") == mine.count("F.") == mine.count("G.") == 1
    assert "def f()" in mine and "def g()" in mine



# Macros called every way a template can, and attributes read, in repodoc's own environment
# (`OwnContext`'s macro calls, `OwnEnvironment.getattr`): the same text as in Jinja's own.
# Loops reading `loop` (over a list, a tuple, a dict's items, a generator, filtered, recursive, empty)
LOOPS = [
    "{% for s in " + seq + " %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}"
    "{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.depth }}{{ loop.depth0 }}{{ loop|length }}{{ loop.cycle(1, 2, 3) }}"
    "{{ loop.changed(s is string) }}{{ loop.previtem is defined }}{{ loop.nextitem is defined }}"
    "{{ loop.previtem if loop.previtem is defined }}{{ loop.nextitem if loop.nextitem is defined }}{{ loop }}"
    "{{ ', ' if not loop.last }}{% else %}none{% endfor %}"
    for seq in ("loop_data|map(attribute='name')|list", "(1, 1, 2, 3)", "[]", "d.items()", "range(3)",
                "d.lines", "d.lines if true", "'ab'")
] + [
    "{% for s in [1, 2, 3] if s > 1 %}{{ loop.index }}/{{ loop.length }}{% endfor %}",
    "{% for n in [[1, [2]], [3]] recursive %}<{% for x in n %}{{ loop.index }}{% if x is iterable %}"
    "{{ loop(x) }}{% else %}{{ x }}{% endif %}{% endfor %}>{% endfor %}",
    "{% for a in [1, 2] %}{% for b in (3, 4) %}{{ loop.index }}{{ a }}{{ b }}{% endfor %}{{ loop.last }}{% endfor %}",
    "{% for a in [1] %}{{ loop.previtem }}{% endfor %}", "{% for a in [1] %}{{ loop.cycle() }}{% endfor %}",
    "{% for a in [1] %}{{ loop([2]) }}{% endfor %}", "{% for a in [1, 2] %}{{ loop.nextitem + 1 }}{% endfor %}",
    # names of the context read in a loop's body, its else and its test, set in it, in branches around it
    "{% for a in [1, 2] %}{{ d.href }}{% set d = a %}{{ d }}{% endfor %}{{ d.href }}",
    "{% for a in [] %}{{ d.href }}{% else %}{{ d.href }}{{ fn('x') }}{% endfor %}{{ d.href }}",
    "{% for a in [1, 2, 3] if a != d.lines[0] %}{{ a }}{{ d.lines }}{% endfor %}",
    "{% if d.lines %}{% for a in d.lines %}{{ fn(a) }}{% endfor %}{% else %}{{ fn('b') }}{% endif %}{{ fn('c') }}",
    "{% if not d.lines %}{% for a in d.lines %}{{ fn(a) }}{% endfor %}{% else %}{% for a in d.lines %}{{ d.href }}"
    "{% endfor %}{{ fn('b') }}{% endif %}{{ fn('c') }}",
    "{% for a in d.lines %}{% for b in d.lines %}{{ a }}{{ b }}{{ d.href }}{{ nothing is defined }}{% endfor %}"
    "{% endfor %}",
    "{% macro m(x) %}{% for a in d.lines %}{{ x }}{{ a }}{{ d.href }}{% endfor %}{% endmacro %}{{ m(1) }}{{ m(2) }}",
    "{% set n = 1 %}{% for a in d.lines %}{{ n }}{% set n = a %}{{ n }}{% endfor %}{{ n }}",
]

OWN = [
    "{% macro m(a, b=2, c='x') %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }} {{ m(1, 3) }} {{ m(1, c=4) }}"
    " {{ m(1, 2, 3) }}{% for s in loop_data %}{{ m(s.name) }}{{ m(s.name, c=loop.index) }}{% endfor %}",
    "{% macro v(a) %}{{ a }}{{ varargs|length }}{{ kwargs }}{% endmacro %}{{ v(1, 2, k=3) }}",
    "{% macro v(a) %}{{ a }}{{ varargs|length }}{% endmacro %}{{ v() }}",
    "{% macro w(x) %}[{{ caller(x) }}]{% endmacro %}{% call(y) w(5) %}<{{ y }}>{% endcall %}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}",
    "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(b=1) }}",
    "{% macro m(a, b=2, c='x') %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(a=1) }} {{ m(c=5, b=6, a=7) }}"
    " {{ m(1, c=none) }}{% for s in loop_data %}{{ m(s.name, b=loop.index) }}{% endfor %}",
    "{% macro m(a, b=2) %}{{ a }}{{ b }}{% endmacro %}{{ m(1, a=2) }}",
    "{% macro m(a, b=2) %}{{ a }}{{ b }}{% endmacro %}{{ m(1, caller=2) }}",
    "{% macro m(a) %}{{ a }}{{ caller() }}{% endmacro %}{{ m(a=1, caller=none) }}",
    "{% macro m(a) %}{{ a is defined }}{% endmacro %}{{ m() }}",
    "{{ facts.symbols[0].name }} {{ facts.nothing is defined }} {{ (1, 2).count(1) }} {{ 'ab'.upper() }}",
    *EXPRESSIONS,
    *LOOPS,
]


@pytest.mark.parametrize("source", OWN)
def test_own_environment_gives_jinjas_answers(source: str) -> None:
    def outcome(env: jinja2.Environment) -> str:
        data = {"facts": FACTS, "d": {"href": "x.md", "lines": [1, 2], "items": "shadowed"},
                "loop_data": list(FACTS.symbols), "fn": folder_label}
        try:
            return env.from_string(source).render(**data)
        except Exception as exc:  # the same failure is the same answer
            return type(exc).__name__

    own = make_environment(None)
    plain = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    assert type(own.from_string("").new_context()) is OwnContext
    assert outcome(own) == outcome(plain)


def test_pages_do_not_list_the_templates_globals_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A template's globals are a `ChainMap` (its own and the environment's), which Python lists by
    walking every map anew: each page's context (`dict` of them) and each `from ... import` (their
    names less the importer's) listed them, 2% of rendering PyTorch's pages. Repodoc's own templates
    list them once (`OwnTemplate`, `_Names`): pages rendered after the first walk none; the pages
    are the same as when they did."""
    import collections

    root = make_workspace(tmp_path / "ws", {"pkg/__init__.py": '"""P."""\n', "pkg/m.py": ENTRIES.decode(),
                                            "pkg/n.py": SOURCE.decode()})
    ws = Workspace(root, Settings(), use_cache=False)
    ws.scan(jobs=1)
    site = site_of(ws)
    renderer = Renderer()

    def pages() -> list[str]:
        return [renderer.render(site, kind, subject, ws.read_text(subject) if kind == "docs" else None)
                for kind, subject in (("docs", "pkg/m.py"), ("kw", "pkg/m.py"), ("docs", "pkg/n.py"),
                                      ("kw", "pkg/n.py"), ("index", "pkg"), ("doc", "pkg"))]

    first = pages()
    walked: list[int] = []
    plain = collections.ChainMap.__iter__

    def counted(self: collections.ChainMap) -> object:
        walked.append(1)
        return plain(self)

    monkeypatch.setattr(collections.ChainMap, "__iter__", counted)
    again = pages()
    assert again == first
    assert not walked
    sandboxed = Renderer(str(tmp_path)).render(site, "kw", "pkg/m.py")  # a person's templates: Jinja's own way
    assert walked and sandboxed == first[1]


# Reads and calls repodoc's own code makes in place (`OwnCodeGenerator`), and the ways they fall back
# to Jinja's: each rendered by both environments, the same text (or the same kind of failure).
IN_PLACE = [
    "{% for s in loop_data %}{{ s.name }}{{ s.qualname }}{{ loop.index }}/{{ loop.length }}{{ loop.revindex }}"
    "{{ loop.nextitem.name if not loop.last }}{{ loop.nextitem is defined }}{% endfor %}",
    "{{ d.href }}{{ d.get('href') }}{{ d.get('nothing', {}).get('x', 'none') }}{{ d.items|length }}"
    "{{ d.nothing is defined }}{{ d.values()|list|length }}{{ d.lines.count(2) }}",
    "{{ '{:,}'.format(1234567) }} {{ 'ab'.upper() }} {{ 'abc'.nothing is defined }} {{ facts.symbols[0].nothing }}",
    "{{ fn(fn(loop_data[0].name) ~ fn('x')) }} {{ fn(*['a']) }} {{ fn(**{'folder': 'b'}) }} {{ fn(folder='c') }}",
    "{{ ctx_fn('k') }} {% for s in loop_data %}{{ ctx_fn(s.name) }}{{ fn(s.name) }}{% endfor %}",
    "{{ range(3)|list }} {{ dict(a=1).a }} {{ namespace(x=1).x }} {{ cycler('a', 'b').next() }}",
    "{% macro m(s) %}{{ s.name }}{{ fn(s.name) }}{{ caller() if caller else '' }}{% endmacro %}"
    "{{ m(loop_data[0]) }}{% call m(loop_data[1]) %}in{% endcall %}",
    "{% set ns = namespace(n=0) %}{% for s in loop_data %}{% set ns.n = ns.n + s.line %}{% endfor %}{{ ns.n }}",
    "{{ nothing.name is defined }} {{ nothing.name }}",
    "{{ facts.symbols[0].name.upper() }} {{ facts.keywords().keys()|list|length }} {{ facts.lines.real }}",
]


@jinja2.pass_context
def _context_function(context: jinja2.runtime.Context, name: str) -> str:
    return f"{name}:{context['d']['href']}"


def _both(source: str, templates: dict[str, str] | None = None) -> tuple[str, str]:
    def outcome(env: jinja2.Environment) -> str:
        data = {"facts": FACTS, "d": {"href": "x.md", "lines": [1, 2], "items": "shadowed"},
                "loop_data": list(FACTS.symbols), "fn": folder_label, "ctx_fn": _context_function}
        try:
            return env.from_string(source).render(**data)
        except Exception as exc:  # the same failure is the same answer
            return type(exc).__name__

    loader = jinja2.DictLoader(templates or {})
    own = OwnEnvironment(loader=loader, undefined=jinja2.StrictUndefined, autoescape=False)
    plain = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, autoescape=False)
    return outcome(own), outcome(plain)


@pytest.mark.parametrize("source", IN_PLACE + OWN)
def test_in_place_reads_and_calls_give_jinjas_answers(source: str) -> None:
    mine, jinjas = _both(source)
    assert mine == jinjas


def test_attributes_and_calls_are_read_in_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dict's key, a data type's attribute, a built-in method or a view's function: neither
    `environment.getattr` nor `context.call` (a call each: 800,000 and 150,000 for 1 page in 5 of
    PyTorch's)."""
    env = OwnEnvironment(undefined=jinja2.StrictUndefined)
    data = {"facts": FACTS, "d": {"href": "x.md"}, "loop_data": list(FACTS.symbols), "fn": folder_label,
            "ctx_fn": _context_function}
    sources = ("{% for s in loop_data %}{{ s.name }} {{ d.href }} {{ fn(s.name) }} {{ d.get('href') }}"
               " {{ '{:,}'.format(s.line) }} {{ loop.last }} {{ d.items()|list|length }}{% endfor %}",
               "{{ d.nothing is defined }} {{ facts.nothing is defined }} {{ ctx_fn('a') }}")
    templates = [env.from_string(source) for source in sources]  # compiled (Jinja folds constants)
    texts = [jinja2.Environment().from_string(source).render(**data) for source in sources]
    calls: list[str] = []
    getattr_ = OwnEnvironment.getattr
    call = OwnContext.call
    monkeypatch.setattr(OwnEnvironment, "getattr",
                        lambda self, obj, name: calls.append(name) or getattr_(self, obj, name))
    monkeypatch.setattr(OwnContext, "call", lambda *a, **k: calls.append("call") or call(*a, **k))
    assert templates[0].render(**data) == texts[0] and "`K/`" in texts[0]
    assert calls == []
    assert templates[1].render(**data) == texts[1] == "False False a:x.md"
    assert calls == ["nothing", "nothing", "call"]  # what is not there, and a function taking the context


INCLUDED = {
    "entry.md.j2": "{% for s in loop_data %}- {{ s.name }} {{ fn(s.name) }}{{ n }}\n{% endfor %}",
    "nested.md.j2": "[{% include 'entry.md.j2' %}]{{ d.href }}",
    "sets.md.j2": "{% set n = n ~ '!' %}{{ n }} {{ d.href }} {% include 'entry.md.j2' %}{{ n }}",
}
INCLUDES = [
    "{% for n in range(3) %}{% include 'entry.md.j2' %}{% endfor %}",
    "{% set n = 5 %}{% include 'nested.md.j2' %}{% include 'nested.md.j2' without context %}",
    "{% macro m(n) %}<{% include 'entry.md.j2' %}>{% endmacro %}{{ m(1) }}{{ m(2) }}",
    "{% include 'missing.md.j2' ignore missing %}{% include ['missing.md.j2', 'entry.md.j2'] %}"
    "{% include 'missing.md.j2' %}",
    "{% include ('entry' ~ '.md.j2') %}{% include 'nested.md.j2' %}",
    "{% set n = 'a' %}{% for d in [{'href': 1}, {'href': 2}] %}{% include 'sets.md.j2' %}{% endfor %}{{ n }}"
    "{% include 'sets.md.j2' %}{{ n }}{% for n in range(2) %}{% include 'sets.md.j2' %}{% endfor %}",
]


@pytest.mark.parametrize("source", INCLUDES)
def test_includes_give_jinjas_answers(source: str) -> None:
    mine, jinjas = _both(source, INCLUDED)
    assert mine == jinjas


def test_an_included_template_reaches_its_includer_as_one_piece() -> None:
    """An `include` (with its context) gives the includer its whole text, and an output's pieces go
    as one: a page of repodoc's own is a few pieces, not one per text and value of every template it
    includes, each passed on by every template between."""
    for env in (OwnEnvironment(loader=jinja2.DictLoader(INCLUDED)),
                PageEnvironment(loader=jinja2.DictLoader(INCLUDED))):
        template = env.from_string("{% for n in range(3) %}{% include 'nested.md.j2' %}{% endfor %}")
        data = {"d": {"href": "x.md"}, "loop_data": list(FACTS.symbols), "fn": folder_label}
        pieces = list(template.root_render_func(template.new_context(data)))
        assert len(pieces) == 3
        assert "".join(pieces) == jinja2.Environment(loader=jinja2.DictLoader(INCLUDED)).from_string(
            "{% for n in range(3) %}{% include 'nested.md.j2' %}{% endfor %}").render(**data)


def test_contexts_are_made_without_jinjas_constructors(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's context, its macros' and each included entry's are made in place (`OwnContext.made`),
    an include's from its includer's names (`OwnTemplate.included`), not by `get_all` and a copy of
    it, and the names a template reads are read without a call each: the same text."""
    source = ("{% from 'macros.md.j2' import m with context %}{% set n = 7 %}"
              "{% for s in loop_data %}{% include 'nested.md.j2' %}{{ m(s) }}{% endfor %}")
    templates = {**INCLUDED, "macros.md.j2": "{% macro m(s) %}<{{ s.name }} {{ d.href }}>{% endmacro %}"}
    env = OwnEnvironment(loader=jinja2.DictLoader(templates), undefined=jinja2.StrictUndefined)
    for name in templates:
        env.get_template(name)
    template = env.from_string(source)
    data = {"d": {"href": "x.md"}, "loop_data": list(FACTS.symbols), "fn": folder_label}
    expected = jinja2.Environment(loader=jinja2.DictLoader(templates)).from_string(source).render(**data)
    made: list[str] = []
    init, get_all = jinja2.runtime.Context.__init__, jinja2.runtime.Context.get_all
    resolve = jinja2.runtime.Context.resolve_or_missing
    monkeypatch.setattr(jinja2.runtime.Context, "__init__", lambda *a, **k: made.append("init") or init(*a, **k))
    monkeypatch.setattr(jinja2.runtime.Context, "get_all", lambda self: made.append("get_all") or get_all(self))
    monkeypatch.setattr(jinja2.runtime.Context, "resolve_or_missing",
                        lambda self, key: made.append("resolve") or resolve(self, key))
    assert template.render(**data) == expected
    assert "<K " in expected and made.count("init") == 0
    assert made.count("get_all") == 1  # the macros' import with context (one per page)
    assert made.count("resolve") == 0  # a name is read from the context in place (`enter_frame`)


def test_an_include_shares_its_page_s_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each included entry's context reads the page's view (dozens of names) from the page's own
    dict, not from a copy of it made per entry (`OwnTemplate.included`): the same text."""
    source = "{% set n = 'x' %}{% for n in range(3) %}{% include 'sets.md.j2' %}{% endfor %}"
    env = OwnEnvironment(loader=jinja2.DictLoader(INCLUDED), undefined=jinja2.StrictUndefined)
    data = {"d": {"href": "x.md"}, "loop_data": list(FACTS.symbols)[:2], "fn": folder_label,
            **{f"view{i}": i for i in range(50)}}
    expected = jinja2.Environment(loader=jinja2.DictLoader(INCLUDED)).from_string(source).render(**data)
    parents: list[dict] = []
    made = OwnContext.made.__func__  # type: ignore[attr-defined]

    def recorded(cls: type, environment: jinja2.Environment, parent: dict, *rest: object) -> OwnContext:
        parents.append(parent)
        return made(cls, environment, parent, *rest)  # type: ignore[no-any-return]

    monkeypatch.setattr(OwnContext, "made", classmethod(recorded))
    assert env.from_string(source).render(**data) == expected
    assert len(parents) == 1 + 3 * 2  # the page's, then each entry's and the entry it includes
    assert all(parent is parents[0] for parent in parents)


def test_a_loop_s_body_reads_the_context_s_names_once() -> None:
    """The names a loop's body reads from the context are read once, before the loop, not at each
    pass (`aka`, `sig_links`, `line_href` and `xref` for each method of a class): the same text."""
    source = "{% for a in lines %}{{ d.href }}{{ a }}{{ loop.last }}{% endfor %}"
    code = make_environment(None).compile(source, raw=True)
    assert code.count("context.parent.get('d', missing)") == 1
    assert code.index("context.parent.get('d', missing)") < code.index("for l_")
    data = {"d": {"href": "x.md"}, "lines": [1, 2]}
    assert make_environment(None).from_string(source).render(**data) == "x.md1Falsex.md2True"
