"""The Jinja2 environment of the pages: sandboxed, even for the person's own templates.

`ImmutableSandboxedEnvironment` refuses attributes such as `__globals__` and calls that change
data, so a template can only format what it is given: it never runs code (README "Trust").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from jinja2.runtime import LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment

from repodoc_lsp.analysis.model import Attribute, FileFacts, Finding, Import, Symbol, SyntaxProblem


class TemplateFailure(Exception):
    """A template could not be loaded or rendered (the message names the template and why)."""


class GuardedTemplate:
    """A template whose errors (a sandbox refusal among them) are `TemplateFailure`s."""

    def __init__(self, template: jinja2.Template) -> None:
        self.template = template

    def render(self, **context: Any) -> str:
        try:
            return self.template.render(**context)
        except jinja2.TemplateError as exc:
            raise _failure(self.template.filename or self.template.name or "template", exc) from None


def _failure(name: str, exc: jinja2.TemplateError) -> TemplateFailure:
    kind = "refused by the template sandbox" if isinstance(exc, jinja2.sandbox.SecurityError) else \
        type(exc).__name__
    return TemplateFailure(f"template {name}: {kind}: {exc.message or exc}")


# Types whose public attributes are data, or methods that only read it: the sandbox allows every
# one of them (it refuses names that start with "_", the insides of functions, code and types,
# and the methods that change a list, dict or set), so they are read without its checks, which
# took a third of the rendering time (757,730 checks for PyTorch's pages). What they return is
# checked as usual when a template goes further (`facts.extra.update` is still refused).
_DATA_TYPES = frozenset({Symbol, Import, Attribute, Finding, SyntaxProblem, FileFacts, LoopContext})
_DICT_ATTRIBUTES = frozenset(dir(dict))


class PageEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, with a quick way through for repodoc's own data (`_DATA_TYPES`) and for the
    keys of a plain dict (`entry.href`): the same answers, without the checks."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if attribute[:1] != "_":
            kind = type(obj)
            if kind in _DATA_TYPES:
                try:
                    return getattr(obj, attribute)
                except AttributeError:
                    pass
            elif kind is dict and attribute not in _DICT_ATTRIBUTES:
                try:
                    return obj[attribute]
                except (KeyError, TypeError):
                    pass
        return super().getattr(obj, attribute)


def make_environment(templates: str | Path | None) -> jinja2.Environment:
    """The environment: `templates` (a folder) overrides the built-in templates by name."""
    loaders: list[jinja2.BaseLoader] = []
    if templates:
        loaders.append(jinja2.FileSystemLoader(str(templates)))
    loaders.append(jinja2.PackageLoader("repodoc_lsp.render", "templates"))
    return PageEnvironment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def load(env: jinja2.Environment, names: tuple[str, ...]) -> dict[str, GuardedTemplate]:
    """`name -> template` for `name.md.j2`; a template that does not compile is a TemplateFailure."""
    out = {}
    for name in names:
        try:
            out[name] = GuardedTemplate(env.get_template(f"{name}.md.j2"))
        except jinja2.TemplateError as exc:
            raise _failure(getattr(exc, "filename", None) or f"{name}.md.j2", exc) from None
    return out
