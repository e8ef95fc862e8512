"""One settings tree: defaults < `[tool.repodoc]` in pyproject.toml < environment < command line
or editor.

Every setting is declared once in `FIELDS` with its three spellings
(Python, pyproject.toml, editor), its type and whom it is taken from; strict
loading (the CLI) raises `ConfigError` naming the key, lenient loading (the
server) falls back to the default and reports the problem. A setting that is
code or chooses a path outside the workspace (`Trust.PERSON`) is never taken
from the workspace's pyproject.toml: it is refused there with a message and
its default is used (README "Trust").
"""

from __future__ import annotations

import dataclasses
import enum
import errno
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repodoc_lsp.store.ignore import gitignore_spec
from repodoc_lsp.store.regular import read_inside

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A bad setting; the message names the file and the key."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    output: str = "docs"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    embed_source_max_bytes: int = 3_000  # scale corpus: tree about 1.49x its sources on disk (16,000: 1.65x)
    max_file_bytes: int = 5_000_000
    project_name: str = ""
    templates: str = ""
    jobs: int = 0
    cache_dir: str = ""
    regenerate_on_save: bool = True
    max_workspace_symbols: int = 200
    python_path: str = ""
    hover: str = "full"
    max_workspace_files: int = 100_000
    refs_ignore: tuple[str, ...] = ()
    refs_history: bool = False
    blank_macros: str = ""
    llms_full_max_bytes: int = 0
    site: str = "none"
    # Not a setting: why repodoc chose `output` itself, nobody having set it ("" when somebody did or
    # it is `docs`); the first run says it in one line (`output_notice`).
    output_chosen: str = ""

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


class Trust(enum.Enum):
    """Who may set a setting."""

    ANY = "any"  # the workspace's pyproject.toml too
    PERSON = "person"  # code, or a path anywhere: command line, editor settings, environment only
    INSIDE = "inside"  # a path the workspace may set only inside itself (see `output_problem`)


@dataclass(frozen=True)
class Field:
    name: str  # Python attribute
    kind: type
    help: str
    minimum: int | None = None
    editor_name: str = ""  # when the editor spelling is not the camelCase of `name`
    choices: tuple[str, ...] = ()  # the values a string may take, when they are few
    trust: Trust = Trust.ANY
    env: str = ""  # environment variable that sets it (the person's own)
    live: bool = False  # the language server applies a change at once, without indexing the root again
    pages: bool = True  # a page can change with it (`page_settings`: a change makes the tree stale)

    @property
    def toml_key(self) -> str:
        return self.name.replace("_", "-")

    @property
    def editor_key(self) -> str:
        if self.editor_name:
            return self.editor_name
        head, *rest = self.name.split("_")
        return head + "".join(p.capitalize() for p in rest)


FIELDS: tuple[Field, ...] = (
    Field("output", str, "output folder, inside the workspace (`--out` may leave it); unset: `docs`, or "
          "`repodoc-docs` when `docs/` is the project's own documentation", editor_name="outputDir",
          trust=Trust.INSIDE),
    Field("include", tuple, "gitignore-style patterns; when set, only matching files are inputs"),
    Field("exclude", tuple, "gitignore-style patterns excluded from the inputs"),
    Field("embed_source_max_bytes", int,
          "embed sources up to this size in _docs.md, folded, when the page stays under 100,000 bytes (0: never)", 0),
    Field("max_file_bytes", int, "files larger than this are skipped", 1),
    Field("project_name", str, "project name shown in pages (default: pyproject.toml, else folder)"),
    Field("templates", str, "folder of Jinja2 templates overriding the built-in ones (sandboxed)",
          trust=Trust.PERSON, env="REPODOC_TEMPLATES"),
    Field("jobs", int, "worker processes (0: one per core; never more than the cores)", 0, pages=False),
    Field("cache_dir", str, "analysis cache folder (default: the user cache folder)",
          trust=Trust.PERSON, env="REPODOC_CACHE_DIR", pages=False),
    Field("regenerate_on_save", bool, "language server: rewrite pages on save", live=True, pages=False),
    Field("max_workspace_symbols", int, "language server: most workspace/symbol results", 1, live=True, pages=False),
    Field("python_path", str, "language server: interpreter whose libraries jedi resolves",
          trust=Trust.PERSON, env="REPODOC_PYTHON_PATH", pages=False),
    Field("hover", str, "language server: full (signature, docstring, repodoc's facts), extras (only what "
          "repodoc adds; the editor clients choose it when another Python language server is attached and "
          "this is not set) or off", choices=("full", "extras", "off"),
          live=True, pages=False),
    Field("max_workspace_files", int, "files beyond this many in a workspace are left out, with a message", 1),
    Field("blank_macros", str, "C, C++ and CUDA: a regular expression (RE2) of the export and visibility macros "
          "blanked before parsing, which otherwise hide definitions (unset: `*_API`, `*_EXPORT` and the like, "
          "CUDA's `__host__`, `__device__`, `__global__`; `-`: none)"),
    Field("refs_ignore", tuple, "gitignore-style patterns of files whose stale references are not reported "
          "(`repodoc check` and the language server's diagnostics; `**`: none)", pages=False),
    Field("refs_history", bool, "also check history for stale references: changelogs, release notes, upgrade "
          "and migration guides, deprecation pages, versionadded/versionchanged/deprecated blocks", pages=False),
    Field("llms_full_max_bytes", int, "also write llms-full.txt at the root of the tree (every file's purpose, "
          "classes and functions, most imported first), cut at this many bytes (0: not written; llms.txt "
          "is always written)", 0),
    Field("site", str, "mkdocs: `repodoc generate` also writes mkdocs.yml beside the output folder (navigation "
          "from the folder indexes, Mermaid, search; a person's mkdocs.yml is left alone) and .nojekyll "
          "in it; none: neither", choices=("none", "mkdocs")),
)
_BY_KEY: dict[str, Field] = {}
for _f in FIELDS:
    _BY_KEY[_f.name] = _BY_KEY[_f.toml_key] = _BY_KEY[_f.editor_key] = _f


def page_settings(settings: Settings) -> tuple[tuple[str, object], ...]:
    """The settings a page can change with (`Field.pages`), by name: the tree's inputs stamp holds these,
    so that another worker count or a language server's setting does not make a whole tree stale."""
    return tuple((f.name, getattr(settings, f.name)) for f in FIELDS if f.pages)


def _convert(field: Field, value: Any) -> Any:
    if field.kind is bool:
        if isinstance(value, bool):
            return value
        raise ValueError(f"expected true or false, got {value!r}")
    if field.kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"expected a whole number, got {value!r}")
        if field.minimum is not None and value < field.minimum:
            raise ValueError(f"expected a number >= {field.minimum}, got {value}")
        return value
    if field.kind is str:
        if not isinstance(value, str):
            raise ValueError(f"expected a string, got {value!r}")
        if field.choices and value not in field.choices:
            raise ValueError(f"expected one of {', '.join(field.choices)}, got {value!r}")
        return value
    if isinstance(value, str):
        value = [value]
    if not (isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)):
        raise ValueError(f"expected a list of strings, got {value!r}")
    gitignore_spec(value)  # every list is of patterns: ValueError when they are too many to match together
    return tuple(value)


def apply(
    base: Settings, values: Mapping[str, Any], *, source: str, strict: bool, workspace: bool = False
) -> tuple[Settings, list[str]]:
    """`base` with `values` applied (any spelling of the keys).

    strict: the first problem raises ConfigError. Lenient: a bad or unknown
    key keeps its current value and the problem is returned. workspace: the
    values come from the workspace, so `Trust.PERSON` keys are refused (a
    returned problem even when strict: the default is used, nothing fails).
    """
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in values.items():
        field = _BY_KEY.get(key)
        if field is None:
            known = ", ".join(f.toml_key if "tool.repodoc" in source else f.editor_key for f in FIELDS)
            problem = f"{source}: unknown key {key!r} (known keys: {known})"
        elif value is None:
            continue
        elif workspace and field.trust is Trust.PERSON:
            problems.append(f"{source}: {key}: refused: the workspace may not set it (it is code or a path "
                            f"outside the workspace); set it on the command line, in your editor settings "
                            f"or with {field.env}")
            continue
        else:
            try:
                changes[field.name] = _convert(field, value)
                continue
            except ValueError as exc:
                problem = f"{source}: {key}: {exc}"
        if strict:
            raise ConfigError(problem)
        problems.append(problem)
    return base.replace(**changes), problems


def live_changes(old: Settings, new: Settings) -> dict[str, Any] | None:
    """The changed values when every change is `live` (applied without indexing again), else None."""
    changed = {f.name: getattr(new, f.name) for f in FIELDS if getattr(old, f.name) != getattr(new, f.name)}
    return changed if all(_BY_KEY[name].live for name in changed) else None


def _pyproject(root: Path) -> tuple[dict[str, Any], str]:
    """root/pyproject.toml as TOML and "", or {} and why the workspace's file is not read (a link out of
    the workspace, not a regular file, too large: a warning, and its settings are the defaults). {} and ""
    when absent; ConfigError on bad TOML or a file that cannot be read."""
    path = root / "pyproject.toml"
    try:
        data = tomllib.loads(read_inside(root, path).decode("utf-8"))
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        if exc.errno in _NOT_READ:
            return {}, f"{path}: not read ({exc.strerror})"
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    return data, ""


# Why a workspace's pyproject.toml is not read (`read_inside`): a warning, not an error.
_NOT_READ = frozenset({errno.EXDEV, errno.EINVAL, errno.EFBIG, errno.ELOOP})


def read_pyproject(root: Path) -> tuple[dict[str, Any], str]:
    """`[tool.repodoc]` of root/pyproject.toml ({} when absent) and why the file was not read ("" when
    it was or is absent: see `_pyproject`); ConfigError on bad TOML."""
    data, why = _pyproject(root)
    tool = data.get("tool", {})
    section = tool.get("repodoc", {}) if isinstance(tool, dict) else {}  # `tool = 1`: no [tool.repodoc]
    if not isinstance(section, dict):
        raise ConfigError(f"{root / 'pyproject.toml'}: [tool.repodoc] must be a table")
    return section, why


def _environment() -> dict[str, str]:
    """The person's settings from environment variables (relative paths: from where they run)."""
    return {f.name: os.path.abspath(os.path.expanduser(os.environ[f.env])) for f in FIELDS
            if f.env and os.environ.get(f.env)}


def _person_paths(root: Path, settings: Settings, problems: list[str]) -> Settings:
    """The person's path settings made absolute (relative to the root, never to the process's
    working folder); an interpreter that is not an executable file is refused."""
    changes: dict[str, str] = {}
    for field in FIELDS:
        value = getattr(settings, field.name)
        if field.trust is Trust.PERSON and value:
            changes[field.name] = os.path.normpath(os.path.join(root.resolve(), os.path.expanduser(value)))
    python = changes.get("python_path")
    if python and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        problems.append(f"settings: pythonPath: {python}: not an executable interpreter file")
        changes["python_path"] = ""
    return settings.replace(**changes)


def load_settings(
    root: Path, overrides: Mapping[str, Any] | None = None, *, strict: bool = True
) -> tuple[Settings, list[str]]:
    """Defaults < pyproject.toml (workspace: `Trust.PERSON` keys refused) < environment < overrides
    (the person's: command line or editor). Returned problems never stopped the load."""
    problems: list[str] = []
    try:
        table, why = read_pyproject(root)
        if why:
            problems.append(why)
    except ConfigError as exc:
        if strict:
            raise
        problems.append(str(exc))
        table = {}
    settings, found = apply(Settings(), table, source=f"{root / 'pyproject.toml'} [tool.repodoc]",
                            strict=strict, workspace=True)
    problems += found
    settings = settings.replace(**_environment())
    if overrides:
        settings, found = apply(settings, overrides, source="settings", strict=strict)
        problems += found
    if not any(table.get(k) is not None or (overrides or {}).get(k) is not None for k in _OUTPUT_KEYS):
        output, why = default_output(root)
        settings = settings.replace(output=output, output_chosen=why)
    return _person_paths(root, settings, problems), problems


_OUTPUT_KEYS = ("output", "outputDir")  # the spellings of `output` (FIELDS)
DEFAULT_OUTPUT = Settings.output  # "docs"
# The folder of its own repodoc writes to when `docs/` is the project's own documentation: at the top,
# so inside no Sphinx or MkDocs source folder; named after the tool, so a reader knows what wrote it;
# with a hyphen, so it can be no importable package's name; not a name docs tools use (_build, site).
OWN_OUTPUT = "repodoc-docs"


def default_output(root: Path) -> tuple[str, str]:
    """The output folder when nobody set one (relative to `root`), and why it is not `docs` ("" when
    it is). Decided from the folders alone, so every caller (CLI, check, server, page process,
    hook, action) decides the same: `docs` holding repodoc's manifest stays the output; else
    `repodoc-docs` holding it stays; else `docs` when it holds only what repodoc wrote (or does not
    exist), `repodoc-docs` when it is the project's own documentation (`docs_source`)."""
    from repodoc_lsp.output.manifest import has_manifest

    if has_manifest(root / DEFAULT_OUTPUT):
        return DEFAULT_OUTPUT, ""
    why = docs_source(root)
    if why:  # the same words before and after the first run (the settings stay equal)
        return OWN_OUTPUT, (f"{DEFAULT_OUTPUT}/ holds your own documentation ({why}); writing to "
                            f"{OWN_OUTPUT}/ (set `output` in [tool.repodoc] to choose)")
    if has_manifest(root / OWN_OUTPUT):
        return OWN_OUTPUT, f"{OWN_OUTPUT}/ holds the pages repodoc wrote"
    return DEFAULT_OUTPUT, ""


def docs_source(root: Path) -> str:
    """What makes `root/docs` the project's own documentation ("" when nothing does): a root
    `mkdocs.yml` whose `docs_dir` is `docs` (its default), or a file in it that repodoc did not
    write (no marker on its first line: a Sphinx `conf.py`, a hand-written page). Hidden files and
    folders are left out (`.gitkeep`, repodoc's own manifest and temporary files)."""
    from repodoc_lsp.output.writer import owned_page

    for name in ("mkdocs.yml", "mkdocs.yaml"):
        if _mkdocs_dir(root / name) == DEFAULT_OUTPUT:
            return f"{name} builds it"
    top = root / DEFAULT_OUTPUT
    if not top.is_dir():
        return ""
    for tool in _DOCS_TOOL_CONFIGS:  # named first when there: what makes docs/ a source folder
        if (top / tool).is_file() and not owned_page(top / tool):
            return f"{DEFAULT_OUTPUT}/{tool}"
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and not owned_page(os.path.join(folder, name)):
                return os.path.relpath(os.path.join(folder, name), root)
    return ""


_DOCS_TOOL_CONFIGS = ("conf.py", "mkdocs.yml", "mkdocs.yaml", "source/conf.py")


def _mkdocs_dir(path: Path) -> str | None:
    """The `docs_dir` of the MkDocs configuration at `path` (None when there is none), normalised."""
    try:
        text = read_inside(path.parent, path).decode("utf-8", errors="replace")
    except OSError:
        return None
    folder = DEFAULT_OUTPUT  # MkDocs' default
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key == "docs_dir":
            folder = value.split("#", 1)[0].strip().strip("'\"") or folder
    return os.path.normpath(folder)


def output_notice(root: Path, settings: Settings) -> str:
    """The one line that says where pages go when repodoc chose the folder itself and this is its
    first run there (no manifest yet); "" otherwise."""
    from repodoc_lsp.output.manifest import has_manifest

    if not settings.output_chosen or has_manifest(root / settings.output):
        return ""
    return f"repodoc: {settings.output_chosen}"


def project_name(root: Path, settings: Settings) -> str:
    if settings.project_name:
        return settings.project_name
    try:
        project = _pyproject(root)[0].get("project", {})
    except ConfigError:
        project = {}
    name = project.get("name") if isinstance(project, dict) else None  # `project = 1`: no name
    if isinstance(name, str) and name:
        return name
    return root.resolve().name or "workspace"


def cache_dir(settings: Settings) -> Path:
    """The analysis cache folder: the person's setting, REPODOC_CACHE_DIR, else the user cache folder
    (a relative path here would depend on the working folder: `FactsCache` refuses it)."""
    for value in (settings.cache_dir, os.environ.get("REPODOC_CACHE_DIR", "")):
        if value:
            return Path(os.path.abspath(os.path.expanduser(value)))
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "repodoc"


def output_problem(root: Path, output: str, *, key: str = "output", may_leave: bool = False) -> str | None:
    """Why `output` (relative to `root`) cannot be root's output folder, or None when it can.

    It must resolve, symlinks followed, to a folder inside the workspace (`may_leave`: the person
    gave it on the command line), not the workspace itself nor a folder holding it, and must not
    hold Python sources: a package below it or a module in it (their pages would mix with them,
    and they would no longer be inputs).
    """
    from repodoc_lsp.analysis.source import PYTHON_SUFFIXES

    root_real = os.path.realpath(root)
    real = os.path.realpath(os.path.join(root_real, os.path.expanduser(output)))
    where = f"{key} {output!r}" + ("" if real == output else f" ({real})")
    if os.path.lexists(real) and not os.path.isdir(real):
        return f"{where}: exists and is not a folder"
    if real == root_real or root_real.startswith(real.rstrip(os.sep) + os.sep):
        return f"{where}: is the workspace folder or holds it; choose a folder of its own"
    if not real.startswith(root_real + os.sep) and not may_leave:
        return (f"{where}: outside the workspace {root_real}; only --out on the command line may "
                "write outside it")
    for folder, dirs, files in os.walk(real):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name in _PACKAGE_MARKERS or (folder == real and name.endswith(PYTHON_SUFFIXES)
                                            and name not in _DOCS_TOOL_FILES):
                return (f"{where}: holds Python sources ({os.path.join(folder, name)}); "
                        "choose a folder of its own")
    return None


# What makes a folder hold sources: a package anywhere below it, or a module directly in it
# (a docs folder's own `conf.py`, Sphinx's, is not a source).
_PACKAGE_MARKERS = frozenset({"__init__.py", "__init__.pyi"})
_DOCS_TOOL_FILES = frozenset({"conf.py"})
