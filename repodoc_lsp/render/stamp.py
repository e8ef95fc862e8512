"""A digest of how pages are rendered: the built-in templates and the code that fills them."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

_RENDER = Path(__file__).resolve().parent
_WORDS = _RENDER.parent / "words.py"  # the counts and nouns pages write (`plural`)
_ANCHOR_STATE = _RENDER.parent / "anchor_state.py"  # which recorded anchors a page writes as aliases


@functools.cache
def render_stamp() -> str:
    """Changes whenever a built-in template or a rendering module changes, so a page key that
    includes it makes pages written by another renderer (same version number) be rewritten."""
    digest = hashlib.sha256()
    # In a fixed order that does not depend on where the package lies (a sort of whole paths put
    # words.py first or last depending on the folder of a copy).
    for path in [*sorted(_RENDER.glob("*.py")), *sorted((_RENDER / "templates").glob("*.j2")), _WORDS,
                 _ANCHOR_STATE]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
