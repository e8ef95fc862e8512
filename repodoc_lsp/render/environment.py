"""The Jinja2 environment of the pages: a person's templates render in the sandbox.

`ImmutableSandboxedEnvironment` refuses attributes such as `__globals__` and calls that change
data, so a template can only format what it is given: it never runs code (README "Trust"). Without
a templates folder every template is repodoc's own (shipped with it, like its Python code, and
formatting workspace data only as data: no format string comes from the data), so they render in
a plain `jinja2.Environment`: the same text, without the sandbox's checks.

Only Jinja2's public API is used (no subclass of its code generator, contexts or templates).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
import time
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any, cast

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.utils import missing

# compiled templates of other stamps or Jinja2 versions, and writes that did not end, untouched this long
# are deleted (a day: a run of another repodoc sharing the folder compiles its templates again at most daily)
OTHER_STAMP_SECONDS = 86_400

# Entry templates repodoc's own pages no longer include (their macros of `_macros.md.j2` are called instead):
# a person's copy of one changes only their own page templates that include it.
_ENTRY_MACROS = {"_class.md.j2": "class_entry", "_function.md.j2": "function_entry",
                 "_members.md.j2": "members", "_local_class.md.j2": "local_class"}

log = logging.getLogger(__name__)


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
    """The failure of template `name`; one that does not compile names the file that does not (an
    included one, maybe) and its line."""
    kind = "refused by the template sandbox" if isinstance(exc, SecurityError) else type(exc).__name__
    if isinstance(exc, jinja2.TemplateSyntaxError):  # TemplateAssertionError too (an unknown filter)
        name = f"{exc.filename or exc.name or name}, line {exc.lineno}"
    return TemplateFailure(f"template {name}: {kind}: {exc.message or exc}")


_DICT_ATTRIBUTES = frozenset(dir(dict))


class OwnEnvironment(jinja2.Environment):
    """The environment of repodoc's own templates. Its changes to Jinja's, through public hooks, each
    for less CPU (bench/README.md, "Templates", "Jinja2's own cost in the render workers" and "What a
    page costs whatever its content"):

    - `getattr`: a key of a plain dict read as an attribute (`it.href`: most of what the templates
      read) is looked up as a key first, without first failing to find an attribute (the same
      answer: a plain dict's attributes are its methods, which the templates read as `d.get`), and
      any other object's attribute (a symbol's field) is read here as Jinja reads it first, Jinja's
      method called only for a name it lacks;
    - `get_template`: a template one of them imports with context (`_macros.md.j2`) is made into a
      module once per thread, not once per page (`_OnceImported`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.imported = threading.local()  # `_OnceImported`'s modules of this thread

    def get_template(self, name: str | jinja2.Template, parent: str | None = None,
                     globals: MutableMapping[str, Any] | None = None) -> jinja2.Template:
        template = super().get_template(name, parent, globals)
        # asked for by a template (an import or include): its import with context made once a thread
        return template if parent is None else cast(jinja2.Template, _OnceImported(template, parent, self.imported))

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            if attribute not in _DICT_ATTRIBUTES and attribute in obj:
                return obj[attribute]
        else:  # Jinja's own first try, without calling its method (through `super()`) for every read
            try:
                return getattr(obj, attribute)
            except AttributeError:
                pass
        return super().getattr(obj, attribute)


class _OnceImported:
    """`template` as `importer`, a template of repodoc's own, sees it when it imports it with context (`{% from
    ... import ... with context %}`: Jinja calls `make_module(the page's variables, True, ...)`; anything else
    is the template's own). Jinja makes a module per import: the template's body run again, its macros made
    again, each a closure of the module's context, which holds them: a reference cycle per page, which only the
    cycle collector frees, most of a render worker's collections. Here the module is made once a thread for
    each importer (`imported`), sharing the variables of the page being rendered (`shared=True`: Jinja's module
    reads them from that dict), which the importer's next import replaces. The same pages: repodoc's
    `_macros.md.j2` computes nothing at its top, so its macros read the page's variables only when called;
    a person's templates (which may) render in the sandbox's environment, with Jinja's module per page."""

    def __init__(self, template: jinja2.Template, importer: str, imported: threading.local) -> None:
        self.template, self.importer, self.imported = template, importer, imported

    def __getattr__(self, name: str) -> Any:
        return getattr(self.template, name)

    def make_module(self, vars: dict[str, Any] | None = None, shared: bool = False,
                    locals: Mapping[str, Any] | None = None) -> jinja2.environment.TemplateModule:
        if not shared or vars is None or any(value is not missing for value in (locals or {}).values()):
            return self.template.make_module(vars, shared, locals)  # not an import with context as ours write it
        modules: dict[tuple[str, str], tuple[jinja2.Template, jinja2.environment.TemplateModule, dict[str, Any]]] \
            = self.imported.__dict__.setdefault("modules", {})
        key = (self.importer, self.template.name or "")
        made = modules.get(key)
        if made is None or made[0] is not self.template:
            page = dict(vars)
            made = modules[key] = (self.template, self.template.make_module(page, True), page)
        elif made[2] is not vars:
            made[2].clear()
            made[2].update(vars)
        return made[1]


def make_environment(templates: str | Path | None) -> jinja2.Environment:
    """The environment: `templates` (a folder of the person's) overrides the built-in templates
    by name and makes every template render in the sandbox (theirs may include the built-in ones,
    and the built-in ones theirs); without it, only repodoc's own templates, unsandboxed."""
    loaders: list[jinja2.BaseLoader] = []
    if templates:
        loaders.append(jinja2.FileSystemLoader(str(templates)))
    loaders.append(jinja2.PackageLoader("repodoc_lsp.render", "templates"))
    kind = ImmutableSandboxedEnvironment if templates else OwnEnvironment
    return kind(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        # repodoc's own templates change only with repodoc: not looked at on disk again at each
        # `include`; a person's folder still is
        auto_reload=bool(templates),
    )


def load(env: jinja2.Environment, names: tuple[str, ...], warn: bool = True) -> dict[str, GuardedTemplate]:
    """`name -> template` for `name.md.j2`; a template that does not compile is a TemplateFailure. Every
    template of a person's folder (`*.j2`) is compiled too: one that only an `include` reads would
    otherwise fail at the first page including it, after other pages were written. `warn`: say which of
    theirs repodoc's pages no longer read (a render worker does not: its parent said it)."""
    out = {name: GuardedTemplate(_compiled(env, f"{name}.md.j2")) for name in names}
    theirs = _theirs(env)
    for name in theirs:
        _compiled(env, name)
    if warn and "_macros.md.j2" not in theirs:
        for name in sorted(_ENTRY_MACROS.keys() & set(theirs)):
            log.warning("templates: %s changes only page templates of yours that include it: repodoc's file pages "
                        "call the macro %s of _macros.md.j2 (put your change there)", name, _ENTRY_MACROS[name])
    return out


def _compiled(env: jinja2.Environment, name: str) -> jinja2.Template:
    try:
        return env.get_template(name)
    except jinja2.TemplateError as exc:
        raise _failure(getattr(exc, "filename", None) or name, exc) from None
    except (OSError, UnicodeDecodeError) as exc:  # a person's file unreadable, or not UTF-8
        raise TemplateFailure(f"template {name}: cannot be read: {exc}") from None


def _theirs(env: jinja2.Environment) -> list[str]:
    """The templates of the person's folder (`make_environment`'s first loader), by name."""
    loaders = env.loader.loaders if isinstance(env.loader, jinja2.ChoiceLoader) else []
    return sorted(name for loader in loaders if isinstance(loader, jinja2.FileSystemLoader)
                  for name in loader.list_templates() if name.endswith(".j2"))


# Set by a process before it starts the render workers' fork server: the folder of its compiled templates
# (`compiled_cache`), where the fork server compiles repodoc's own (`render/precompiled.py`).
COMPILED_VARIABLE = "REPODOC_FORK_SERVER_COMPILED"


def compiled_cache(folder: Path, stamp: str) -> jinja2.BytecodeCache | None:
    """Jinja2's own cache of compiled templates (`FileSystemBytecodeCache`) in `folder`, for repodoc's own
    templates: compiling them was a fifth of a run after an edit. A compiled template is code, so
    `folder` must be inside the person's cache folder (never the workspace's), and is used only when
    it is theirs, private (made 0700) and not a link; None otherwise. Entries are keyed by `stamp` (how
    pages are rendered: the templates and this environment's options), Jinja2's version, and, by
    Jinja2 itself, the template's name, its source's checksum and Python's version; those of other
    stamps are pruned (`_prune`), once per call: once per run."""
    prefix = f"{stamp}-{jinja2.__version__}-"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            st = os.fstat(fd)
            if st.st_uid != os.geteuid():
                return None
            if stat.S_IMODE(st.st_mode) & 0o077:
                os.fchmod(fd, 0o700)
            _prune(fd, prefix)
        finally:
            os.close(fd)
    except OSError:
        return None
    return _KeptCompiled(str(folder), f"{prefix}%s.cache")


def _prune(fd: int, prefix: str) -> None:
    """Delete from the folder open as `fd` the compiled templates `prefix` (the stamp and Jinja2 version
    in use) does not name, and Jinja2's temporary files of writes that did not end, once untouched for
    OTHER_STAMP_SECONDS: regular files only, each named relative to `fd` (no path, no link followed);
    anything else is left alone. One listing of a small folder."""
    now = time.time()
    with os.scandir(fd) as entries:
        for entry in entries:
            name = entry.name
            if not name.endswith((".cache", ".tmp")) or (name.startswith(prefix) and name.endswith(".cache")):
                continue
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and now - st.st_mtime > OTHER_STAMP_SECONDS:
                    os.unlink(name, dir_fd=fd)


class _KeptCompiled(jinja2.FileSystemBytecodeCache):
    """Jinja2's cache, whose failure to write (a full or read-only folder) only means compiling again."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)
