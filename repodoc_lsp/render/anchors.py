"""Rename-safe pages: the anchor of a renamed class, function or method stays as an alias.

A file page anchors each definition (`class-Widget`, `method-Widget.draw`); other pages, READMEs
and bookmarks link to them. The manifest keeps, per file page, an `AnchorState`: the digest of
the source the page was rendered from, the body digest (`Symbol.body`: the definition's source
with its own name blanked) of each anchored definition, and the aliases the page holds. When the
page is rendered again (`aliases`):

- from the same source: the aliases it holds are kept (those whose new anchor is still defined
  and whose old one is still free);
- from a changed source: they are dropped, and each recorded anchor that is gone gets one if
  exactly one anchor that is new has its body digest and no other gone anchor has it (a unique
  match: `renamed`), unless the new anchor is the alias the page holds beside the gone one: a
  rename undone (Widget -> Gadget saved, then Gadget -> Widget) leaves the page as a fresh
  generation writes it, with no alias for a name only the undone rename had.

So an alias lives while the file is as it was when the rename was seen: pages rewritten because
other files changed keep it, the file's next change drops it. A fresh generation has no history:
the kept tree equals it once `strip_aliases` removes the aliases the manifest records. An alias
is written right after the anchor it names, `<a id="class-Gadget"></a><a id="class-Widget"></a>`.

The manifest is data from disk: a state is used only if every anchor in it is one that analysis
could have made (`is_anchor`: a kind, then identifiers joined by dots, then maybe `-2`...), so no
markup can come from it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from repodoc_lsp.analysis.model import FileFacts, SymbolKind

KINDS = frozenset((SymbolKind.CLASS, SymbolKind.FUNCTION, SymbolKind.METHOD))
_PREFIXES = frozenset(k.value for k in KINDS)
_DIGEST = re.compile(r"[0-9a-f]{1,64}\Z")
MAX_ANCHOR = 1000  # characters; longer is not an anchor analysis made


@dataclass(frozen=True, slots=True)
class AnchorState:
    """What the manifest keeps of a file page's anchors (see the module's docstring)."""

    src: str  # digest of the source the page was rendered from
    # each definition's anchor and body digest, packed: `class-A:1f2e3d4c method-A.f:...` (one
    # string per page: definitions as JSON objects made reading a large manifest several times
    # as slow, bench/README.md; read with `definitions()` when the page is rendered from a new source)
    defs: str = ""
    aliases: dict[str, str] = field(default_factory=dict)  # old anchor -> the anchor it is written beside

    def definitions(self) -> dict[str, str]:
        """Anchor -> body digest; an item of another form (a forged manifest) is left out."""
        found = {}
        for item in self.defs.split(" "):
            anchor, _, digest = item.partition(":")
            if _DIGEST.match(digest) and is_anchor(anchor):
                found[anchor] = digest
        return found

    def as_json(self) -> dict:
        found: dict = {"src": self.src, "defs": self.defs}
        if self.aliases:
            found["aliases"] = dict(sorted(self.aliases.items()))
        return found


def pack(defs: Mapping[str, str]) -> str:
    """Anchor -> body digest as `AnchorState.defs`."""
    return " ".join(f"{anchor}:{digest}" for anchor, digest in sorted(defs.items()))


def is_anchor(text: object) -> bool:
    """True when `text` is an anchor analysis gives a class, function or method:
    `kind-qualname` or `kind-qualname-N` (N from 2), the qualname Python identifiers joined by dots."""
    if not isinstance(text, str) or len(text) > MAX_ANCHOR:
        return False
    kind, _, rest = text.partition("-")
    qualname, dash, n = rest.partition("-")
    if kind not in _PREFIXES or (dash and not (n.isascii() and n.isdigit() and n[0] != "0" and n != "1")):
        return False
    return all(part.isidentifier() for part in qualname.split("."))


def state_from_json(value: object) -> AnchorState | None:
    """A manifest's entry as an `AnchorState`; None when anything in it has another form (a
    digest that is not hex, an alias that is not an anchor analysis could have made, two aliases
    beside one anchor, an alias that is one of the anchors beside which aliases go). The packed
    definitions are checked item by item when they are read (`AnchorState.definitions`)."""
    if not isinstance(value, dict) or not value.keys() <= {"src", "defs", "aliases"}:
        return None
    src, defs, aliases = value.get("src"), value.get("defs", ""), value.get("aliases", {})
    if not (isinstance(src, str) and _DIGEST.match(src) and isinstance(defs, str) and isinstance(aliases, dict)):
        return None
    if not all(is_anchor(old) and is_anchor(new) for old, new in aliases.items()):
        return None
    if len(set(aliases.values())) != len(aliases) or aliases.keys() & set(aliases.values()):
        return None
    return AnchorState(src, defs, dict(aliases))


def definitions(facts: FileFacts) -> dict[str, str]:
    """Anchor -> body digest of the classes, functions and methods of a file (those with one:
    a file that does not parse has none)."""
    return {s.anchor: s.body for s in facts.symbols if s.kind in KINDS and s.body}


def renamed(before: Mapping[str, str], now: Mapping[str, str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Old anchor -> new anchor for each definition of `before` (anchor -> body digest) that is
    gone from `now` while exactly one anchor new in `now` has its digest, and no other gone one
    does; an old anchor in `taken` (still on the page) is left out."""
    gone = {a: h for a, h in before.items() if a not in now}
    new: dict[str, list[str]] = {}
    for a, h in now.items():
        if a not in before:
            new.setdefault(h, []).append(a)
    twice = Counter(gone.values())
    taken = set(taken)
    return {old: new[h][0] for old, h in sorted(gone.items())
            if twice[h] == 1 and len(new.get(h, ())) == 1 and old not in taken}


def aliases(before: AnchorState | None, src: str, facts: FileFacts) -> dict[str, str]:
    """The aliases (old anchor -> new anchor) a file page of `facts` (source digest `src`) holds,
    given the state recorded when it was last written (None: no history, no alias)."""
    if before is None:
        return {}
    taken = {s.anchor for s in facts.symbols}
    now = definitions(facts)
    if before.src != src:
        # A rename back to a name the page holds as an alias (an undo: Widget -> Gadget, saved, then
        # Gadget -> Widget) leaves no alias for the name it leaves: only that rename made it.
        return {old: new for old, new in renamed(before.definitions(), now, taken).items()
                if before.aliases.get(new) != old}
    kept: dict[str, str] = {}
    for old, new in sorted(before.aliases.items()):
        if new in now and old not in taken and new not in kept.values():
            kept[old] = new
    return kept


def alias_markup(aliases: Mapping[str, str]) -> dict[str, str]:
    """New anchor -> what the page writes right after it: `<a id="OLD"></a>`."""
    return {new: f'<a id="{old}"></a>' for old, new in aliases.items() if is_anchor(old)}


def strip_aliases(text: str, aliases: Mapping[str, str]) -> str:
    """A page as it is without the aliases `aliases` (old -> new, as the manifest records them):
    each `<a id="NEW"></a><a id="OLD"></a>` that opens a line (of a list item too) outside code
    blocks loses its second anchor, once per alias. Nothing else changes."""
    if not aliases:
        return text
    from markdown_it import MarkdownIt  # read back only where a page carries aliases (and in tests)

    lines = text.split("\n")
    code: set[int] = set()
    for token in MarkdownIt("commonmark").parse(text):
        if token.type in ("fence", "code_block") and token.map:
            code.update(range(*token.map))
    pairs = {f'<a id="{new}"></a><a id="{old}"></a>': f'<a id="{new}"></a>' for old, new in aliases.items()}
    for i, line in enumerate(lines):
        if i in code:
            continue
        head = line.lstrip(" ")
        head = head[2:] if head.startswith("- ") else head
        for pair, anchor in pairs.items():
            if head.startswith(pair):
                lines[i] = line.replace(pair, anchor, 1)
                del pairs[pair]
                break
        if not pairs:
            break
    return "\n".join(lines)
