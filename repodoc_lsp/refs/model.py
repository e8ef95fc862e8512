"""What a reference resolved to: a name found in a module or on a class, and a stale verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from repodoc_lsp.knowledge.index import Entry

NAME, LINK, PATH = "name", "link", "path"  # what a reference is

# what a name is, looked up in a module's namespace or on a class
MODULE_, CLASS_, OTHER_, UNKNOWN_ = "module", "class", "other", "unknown"


@dataclass(frozen=True, slots=True)
class Found:
    """A name found: a workspace module or class (followed further), something else defined
    (a function, a variable, an external name: not followed) or something not decidable."""

    kind: str
    rel: str = ""
    qual: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why a reference is stale, and the replacement for its text when there is one."""

    message: str
    suggestion: str = ""
    about: str = ""  # the workspace file the name was looked up in (for --since)
    sure: bool = True  # the suggestion is a rename seen in git or a close name of the same kind
    member: bool = False  # a class lacks the name (not a module)


class NameLookup(Protocol):
    """What resolution asks of the workspace's definitions by name (the server's keyword index
    answers it; a check on the command line builds the lighter `scope.NameTable`)."""

    def lookup(self, name: str) -> list[Entry]: ...

    def file_entries(self, rel: str) -> list[Entry]: ...


@dataclass(frozen=True, slots=True)
class Ref:
    """One reference as written. `line` is 1-based and `col` 0-based (code points) in the text
    given; `text` is the span to replace (the target as written); `explicit`: a role, an
    autodoc directive or a link, not just code-looking text; `module`: reST's current module."""

    kind: str
    text: str
    line: int
    col: int
    explicit: bool = False
    role: str = ""
    module: str = ""
    cls: str = ""  # the class whose description a reST line is in (Sphinx's `py:class` context)
