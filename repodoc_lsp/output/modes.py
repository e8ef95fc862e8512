"""File modes: a page gets the mode of a new file (0666 less the umask), and a source that the
page would show to more people than the source itself is skipped (README "Trust")."""

from __future__ import annotations

import os
import stat


def _umask() -> int:
    """The process umask, read without changing it where the system says it (threads may run)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # pragma: no cover - no /proc
    os.umask(mask)
    return mask


PAGE_MODE = 0o666 & ~_umask()


def wider_reason(st_mode: int) -> str:
    """Why pages of a source of mode `st_mode` would widen who can read it ("" when they would not)."""
    source = stat.S_IMODE(st_mode)
    wider = PAGE_MODE & ~source & 0o044
    if not wider:
        return ""
    who = " and ".join(name for bit, name in ((0o040, "its group"), (0o004, "others")) if wider & bit)
    return f"private (mode {source:04o}; pages of mode {PAGE_MODE:04o} would let {who} read it)"
