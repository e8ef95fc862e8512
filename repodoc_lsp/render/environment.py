"""The Jinja2 environment of the pages: the person's templates render in the sandbox.

`ImmutableSandboxedEnvironment` refuses attributes such as `__globals__` and calls that change
data, so a template can only format what it is given: it never runs code (README "Trust"). Without
a templates folder every template is repodoc's own (shipped with it, like its Python code, and
formatting workspace data only as data: no format string comes from the data), so they render
in a plain environment: the same text, without the sandbox's checks (about a tenth of rendering).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path
from types import BuiltinMethodType, FunctionType
from typing import Any, TypeVar

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.idtracking import VAR_LOAD_ALIAS, VAR_LOAD_PARAMETER, VAR_LOAD_RESOLVE, VAR_LOAD_UNDEFINED
from jinja2.nodes import EvalContext
from jinja2.runtime import Context, LoopContext, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import missing

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
_OWN_MODULES = frozenset({"repodoc_lsp.render.pages"})  # where the functions a view passes are defined


class PageCodeGenerator(CodeGenerator):
    """Jinja's code generator, but an `include` (with its context, as repodoc's templates include
    theirs) is rendered whole and given to the includer as one string (`concat` of its events),
    not passed on event by event: each of an entry's pieces went through every template that
    included it (`for event in gen: yield event`: a quarter of the templates' lines run for
    PyTorch's pages, a class's members passing through `_class.md.j2` and the page). The same
    text: the page is the concatenation of all its events either way."""

    def visit_Include(self, node: nodes.Include, frame: Frame) -> None:
        if node.ignore_missing or not node.with_context or self.environment.is_async \
                or not (isinstance(node.template, nodes.Const) and isinstance(node.template.value, str)):
            return super().visit_Include(node, frame)
        self.writeline("template = environment.get_template(", node)
        self.visit(node.template, frame)
        self.write(f", {self.name!r})")
        self.simple_write(f"concat(template.root_render_func({self.included_context(frame)}))", frame)

    def included_context(self, frame: Frame) -> str:
        """The code of the context an included template is rendered in (`visit_Include`)."""
        return f"template.new_context(context.get_all(), True, {self.dump_local_context(frame)})"


    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        # Jinja's `visit_Output` (3.1), but the pieces of one output outside a buffer (a macro's
        # is one) are given as one string (`yield concat((...))`), not yielded one by one: an
        # entry's line is a dozen pieces, each a step of every generator it passed through.
        if frame.buffer is not None:
            return super().visit_Output(node, frame)
        if frame.require_output_check:
            if self.has_known_extends:
                return
            self.writeline("if parent_template is None:")
            self.indent()
        finalize = self._make_finalize()
        body: list[list[Any] | nodes.Expr] = []
        for child in node.nodes:
            try:
                if not (finalize.const or isinstance(child, nodes.TemplateData)):
                    raise nodes.Impossible()
                const = self._output_child_to_const(child, frame, finalize)
            except (nodes.Impossible, Exception):
                body.append(child)
                continue
            if body and isinstance(body[-1], list):
                body[-1].append(const)
            else:
                body.append([const])
        joined = len(body) > 1
        if joined:
            self.writeline("yield concat((")
            self.indent()
        for item in body:
            if isinstance(item, list):
                val = self._output_const_repr(item)
                self.writeline(val + "," if joined else "yield " + val)
            else:
                if joined:
                    self.newline(item)
                else:
                    self.writeline("yield ", item)
                self._output_child_pre(item, frame, finalize)
                self.visit(item, frame)
                self._output_child_post(item, frame, finalize)
                if joined:
                    self.write(",")
        if joined:
            self.outdent()
            self.writeline("))")
        if frame.require_output_check:
            self.outdent()


class OwnCodeGenerator(PageCodeGenerator):
    """The code of repodoc's own templates (no sandbox): an attribute (`m.anchor`, `it.href`) is
    read in place, without a call of `environment.getattr` (800,000 for 1 page in 5 of PyTorch's),
    when the object is a plain dict holding that key or one of repodoc's data types defining that
    attribute (`OwnEnvironment.attribute_types`); a call of a built-in method or of a plain function
    (`aka.get(...)`, `line_href(n)`) is made in place, without `OwnContext.call`. Anything else goes
    the way Jinja's code goes, with the same answers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.attributes: set[str] = set()

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        super().visit_Template(node, frame)
        # the types whose attribute each read is taken in place, made when the module is run
        self.writeline("from types import BuiltinMethodType as _rg_builtin, FunctionType as _rg_function")
        for attribute in sorted(self.attributes):
            self.writeline(f"_rg_h_{attribute} = environment.attribute_types({attribute!r})")

    def enter_frame(self, frame: Frame) -> None:
        # Jinja's `enter_frame` (3.1), but a name the frame reads from the context is read in place
        # (`resolve_or_missing`'s two lookups) instead of by a call of `resolve` for each name
        if self.get_resolve_func() != "resolve":
            return super().enter_frame(frame)
        undefs = []
        for target, (action, param) in frame.symbols.loads.items():
            if action == VAR_LOAD_PARAMETER:
                pass
            elif action == VAR_LOAD_RESOLVE:
                self.writeline(f"{target} = {self.resolved(param)}")
            elif action == VAR_LOAD_ALIAS:
                self.writeline(f"{target} = {param}")
            elif action == VAR_LOAD_UNDEFINED:
                undefs.append(target)
            else:
                raise NotImplementedError("unknown load instruction")
        if undefs:
            self.writeline(f"{' = '.join(undefs)} = missing")

    def included_context(self, frame: Frame) -> str:
        return f"template.included(context, {self.dump_local_context(frame)})"

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        # The names a loop's body reads from the context (`aka`, `line_href` in a loop over methods)
        # are read once, before the loop, into names of a frame of its own around it (its names
        # are seen by nothing after the loop), which the body then uses as Jinja's code uses names
        # of the frames around it; Jinja's code reads them at each pass: the same values, the
        # context changing in no pass (a name set in the body is not one of them). A recursive loop
        # is a function of its own: as Jinja makes it.
        if node.recursive or self.get_resolve_func() != "resolve":
            return super().visit_For(node, frame)
        body = frame.inner()
        body.symbols.analyze_node(node, for_branch="body")
        around = frame.inner()
        for flag in ("toplevel", "rootlevel", "loop_frame", "block_frame", "soft_frame"):
            setattr(around, flag, getattr(frame, flag))
        for action, name in body.symbols.loads.values():
            if action == VAR_LOAD_RESOLVE and name != "loop" and name not in body.symbols.stores:
                around.symbols.load(name)
                self.writeline(f"{around.symbols.ref(name)} = {self.resolved(name)}")
        super().visit_For(node, around)

    @staticmethod
    def resolved(name: str) -> str:
        """The code reading `name` from the context (`Context.resolve_or_missing`) in place."""
        return f"_rg_v[{name!r}] if {name!r} in (_rg_v := context.vars) else context.parent.get({name!r}, missing)"

    @optimizeconst
    def visit_Getattr(self, node: nodes.Getattr, frame: Frame) -> None:
        attribute = node.attr
        if attribute[:1] == "_" or not attribute.isidentifier():
            return super().visit_Getattr(node, frame)
        self.attributes.add(attribute)
        if attribute in _DICT_ATTRIBUTES:  # `d.get`: a dict's method (`attribute_types` holds dict)
            self.write(f"(_rg_o.{attribute} if type(_rg_o := ")
            self.visit(node.node, frame)
            self.write(f") in _rg_h_{attribute} else environment.getattr(_rg_o, {attribute!r}))")
            return
        self.write(f"(_rg_o[{attribute!r}] if (_rg_t := type(_rg_o := ")
        self.visit(node.node, frame)
        self.write(f")) is dict and {attribute!r} in _rg_o else _rg_o.{attribute} if _rg_t in _rg_h_{attribute}"
                   f" else environment.getattr(_rg_o, {attribute!r}))")

    @optimizeconst
    def visit_Call(self, node: nodes.Call, frame: Frame, forward_caller: bool = False) -> None:
        if forward_caller or self.environment.is_async:
            return super().visit_Call(node, frame, forward_caller=forward_caller)
        # `f(x)`: `(_rg_c(*(), x) if <_rg_c := f is plain> else context.call(_rg_c, x))`; the callable
        # is read before its arguments (which may hold calls of their own), as Jinja's code reads it
        self.write("(_rg_c(*()")
        self.signature(node, frame)
        self.write(") if (_rg_k := type(_rg_c := ")
        self.visit(node.node, frame)
        self.write(")) is _rg_builtin or (_rg_k is _rg_function and not hasattr(_rg_c, 'jinja_pass_arg'))"
                   " else context.call(_rg_c")
        extra = {**({"_loop_vars": "_loop_vars"} if frame.loop_frame else {}),
                 **({"_block_vars": "_block_vars"} if frame.block_frame else {})}
        self.signature(node, frame, extra or None)
        self.write("))")


class PageEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, with a quick way through for repodoc's own data (`_DATA_TYPES`) and for the
    keys of a plain dict (`entry.href`): the same answers, without the checks."""

    code_generator_class = PageCodeGenerator

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

    def getitem(self, obj: Any, argument: Any) -> Any:
        # `selectattr("container")` and the like read an attribute through `getitem`: the sandbox
        # tries `obj[argument]` (a TypeError for these types), then the attribute with its checks.
        if type(obj) in _DATA_TYPES and type(argument) is str and argument[:1] != "_":
            try:
                return getattr(obj, argument)
            except AttributeError:
                pass
        return super().getitem(obj, argument)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        # The views' own plain functions (`line_href`) are safe to call: what the sandbox and
        # `Context.call` would do for them, without their checks (a page calls them thousands of times).
        if type(__obj) is FunctionType and __obj.__module__ in _OWN_MODULES and not hasattr(__obj, "jinja_pass_arg"):
            return _call_plain(__context.environment, __obj, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)


def _call_plain(environment: jinja2.Environment, obj: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """What `Context.call` does for a callable that takes no Jinja context, environment or eval
    context (`pass_context` and the like), without its checks for them."""
    if kwargs:
        kwargs.pop("_block_vars", None)
        kwargs.pop("_loop_vars", None)
    try:
        return obj(*args, **kwargs)
    except StopIteration:
        return environment.undefined("value was undefined because a callable raised a StopIteration exception")


class _Names(frozenset):
    """A template's globals' names: `names - template.globals.keys()` (a `from ... import` of a
    macro module, once per page) without the `KeysView`'s slow reflected `-` of Python's own, and
    worked out once per pair of templates: `template.globals` is a `ChainMap` (the template's and
    the environment's), whose keys Python lists by walking every map anew (2% of rendering)."""

    def __sub__(self, other: Any) -> frozenset:
        mapping = getattr(other, "_mapping", None)  # a `KeysView`: the imported template's globals
        if mapping is None:
            return frozenset.difference(self, other)
        return _kept(_kept(_DIFFERENCES, self, _no_differences), mapping, functools.partial(frozenset.difference, self))


_V = TypeVar("_V")


def _kept(cache: dict[int, tuple[Any, _V]], of: Any, make: Callable[[Any], _V]) -> _V:
    """`make(of)`, made once per object `of` (kept by its id, with the object itself, so that a
    later object given the same id is not taken for it)."""
    kept = cache.get(id(of))
    if kept is None or kept[0] is not of:
        kept = cache[id(of)] = (of, make(of))
    return kept[1]


def _no_differences(names: frozenset[str]) -> dict[int, tuple[Any, frozenset[str]]]:
    """A table of `names - globals' names` for each template's globals (`_Names.__sub__`)."""
    return {}


# id(a template's globals) -> (those globals, their names): `OwnContext`
_GLOBALS_KEYS: dict[int, tuple[Any, frozenset[str]]] = {}
# id(names) -> (those names, {id(globals) -> (those globals, names - globals' names)}): `_Names`
_DIFFERENCES: dict[int, tuple[Any, dict[int, tuple[Any, frozenset[str]]]]] = {}
# id(a template's globals) -> (those globals, a plain dict of them): `OwnTemplate`
_FLAT_GLOBALS: dict[int, tuple[Any, dict[str, Any]]] = {}
# Per thread, while `OwnTemplate.render` runs: the page's context and those of the macro modules it
# imported with its context (`new_context`), emptied when the page is made
_RENDERING = threading.local()


class OwnTemplate(jinja2.Template):
    """A template of repodoc's own: a new context (each page, each macro module imported) starts
    from a plain dict of the template's globals made once, not from their `ChainMap`, which
    `dict()` copies key by key in Python. The same names and values: repodoc's own templates'
    globals are set before they compile (`Renderer`), and Jinja only reads them."""

    def new_context(self, vars: dict[str, Any] | None = None, shared: bool = False,
                    locals: Any = None) -> Context:
        # `jinja2.runtime.new_context`, its context made by `OwnContext.made`
        globals = _kept(_FLAT_GLOBALS, self.globals, dict)
        if vars is None:
            vars = {}
        parent = vars if shared else dict(globals, **vars)
        if locals:
            if shared:
                parent = dict(parent)
            for key, value in locals.items():
                if value is not missing:
                    parent[key] = value
        context = OwnContext.made(self.environment, parent, self.name, self.blocks, globals)
        if shared and (made := getattr(_RENDERING, "contexts", None)) is not None:
            made.append(context)  # a macro module imported with its importer's context: undone by `render`
        return context

    def included(self, context: Context, locals: dict[str, Any]) -> Context:
        """`new_context(context.get_all(), True, locals)` (an `include` with its context,
        `OwnCodeGenerator`): the same names with the same values, but the includer's parent (the
        page's view, dozens of names, which Jinja only reads) is shared, not copied: the includer's
        own names (a few: its imports, sets) and its locals (the loop's entry) are the new context's
        `vars`, which a name is looked up in first, and which the included template sets its names in."""
        names = {**context.vars}
        for key, value in locals.items():
            if value is not missing:
                names[key] = value
        included = OwnContext.made(self.environment, context.parent, self.name, self.blocks,
                                   _kept(_FLAT_GLOBALS, self.globals, dict))
        included.vars = names
        return included

    def render(self, *args: Any, **kwargs: Any) -> str:
        """Jinja's `render`, then the reference cycles it made undone: a context holding macros (the
        page's own, `folder_doc.md.j2`'s `ranked`; a macro module's imported with the page's context,
        `make_module`: `_macros.md.j2`, once per page) is held by their code in turn, and through its
        parent holds every name of the page's view (its facts, its lists) until the cycle collector
        finds it: all it collected in a render worker, 6% of the worker's CPU time on PyTorch's pages.
        Once the page is made, its macros are no longer called: emptied of them, the contexts and the
        view are freed with the page. (A module imported without context is kept by Jinja, untouched.)"""
        if self.environment.is_async:
            return super().render(*args, **kwargs)
        outer = getattr(_RENDERING, "contexts", None)
        _RENDERING.contexts = made = [self.new_context(dict(*args, **kwargs))]
        try:
            return self.environment.concat(self.root_render_func(made[0]))
        except Exception:
            self.environment.handle_exception()
        finally:
            _RENDERING.contexts = outer
            for context in made:
                context.vars.clear()


# What repodoc's own templates call most (`aka.get`, `line_href`, `"{:,}".format`, their macros):
# none takes Jinja's context, environment or eval context (`pass_context` and the like).
_PLAIN_CALLS = (BuiltinMethodType, Macro)


class OwnContext(Context):
    """The context of repodoc's own templates: a call of a built-in method, a macro or a plain
    function skips the checks for `pass_context` and the like (what `Context.call` does for them,
    without them: 38,000 calls for 1 page in 9 of PyTorch's)."""

    def __init__(self, environment: jinja2.Environment, parent: dict[str, Any], name: str | None,
                 blocks: dict[str, Any], globals: Any = None) -> None:
        # `Context.__init__`, the names of the template's globals listed once per template, not
        # per context: an `include` makes a context (43,000 for PyTorch's pages), and listing the
        # globals (a ChainMap of the template's and the environment's) took a third of it. Jinja
        # only reads them (`TemplateModule`: `ctx.globals_keys - ...`), and repodoc's own
        # templates' globals are set before they compile (`Renderer`). The rest is Jinja's own.
        super().__init__(environment, parent, name, blocks)
        if globals is not None:
            names: frozenset[str] = _kept(_GLOBALS_KEYS, globals, _Names)
            self.globals_keys = names  # type: ignore[assignment]  # read only

    @classmethod
    def made(cls, environment: jinja2.Environment, parent: dict[str, Any], name: str | None,
             blocks: dict[str, Any], globals: Any) -> OwnContext:
        """`cls(environment, parent, name, blocks, globals)`, its fields set in place (as
        `Context.__init__` sets them, Jinja 3.1) without the calls of the constructors' chain: a page
        makes a context for itself, its macros and each entry it includes."""
        self = cls.__new__(cls)
        self.parent = parent
        self.vars = {}
        self.environment = environment
        self.eval_ctx = EvalContext(environment, name)
        self.exported_vars = set()
        self.name = name
        names: frozenset[str] = _kept(_GLOBALS_KEYS, globals, _Names)
        self.globals_keys = names  # type: ignore[assignment]  # read only
        self.blocks = {k: [v] for k, v in blocks.items()} if blocks else {}
        return self

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        kind = type(__obj)
        if kind is Macro:
            return _call_macro(__self.environment, __obj, args, kwargs)
        if kind in _PLAIN_CALLS or (kind is FunctionType and not hasattr(__obj, "jinja_pass_arg")):
            return _call_plain(__self.environment, __obj, args, kwargs)
        return super().call(__obj, *args, **kwargs)


def _call_macro(environment: jinja2.Environment, macro: Macro, args: tuple, kwargs: dict[str, Any]) -> Any:
    """A macro of repodoc's own templates called with its arguments by position (`docstring(m)`,
    `fold(loop, "methods")`: the most of the 100,000 macro calls of 1 page in 3 of PyTorch's): what
    `Macro.__call__` does then (the arguments left out `missing`, so that their defaults apply),
    without its handling of `caller`, `varargs` and autoescaping, none of which applies; arguments
    after those by position may come by name (`away=`: 13,000 calls for PyTorch's pages), put in
    their places as `Macro.__call__` puts them. Any other call goes through `Macro.__call__`."""
    if kwargs:
        kwargs.pop("_block_vars", None)
        kwargs.pop("_loop_vars", None)
    count = macro._argument_count
    if len(args) > count or macro.caller or macro.explicit_caller or macro.catch_kwargs \
            or macro.catch_varargs or macro._default_autoescape or environment.is_async:
        return _call_plain(environment, macro, args, kwargs)
    if kwargs:  # `long_list(items, "files", away=...)`: the arguments after those given by position, by name
        rest = macro.arguments[len(args):]
        if not kwargs.keys() <= set(rest):  # an unknown name (an error) or one given twice
            return _call_plain(environment, macro, args, kwargs)
        args = (*args, *[kwargs.get(name, missing) for name in rest])
    try:
        return macro._func(*args) if len(args) == count else macro._func(*args, *[missing] * (count - len(args)))
    except StopIteration:
        return environment.undefined("value was undefined because a callable raised a StopIteration exception")


class OwnEnvironment(jinja2.Environment):
    """The environment of repodoc's own templates (unsandboxed, see above): a key of a plain dict
    read as an attribute (`it.href`, a third of the attributes its templates read) is read without
    first failing to find it as an attribute (the same answer: a plain dict's attributes are its
    class's)."""

    context_class = OwnContext
    template_class = OwnTemplate
    code_generator_class = OwnCodeGenerator

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._own: dict[tuple[str, str | None], jinja2.Template] = {}

    def get_template(self, name: str | jinja2.Template, parent: str | None = None,
                     globals: Any = None) -> jinja2.Template:
        # A page's `include`s and imports ask for their template each time (43,000 times for
        # PyTorch's pages): repodoc's own templates are not looked at again (`auto_reload` is off),
        # so the one found first is kept here, without the cache's lock and the loader's checks.
        if globals is None and type(name) is str:
            found = self._own.get((name, parent))
            if found is None:
                found = self._own[name, parent] = super().get_template(name, parent)
            return found
        return super().get_template(name, parent, globals)

    @staticmethod
    def attribute_types(attribute: str) -> frozenset[type]:
        """The types whose `attribute` the code of repodoc's own templates reads in place
        (`OwnCodeGenerator`): repodoc's data types and `str` defining it (a field every instance
        has, a property or a method), and `dict` for its own methods (`d.get`; any other attribute
        of a dict is its key): reading it cannot fail, and gives what `getattr` gives."""
        kinds = (*_DATA_TYPES, str, dict) if attribute in _DICT_ATTRIBUTES else (*_DATA_TYPES, str)
        return frozenset(kind for kind in kinds if attribute[:1] != "_" and hasattr(kind, attribute))

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        # `Environment.getattr` written out (the attribute, else the item), without the call through
        # `super()`: that call and the base method were 5% of the samples of rendering (py-spy)
        try:
            return getattr(obj, attribute)
        except AttributeError:
            pass
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=obj, name=attribute)


def make_environment(templates: str | Path | None) -> jinja2.Environment:
    """The environment: `templates` (a folder of the person's) overrides the built-in templates
    by name and makes every template render in the sandbox (theirs may include the built-in ones,
    and the built-in ones theirs); without it, only repodoc's own templates, unsandboxed."""
    loaders: list[jinja2.BaseLoader] = []
    if templates:
        loaders.append(jinja2.FileSystemLoader(str(templates)))
    loaders.append(jinja2.PackageLoader("repodoc_lsp.render", "templates"))
    kind = PageEnvironment if templates else OwnEnvironment
    return kind(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        # repodoc's own templates change only with repodoc: not looked at on disk again at each
        # `include` (two `stat`s each, 160,000 for PyTorch's pages); a person's folder still is
        auto_reload=bool(templates),
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
