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

The state, and the check of one read from the manifest (data from disk), are `anchor_state.py`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.anchor_state import KINDS, AnchorState, is_anchor


def pack(defs: Mapping[str, str]) -> str:
    """Anchor -> body digest as `AnchorState.defs`."""
    return " ".join(f"{anchor}:{digest}" for anchor, digest in sorted(defs.items()))


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
    each `<a id="NEW"></a><a id="OLD"></a>` outside code blocks loses its second anchor, once per
    alias, where a line opens with it (an entry's heading, a list item) or inside a line (the
    members of a local class's line). Nothing else changes."""
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
        if i in code or "<a id=" not in line:
            continue
        for pair in [pair for pair in pairs if pair in line]:
            line = line.replace(pair, pairs.pop(pair), 1)
        lines[i] = line
        if not pairs:
            break
    return "\n".join(lines)
