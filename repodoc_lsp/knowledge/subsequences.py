"""The keyword index's prefilter for its subsequence rank (`fsdp` in `FullyShardedDataParallel`): names
kept in slots by length, with per length and key an int whose bits are the slots holding it, so that the
candidates for a query are the AND of a few ints and only they meet the regex."""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left
from collections.abc import Container, Iterable, Mapping, Sized
from dataclasses import dataclass
from typing import Any


def subsequence_pattern(q: str) -> str:
    """A pattern for `q`'s characters in order within one line of the blob. Each gap excludes
    the character that ends it (`r[^\\ne]*e[^\\nl]*l...`), so the engine never backtracks,
    and it skips ahead to the first character in C: 2 to 4x faster than lazy `.*?` gaps."""
    q = q.replace("\n", "")  # names never span lines of the blob
    parts = [re.escape(q[0])]
    for c in q[1:]:
        parts.append(f"[^\\n{re.escape(c)}]*{re.escape(c)}")
    return "".join(parts)


_FLAGS = bytes.maketrans(b"01", b"\x00\x01")
_NONZERO = re.compile(rb"[^\x00]")
_REPEATS = 3  # a character held this many times at most has a table of its own


def keys_of(name: str) -> set[str]:
    """The prefilter's keys of a name: each character, and `cc`, `ccc` for a character it holds
    twice, three times or more. A name holds a query as a subsequence only if it has every key
    of the query: `dataload` (three a's, two d's) keeps a few of the names holding d, a, t, l
    and o."""
    keys = set(name)
    if len(keys) < len(name):
        counts: dict[str, int] = {}
        for c in name:
            counts[c] = counts.get(c, 0) + 1
        keys.update(c * k for c, n in counts.items() for k in range(2, min(n, _REPEATS) + 1))
    return keys


def selected(slots: tuple[str, ...], candidates: int) -> list[str]:
    """The names in the slots whose bits are set, in slot order. Many: every slot's bit as a byte
    (0 or 1), the slots selected in C; few (most queries: under an eighth of the slots), only the
    nonzero bytes of the int are visited (selecting a few slots name by name took milliseconds)."""
    if candidates.bit_count() * 8 > len(slots):
        return list(itertools.compress(slots, bin(candidates)[:1:-1].encode().translate(_FLAGS)))
    data = candidates.to_bytes((candidates.bit_length() + 7) // 8, "little")
    names = []
    for m in _NONZERO.finditer(data):
        at = m.start()
        byte = data[at]
        while byte:
            low = byte & -byte
            names.append(slots[at * 8 + low.bit_length() - 1])
            byte ^= low
    return names


def bits_of(slots: list[int]) -> int:
    """An int with these bits set."""
    if len(slots) < 8:
        return sum(1 << s for s in set(slots))
    table = bytearray((max(slots) >> 3) + 1)
    for s in slots:
        table[s >> 3] |= 1 << (s & 7)
    return int.from_bytes(table, "little")


class Subsequences:
    """The prefilter of the subsequence rank. Names are kept by length, each in a slot of its
    length until it is removed; per length and key (`_keys`: a character, or one held two or
    three times), an int whose bit `slot` is set when that slot's name has the key. A name holds
    a query as a subsequence only if it has each of its keys: the candidates among the names of
    one length are the AND of a few ints (in C), and only they meet the regex. Updated in place from the names added or
    removed since the last snapshot (after a save, a few ints); a view for a snapshot copies
    only the tables of the lengths that changed."""

    def __init__(self) -> None:
        self._slots: dict[int, list[str]] = {}  # length -> the name in each slot ("" when free)
        self._free: dict[int, list[int]] = {}
        self._slot_of: dict[str, int] = {}
        self._bits: dict[int, dict[str, int]] = {}  # length -> character -> slots holding it
        self._views: dict[int, tuple[tuple[str, ...], dict[str, int]]] = {}

    def update(self, changed: Iterable[str], present: Container[str]) -> None:
        """Add the names of `changed` that are in `present`, drop the others."""
        off: dict[int, dict[str, list[int]]] = {}
        on: dict[int, dict[str, list[int]]] = {}
        added = []
        for name in changed:
            if name in present:
                if name not in self._slot_of:
                    added.append(name)
                continue
            slot = self._slot_of.pop(name, None)
            if slot is None:
                continue
            n = len(name)
            self._slots[n][slot] = ""
            self._free.setdefault(n, []).append(slot)
            chars = off.setdefault(n, {})
            for c in keys_of(name):
                chars.setdefault(c, []).append(slot)
        for name in added:
            n = len(name)
            slots = self._slots.setdefault(n, [])
            free = self._free.get(n)
            if free:
                slot = free.pop()
                slots[slot] = name
            else:
                slot = len(slots)
                slots.append(name)
            self._slot_of[name] = slot
            chars = on.setdefault(n, {})
            for c in keys_of(name):
                if c in chars:
                    chars[c].append(slot)
                else:
                    chars[c] = [slot]
        for n, chars in off.items():
            bits = self._bits[n]
            for c, cleared in chars.items():
                left = bits[c] & ~bits_of(cleared)
                if left:
                    bits[c] = left
                else:
                    del bits[c]
            self._views.pop(n, None)
        for n, chars in on.items():
            bits = self._bits.setdefault(n, {})
            for c, slots_on in chars.items():
                bits[c] = bits.get(c, 0) | bits_of(slots_on)
            self._views.pop(n, None)

    def state(self, number: Mapping[str, int]) -> dict[str, Any]:
        """The tables as data (JSON's types): per length, each slot's name as its `number` (-1: free),
        the free slots in their order and each key's slots as a hexadecimal int."""
        return {str(n): {"slots": [number[name] if name else -1 for name in slots], "free": self._free.get(n, []),
                         "bits": {c: format(v, "x") for c, v in self._bits[n].items()}}
                for n, slots in self._slots.items()}

    @classmethod
    def from_state(cls, state: dict[str, Any], names: list[str]) -> Subsequences:
        """The tables `state` gives (`names`: the names by number); a ValueError when they do not hold
        each of `names` once, in a slot of its length."""
        made = cls()
        for length, table in state.items():
            n = int(length)
            slots = made._slots[n] = [names[i] if i >= 0 else "" for i in table["slots"]]
            made._free[n] = [int(i) for i in table["free"]]
            bits = made._bits[n] = {str(c): int(v, 16) for c, v in table["bits"].items()}
            if any(len(name) != n for name in slots if name) or sorted(made._free[n]) != \
                    [i for i, name in enumerate(slots) if not name] or \
                    any(v.bit_length() > len(slots) for v in bits.values()):
                raise ValueError(f"subsequences: the slots of length {n} do not match")
            made._slot_of.update((name, i) for i, name in enumerate(slots) if name)
        if len(made._slot_of) != len(names) or sum(len(s) - len(made._free[n]) for n, s in made._slots.items()) \
                != len(names):
            raise ValueError("subsequences: not every name has a slot")
        return made

    def view(self) -> SubsequenceView:
        for n, slots in self._slots.items():
            if n not in self._views:
                self._views[n] = (tuple(slots), dict(self._bits[n]))
        return SubsequenceView(dict(self._views), sorted(n for n, (_, bits) in self._views.items() if bits))


@dataclass(frozen=True, slots=True)
class SubsequenceView:
    by_length: dict[int, tuple[tuple[str, ...], dict[str, int]]]  # the name in each slot, the slots of each character
    lengths: list[int]  # sorted, of lengths with names

    def search(self, q: str, by_lower: Mapping[str, Sized], taken: set[str], wanted: int) -> list[str]:
        """Names holding `q` as a subsequence, not in `taken`, shortest first, length by length
        until their entries number at least `wanted` (the part of a rank sorted by length and
        name that the results show is then complete)."""
        q = q.replace("\n", "")  # names never hold a newline
        chars = keys_of(q)
        pattern = re.compile(subsequence_pattern(q))
        found: list[str] = []
        seen: set[str] = set()
        count = 0
        for n in self.lengths[bisect_left(self.lengths, len(q)):]:
            slots, bits = self.by_length[n]
            candidates = -1
            for c in chars:
                candidates &= bits.get(c, 0)
                if not candidates:
                    break
            if not candidates:
                continue
            names = selected(slots, candidates)
            text = "\n".join(names)
            for m in pattern.finditer(text):
                name = names[m.start() // (n + 1)]
                if name not in taken and name not in seen:
                    seen.add(name)
                    found.append(name)
                    count += len(by_lower[name])
            if count >= wanted:
                break
        return found
