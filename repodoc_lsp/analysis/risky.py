"""Risky calls and calls to check (deserialisation, code run from data, the shell, `mktemp`), found in
the syntax tree around the lines where the text looks like one (`risky_lines`): each finding names
the call and its line."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable

from repodoc_lsp.analysis.model import Finding, FindingCategory, Import
from repodoc_lsp.analysis.patterns import (
    argument,
    dotted,
    import_aliases,
    keyword_value,
    line_numbers,
    nodes_around,
    resolve,
    show_value,
    statements,
)

SECURITY = FindingCategory.SECURITY
RISKY = "risky"
CHECK = "check"

_UNPICKLE = {"pickle.load", "pickle.loads", "pickle.Unpickler", "cPickle.load", "cPickle.loads",
             "_pickle.load", "_pickle.loads", "_pickle.Unpickler",
             "dill.load", "dill.loads", "marshal.load", "marshal.loads", "shelve.open",
             "joblib.load"}
_PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "dill"}
_SUBPROCESS = {"subprocess.run", "subprocess.call", "subprocess.check_call",
               "subprocess.check_output", "subprocess.Popen"}
_SHELL = {"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput"}
_TORCH_LOAD = {"torch.load", "torch.serialization.load"}
_YAML_UNSAFE_LOADERS = {"Loader", "UnsafeLoader", "FullLoader", "CLoader", "CUnsafeLoader", "CFullLoader"}
_IMPORT_BY_NAME = {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}


class _Bindings:
    """What the whole file binds, read once and only when a rule needs it: `name = Callee(...)`
    assignments (flow-insensitive) and the file's classes with their bases."""

    def __init__(self, tree: ast.Module, aliases: dict[str, str]) -> None:
        self.tree = tree
        self.aliases = aliases
        self._calls: dict[str, set[str]] | None = None
        self._bases: dict[str, list[str]] = {}

    def calls(self, name: str) -> set[str]:
        if self._calls is None:
            self._calls = {}
            for node in statements(self.tree):  # both are statements: no expression visited
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                    callee = resolve(node.value.func, self.aliases)
                    if callee:
                        for target in node.targets:
                            if isinstance(target, ast.Name):
                                self._calls.setdefault(target.id, set()).add(callee)
                elif isinstance(node, ast.ClassDef):
                    self._bases.setdefault(node.name, []).extend(
                        b for b in (resolve(base, self.aliases) for base in node.bases) if b)
        return self._calls.get(name, set())

    def unpickler_class(self, callee: str, seen: frozenset[str] = frozenset()) -> bool:
        """`callee` is an unpickler: its name ends with `Unpickler`, or it is a class of this file
        deriving from one."""
        if callee.rsplit(".", 1)[-1].endswith("Unpickler"):
            return True
        self.calls("")  # the classes are read with the assignments
        if callee in seen or callee not in self._bases:
            return False
        return any(self.unpickler_class(b, seen | {callee}) for b in self._bases[callee])


def _unpickler_of(receiver: ast.expr, bindings: _Bindings) -> str | None:
    """The unpickler class `receiver` is an instance of (`Unpickler(f)` itself, or a name
    assigned from such a call), else None; the standard library's (reported where it is made) too."""
    if isinstance(receiver, ast.Call):
        callees = {c for c in (resolve(receiver.func, bindings.aliases),) if c}
    elif isinstance(receiver, ast.Name):
        callees = bindings.calls(receiver.id)
    else:
        return None
    found = sorted(c for c in callees if bindings.unpickler_class(c) and c not in _UNPICKLE)
    return found[0] if found else None


def _security(node: ast.Call, name: str, full: str, bindings: _Bindings) -> Finding | None:
    line = node.lineno
    tail = node.func.attr if isinstance(node.func, ast.Attribute) else full.rsplit(".", 1)[-1]
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None

    def risky(label: str, detail: str) -> Finding:
        return Finding(SECURITY, label, line, detail, RISKY)

    def check(label: str, detail: str) -> Finding:
        return Finding(SECURITY, label, line, detail, CHECK)

    if full in ("eval", "exec", "builtins.eval", "builtins.exec"):
        code = argument(node, 0, "source")
        if code is None or isinstance(code, ast.Constant):
            return None  # no argument, or code written in the file
        return check(tail, f"`{name}()` of {show_value(code)}: runs whatever code that holds at run time")
    if full in _IMPORT_BY_NAME:
        module = argument(node, 0, "name")
        if module is None or isinstance(module, ast.Constant):
            return None
        return check(tail, f"`{name}()` of {show_value(module)}: which module is imported (and its code run) "
                           "is known only at run time")
    if tail == "exec_module" and receiver is not None:
        return check("exec_module", f"`{name}()` runs the code of a module located at run time")
    if full in _UNPICKLE:
        return risky("deserialisation", f"`{name}()` can run arbitrary code when loading untrusted data")
    if full in _TORCH_LOAD:
        return _torch_load(node, name, risky, check)
    if full in ("yaml.unsafe_load", "yaml.load"):
        return _yaml_load(node, name, full, bindings, risky, check)
    if full in _SUBPROCESS:
        shell = keyword_value(node, "shell")
        if shell is None or (isinstance(shell, ast.Constant) and not shell.value):
            return None
        if isinstance(shell, ast.Constant):
            return risky("shell=True", f"`{name}(..., shell=True)` passes a string to the shell")
        return check("shell=", f"`{name}(..., shell=...)` with {show_value(shell)}: the command goes to the "
                               "shell when that is true at run time")
    if full in _SHELL:
        command = argument(node, 0, "cmd")
        if command is None or isinstance(command, ast.Constant):
            return risky("shell command", f"`{name}()` runs a shell command")
        return check("shell command", f"`{name}()` runs the shell command {show_value(command)} holds at "
                                      "run time")
    if full == "tempfile.mktemp":
        return risky("mktemp", f"`{name}()` is race-prone; `tempfile.mkstemp` is safe")
    if tail in ("load", "loads") and receiver is not None:
        owner = dotted(receiver)
        imported = owner is not None and owner.split(".", 1)[0] in bindings.aliases
        cls = _unpickler_of(receiver, bindings) if tail == "load" and not imported else None
        if cls:
            return check("deserialisation", f"`{name}()` unpickles through `{cls}`: arbitrary code "
                                            "from untrusted data unless its `find_class` restricts it")
        last = owner.rsplit(".", 1)[-1].lower() if owner else ""
        if owner and "pickle" in last and resolve(receiver, bindings.aliases) not in _PICKLE_MODULES:
            what = "unpickler" if "unpickler" in last else "module"
            return check("deserialisation", f"`{name}()` unpickles with the {what} `{owner}` holds at run "
                                            "time: arbitrary code from untrusted data")
    return None


_Found = Callable[[str, str], Finding]  # (label, detail) -> a finding of the call's line


def _torch_load(node: ast.Call, name: str, risky: _Found, check: _Found) -> Finding | None:
    """`torch.load`: risky when it unpickles arbitrary objects (`weights_only` false)."""
    weights_only = keyword_value(node, "weights_only")
    if weights_only is None or (isinstance(weights_only, ast.Constant) and weights_only.value is None):
        passes = " (unless `**` arguments pass it)" if any(k.arg is None for k in node.keywords) else ""
        return check("torch.load", f"`{name}()` leaves `weights_only` to its default{passes}: True from "
                                   "PyTorch 2.6, False before; when False it unpickles arbitrary objects")
    if isinstance(weights_only, ast.Constant):
        if weights_only.value:
            return None
        return risky("torch.load", f"`{name}(..., weights_only=False)` unpickles arbitrary objects")
    flag = dotted(weights_only)
    shown = f"`{name}(..., weights_only={flag})`" if flag else f"`{name}()` with `weights_only` computed"
    return check("torch.load", f"{shown}: unpickles arbitrary objects when that is false at run time")


def _yaml_load(node: ast.Call, name: str, full: str, bindings: _Bindings, risky: _Found,
               check: _Found) -> Finding | None:
    """`yaml.load` and `yaml.unsafe_load`: risky unless a safe loader builds the objects."""
    if full == "yaml.unsafe_load":
        return risky("yaml.load", f"`{name}()` can build arbitrary objects")
    loader = argument(node, 1, "Loader")
    if loader is None:
        return risky("yaml.load", f"`{name}()` without a Loader can build arbitrary objects "
                                  "(PyYAML before 5.1; 6.0 refuses the call)")
    text = dotted(loader) or ""
    loader_full = resolve(loader, bindings.aliases) or ""
    if "Safe" in text or text.rsplit(".", 1)[-1] == "BaseLoader":
        return None
    if loader_full.startswith("yaml.") or text in _YAML_UNSAFE_LOADERS:
        return risky("yaml.load", f"`{name}()` with `{text}` can build arbitrary objects")
    return check("yaml.load", f"`{name}()` with the Loader {show_value(loader)} holds at run time: "
                              "arbitrary objects unless it is a safe loader")


def call_findings(tree: ast.Module, imports: Iterable[Import], lines: list[int]) -> list[Finding]:
    """Risky calls, and calls to check, on or spanning `lines`, resolved through the file's
    imports (`from pickle import loads` counts)."""
    aliases = import_aliases(imports)
    bindings = _Bindings(tree, aliases)
    out: list[Finding] = []
    for node in nodes_around(tree, lines):
        if not isinstance(node, ast.Call):
            continue
        name = dotted(node.func)
        if name is not None:
            head, _, rest = name.partition(".")
            full = aliases.get(head, head) + ("." + rest if rest else "")
        elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
            inner = dotted(node.func.value.func)  # Unpickler(f).load()
            if inner is None:
                continue
            name, full = f"{inner}(...).{node.func.attr}", ""
        else:
            continue
        found = _security(node, name, full, bindings)
        if found is not None:
            out.append(found)
    return out


# Lines that may hold a risky call; the syntax tree is searched only around them:
# `\b(?:eval|exec|...|loads?)\s*\(|\b(?:pickle|...|torch)\.(?:loads?|open|Unpickler)\b|\bshell\s*=`, written as one
# alternative per first letter of the words, the boundary before a word checked once it is matched
# (`e(?:val(?<!\weval)\s*\(|xec(?<!\wexec)...)`): the same matches, but the regex engine tries the pattern only
# where one of those letters is, not at every character with a boundary test (Unicode character tables) per
# alternative (a sixth of `risky_lines`' instructions).
_RISKY_CALLS = ("eval", "exec", "exec_module", "__import__", "import_module", "system", "popen", "getoutput",
                "getstatusoutput", "mktemp", "unsafe_load", "Unpickler", "load")  # `load` and `loads`
_RISKY_MODULES = ("pickle", "cPickle", "dill", "marshal", "shelve", "yaml", "joblib", "torch")


def _risky_pattern() -> re.Pattern[str]:
    forms = [*((call, r"s?\s*\(" if call == "load" else r"\s*\(") for call in _RISKY_CALLS),
             *((module, r"\.(?:loads?|open|Unpickler)\b") for module in _RISKY_MODULES), ("shell", r"\s*=")]
    rests: dict[str, list[str]] = {}  # first letter -> what follows it in each form (no two match at one place)
    for word, after in forms:
        rests.setdefault(word[0], []).append(f"{word[1:]}(?<!\\w{word}){after}")
    return re.compile("|".join(f"{first}(?:{'|'.join(rest)})" for first, rest in rests.items()))


_RISKY_TEXT = _risky_pattern()


# Words one of which every _RISKY_TEXT match contains, at most _RISKY_LEAD characters
# after the match's start (`cPickle.` before `load`). Finding them with str.find and
# matching the pattern only around them is several times faster than a regex scan.
_RISKY_WORDS = ("eval", "exec", "__import__", "import_module", "system", "popen", "getoutput",
                "getstatusoutput", "mktemp", "load", "Unpickler", "open", "shell")
_RISKY_LEAD = 16
_RISKY_SPAN = 200  # how far past the word a match may end (spaces before `(` or `= True`)
# The words found by a scan of the text each (a scan of a whole file per word: three quarters of the time);
# the others are found by `risky_lines` from two scans: `open` (and `popen` where a `p` precedes it),
# `import_` (`__import__` and `import_module`, in both).
_RISKY_SCANNED = tuple(w for w in _RISKY_WORDS if w not in ("open", "popen", "__import__", "import_module"))


def risky_lines(text: str) -> list[int]:
    """Sorted line numbers (1-based) where the text looks like a risky call: every match of the pattern
    in a window around each place where one of `_RISKY_WORDS` is."""
    places: list[int] = []
    find = text.find
    for word in _RISKY_SCANNED:
        at = find(word)
        while at >= 0:
            places.append(at)
            at = find(word, at + 1)
    at = find("open")
    while at >= 0:
        places.append(at)
        if at and text[at - 1] == "p":  # `popen`
            places.append(at - 1)
        at = find("open", at + 1)
    at = find("import_")
    while at >= 0:
        if text.startswith("import_module", at):
            places.append(at)
        if at >= 2 and text.startswith("__import__", at - 2):
            places.append(at - 2)
        at = find("import_", at + 1)
    starts: set[int] = set()
    for at in places:
        for match in _RISKY_TEXT.finditer(text, max(0, at - _RISKY_LEAD), at + _RISKY_SPAN):
            starts.add(match.start())
    return line_numbers(text, starts)
