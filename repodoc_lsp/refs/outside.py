"""What is not the workspace's: Python's own modules, installed packages, the project's declared
dependencies, and the Sphinx project's settings a reference is read with. Nothing is imported
to find a module (`importlib.util.find_spec` finds without running), and nothing of the
workspace is ever imported.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

from repodoc_lsp.refs.extract import PY_ROLES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# standard-library modules whose import does something (a browser, a window, a print): never imported
NOT_IMPORTED = frozenset({"antigravity", "this", "idlelib", "turtle", "turtledemo", "tkinter", "webbrowser"})

# Python 2's standard-library modules that Python 3 renamed: docs of old still name them
_PYTHON2 = frozenset({"BaseHTTPServer", "SimpleHTTPServer", "CGIHTTPServer", "SocketServer", "ConfigParser",
                      "Queue", "StringIO", "cStringIO", "cPickle", "urllib2", "urlparse", "HTMLParser", "Cookie",
                      "cookielib", "httplib", "Tkinter", "__builtin__", "UserDict", "thread", "xmlrpclib"})


_STDLIB_DIRS = tuple({os.path.join(sysconfig.get_paths()[key], "") for key in ("stdlib", "platstdlib")})


def from_stdlib(top: str) -> bool:
    """True when the module `top` that an import would load is Python's own (built in, frozen, or a
    file of the standard library's folders), found without running anything: a checkout's `json.py`
    or `turtle.py` on the path (`python -m` from its root) is not, and is never imported."""
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    origin = (spec.origin or "") if spec is not None else ""
    return origin in ("built-in", "frozen") or origin.startswith(_STDLIB_DIRS)


@lru_cache(maxsize=4096)
def external(top: str) -> bool:
    """True when `top` is an importable module outside the workspace (found, never imported), or
    one of Python 2's standard library."""
    if top in _PYTHON2:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return True  # something is there; not ours to judge


_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def declared_dependencies(root: Path) -> set[str]:
    """Import names (normalised distribution names) of what the project at `root` declares it
    needs: pyproject.toml's dependencies and optional dependencies (and Poetry's), requirements
    files (`requirements*.txt`, `requirements/*.txt`, `*.in`) and setup.cfg's install_requires."""
    specs: list[str] = []
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        data = {}
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    specs += [d for d in project.get("dependencies", ()) if isinstance(d, str)]
    for extra in (project.get("optional-dependencies") or {}).values():
        specs += [d for d in extra if isinstance(d, str)]
    for group in (data.get("dependency-groups") or {}).values():
        specs += [d for d in group if isinstance(d, str)]
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    for table in (poetry.get("dependencies", {}), poetry.get("dev-dependencies", {})):
        specs += [str(k) for k in table] if isinstance(table, dict) else []
    files = [*root.glob("requirements*.txt"), *root.glob("requirements/*.txt"), *root.glob("requirements/*.in"),
             *root.glob("requirements*.in")]
    for path in files:
        try:
            specs += [line for line in path.read_text(encoding="utf-8").splitlines()
                      if line.strip() and not line.lstrip().startswith(("#", "-"))]
        except (OSError, UnicodeDecodeError):
            continue
    try:
        cfg = (root / "setup.cfg").read_text(encoding="utf-8")
        block = re.search(r"install_requires\s*=\s*\n((?:[ \t]+\S.*\n?)+)", cfg)
        specs += block.group(1).splitlines() if block else []
    except (OSError, UnicodeDecodeError):
        pass
    names = set()
    for spec in specs:
        m = _REQUIREMENT.match(spec)
        if m:
            names.add(re.sub(r"[-.]+", "_", m.group(1)).lower())
    return names


_CONF = ("docs/conf.py", "doc/conf.py", "docs/source/conf.py", "doc/source/conf.py", "doc/en/conf.py", "conf.py")
_DEFAULT_ROLE = re.compile(r"""^default_role\s*=\s*["']([\w:]+)["']""", re.MULTILINE)


def sphinx_default_role(root: Path) -> str:
    """The Python role Sphinx gives interpreted text without one (`default_role` in the Sphinx
    project's conf.py: `any`, `obj`, `py:class`...); "" when it is `code`, `literal` or unset."""
    for rel in _CONF:
        try:  # (the docs folder is often the output folder: its files are not the workspace's facts)
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        m = _DEFAULT_ROLE.search(text)
        role = m.group(1) if m else ""
        name = role.split(":")[-1]
        return "obj" if name == "any" else role if name in PY_ROLES else ""
    return ""

