"""What the manifest keeps of a file page's anchors, shared by the two sides that use it:
`render/anchors.py` makes it (and reads it for rename aliases), `output/manifest.py` stores it.
The manifest is data from disk: a state is used only if every anchor in it is one that analysis
could have made (`is_anchor`: a kind, then identifiers joined by dots, then maybe `-2`...), so no
markup can come from it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from repodoc_lsp.analysis.model import SymbolKind

KINDS = frozenset((SymbolKind.CLASS, SymbolKind.FUNCTION, SymbolKind.METHOD))
_PREFIXES = frozenset(k.value for k in KINDS)
_DIGEST = re.compile(r"[0-9a-f]{1,64}\Z")
MAX_ANCHOR = 1000  # characters; longer is not an anchor analysis made


@dataclass(frozen=True, slots=True)
class AnchorState:
    """What the manifest keeps of a file page's anchors (`render/anchors.py` says how it is used)."""

    src: str  # digest of the source the page was rendered from
    # each definition's anchor and body digest, packed: `class-A:1f2e3d4c method-A.f:...` (one
    # string per page: a JSON object per definition made reading a large manifest take 10 times as
    # long; read with `definitions()` when the page is rendered from a new source)
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
    if not isinstance(value, dict) or not value.keys() <= _KEYS:
        return None
    src, defs, aliases = value.get("src"), value.get("defs", ""), value.get("aliases", _NONE)
    if not (isinstance(src, str) and _DIGEST.match(src) and isinstance(defs, str) and isinstance(aliases, dict)):
        return None
    if aliases and (not all(is_anchor(old) and is_anchor(new) for old, new in aliases.items())
                    or len(set(aliases.values())) != len(aliases) or aliases.keys() & set(aliases.values())):
        return None  # (checked only when there are aliases: most pages have none, and a manifest holds thousands)
    return AnchorState(src, defs, dict(aliases))


_KEYS = frozenset({"src", "defs", "aliases"})
_NONE: dict[str, str] = {}  # (read only)
