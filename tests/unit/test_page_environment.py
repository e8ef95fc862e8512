"""The pages' Jinja2 environment: the sandbox's answers, with repodoc's own data read without its
per-attribute checks (they took a third of the rendering time)."""

from __future__ import annotations

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.render.environment import PageEnvironment
from repodoc_lsp.render.pages import folder_label

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
