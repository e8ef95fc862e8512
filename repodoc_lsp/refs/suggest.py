"""Suggestions: a name near enough to a stale one to be offered for it, as a typo's fix is."""

from __future__ import annotations

import difflib

CONFIDENT = 0.8  # how close a name must be to another to be suggested for it
ROLE_KINDS = {  # the kinds of definition a role names (suggestions keep to them)
    **dict.fromkeys(("meth", "method", "func", "function"), frozenset({"method", "function"})),
    **dict.fromkeys(("attr", "attribute", "data", "const"), frozenset({"attribute"})),
    **dict.fromkeys(("class", "exc", "exception"), frozenset({"class"})),
}


def confident(name: str, names: dict[str, str], cutoff: float = CONFIDENT, kinds: frozenset[str] = frozenset()) -> str:
    """A name of `names` (name -> kind) near enough to `name` to be suggested for it, as a typo's fix
    is: one edit away (`namedtuple_dict_structure_factory` is not its `unstructure` twin), of the kind its spelling says
    (a CamelCase name for a class, a lower-case one for anything else), as public or private as it,
    of the kind its role says (`kinds`, when known), a slip of the keys (`_typo`), and no other as near.
    A rename is not guessed (`from_pyfile` is not `from_file`): `--since` takes renames from git."""
    public = name.lstrip("_")
    pool = sorted(n for n, kind in names.items() if n.lstrip("_")[:1].isupper() == public[:1].isupper()
                  and n.startswith("_") == name.startswith("_") and n != name  # not a private twin
                  and (not kinds or not kind or kind in kinds))
    near = [n for n in difflib.get_close_matches(name, pool, n=5, cutoff=cutoff) if _edits(name, n) <= 1]
    return near[0] if len(near) == 1 and _typo(name, near[0]) else ""


def _typo(written: str, meant: str) -> bool:
    """Whether `written` reads as a slip of the keys for `meant`: the same first letter, and no capital
    letter in what differs (the capitals of `TLRUCache` and `MRUCache` make other classes than
    `LRUCache`; `ContentSecuirtyPolicy` is a typo)."""
    if written[:1] != meant[:1]:
        return False
    ops = difflib.SequenceMatcher(None, written, meant, autojunk=False).get_opcodes()
    return not any(c.isupper() for tag, i1, i2, j1, j2 in ops if tag != "equal"
                   for c in written[i1:i2] + meant[j1:j2])


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions; a swap of neighbours is one)."""
    if abs(len(a) - len(b)) > 2:
        return 3
    before: list[int] | None = None
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + (ca != cb))
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[-1]

