"""The Jinja2 environment of the pages: sandboxed, even for the person's own templates.

`ImmutableSandboxedEnvironment` refuses attributes such as `__globals__` and calls that change
data, so a template can only format what it is given: it never runs code (README "Trust").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment


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


def make_environment(templates: str | Path | None) -> jinja2.Environment:
    """The environment: `templates` (a folder) overrides the built-in templates by name."""
    loaders: list[jinja2.BaseLoader] = []
    if templates:
        loaders.append(jinja2.FileSystemLoader(str(templates)))
    loaders.append(jinja2.PackageLoader("repodoc_lsp.render", "templates"))
    return ImmutableSandboxedEnvironment(
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
