"""The pages' Jinja2 environment: a person's templates in Jinja's sandbox, repodoc's own in a plain
environment whose one hook (`OwnEnvironment.getattr`) gives Jinja's answers."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
from helpers import make_workspace, recorded
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

import repodoc_lsp.render
from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.config import Settings
from repodoc_lsp.pipeline.generate import plan_pages, site_of
from repodoc_lsp.render.environment import OwnEnvironment, TemplateFailure, make_environment
from repodoc_lsp.render.pages import Renderer, Site, folder_label
from repodoc_lsp.store.workspace import Workspace

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


@pytest.mark.parametrize("source", REFUSED)
def test_what_the_sandbox_refuses_stays_refused(tmp_path: Path, source: str) -> None:
    """With a templates folder of the person's, every template renders in Jinja's sandbox."""
    env = make_environment(tmp_path)
    assert isinstance(env, ImmutableSandboxedEnvironment)
    with pytest.raises((SecurityError, jinja2.UndefinedError)):
        env.from_string(source).render(facts=FACTS, d={"href": "x"})


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
    assert isinstance(sandboxed.env, ImmutableSandboxedEnvironment)
    pages = plan_pages(ws, site)
    assert {p.kind for p in pages} == {"docs", "kw", "index", "doc", "llms"}
    for page in pages:
        text = ws.read_text(page.subject) if page.kind == "docs" else None
        assert plain.render(site, page.kind, page.subject, text) == \
            sandboxed.render(site, page.kind, page.subject, text), page.path


def test_a_person_template_puts_the_built_in_ones_in_the_sandbox_too(tmp_path: Path) -> None:
    """The built-in file page imports `_macros.md.j2`; the person's folder may replace it, so with
    a folder every template renders in the sandbox (here: the built-in macros, `docstring` redefined)."""
    (tmp_path / "tpl").mkdir()
    built_in = (Path(repodoc_lsp.render.__file__).parent / "templates/_macros.md.j2").read_text()
    (tmp_path / "tpl/_macros.md.j2").write_text(built_in + "{% macro docstring(x) %}{{ cycler.__init__.__globals__ }}"
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
    made = recorded(monkeypatch, jinja2.Template, "make_module", key=lambda template: template.name or "")
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
# (`OwnEnvironment.getattr`): the same text as in Jinja's own.
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
    assert type(own) is OwnEnvironment
    assert outcome(own) == outcome(plain)


def test_own_environment_reads_an_object_s_attribute_without_jinja_s_getattr(monkeypatch: pytest.MonkeyPatch) -> None:
    """A field of a symbol, a finding or a loop (most of what repodoc's templates read that is not a dict's key)
    is Python's `getattr` in `OwnEnvironment.getattr` itself, not Jinja's `Environment.getattr` called from it
    (a `super()` call per read: 4% of rendering PyTorch's pages); a name it does not have still goes to Jinja's."""
    asked: list[str] = []
    plain = jinja2.Environment.getattr

    def counted(self: jinja2.Environment, obj: object, attribute: str) -> object:
        asked.append(attribute)
        return plain(self, obj, attribute)

    monkeypatch.setattr(jinja2.Environment, "getattr", counted)
    source = "{% for s in loop_data %}{{ s.name }} {{ s.line }}{{ ',' if not loop.last }}{% endfor %} {{ d.href }}" \
             " {{ facts.nothing is defined }}"
    text = make_environment(None).from_string(source).render(loop_data=list(FACTS.symbols), d={"href": "x.md"},
                                                             facts=FACTS)
    assert text == ",".join(f"{s.name} {s.line}" for s in FACTS.symbols) + " x.md False"
    assert asked == ["nothing"]


def test_a_person_template_that_cannot_be_read_is_a_template_failure(tmp_path: Path) -> None:
    """Every template of a person's folder is read when the renderer is made: one that is not UTF-8 is a
    TemplateFailure naming it (the run's bad input), not a traceback."""
    (tmp_path / "_function.md.j2").write_bytes(b"\xff\xfe not UTF-8\n")
    with pytest.raises(TemplateFailure, match=r"template _function\.md\.j2: cannot be read: 'utf-8' codec"):
        Renderer(str(tmp_path))


def test_an_entry_template_of_theirs_that_the_pages_no_longer_read_is_said_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A person's `_class.md.j2` (repodoc's file pages include it no more: they call `class_entry` of
    `_macros.md.j2`) is named with where the change belongs, by the run's renderer, not by each render
    worker's; with a `_macros.md.j2` of theirs too, nothing is said."""
    (tmp_path / "_class.md.j2").write_text("{{ c.qualname }}\n")
    with caplog.at_level("WARNING", logger="repodoc_lsp"):
        Renderer(tmp_path)
        Renderer.shared(tmp_path)  # a render worker's
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "_class.md.j2" in said[0] and "class_entry of _macros.md.j2" in said[0], said
    caplog.clear()
    (tmp_path / "_macros.md.j2").write_text(
        (Path(repodoc_lsp.render.__file__).parent / "templates" / "_macros.md.j2").read_text())
    with caplog.at_level("WARNING", logger="repodoc_lsp"):
        Renderer(tmp_path)
    assert not caplog.records
