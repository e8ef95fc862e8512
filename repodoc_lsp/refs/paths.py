"""Links and file paths in docs: a relative link's file and Markdown heading, a path named in
code; nothing outside the workspace is looked at (symbolic links are followed only inside it)."""

from __future__ import annotations

import difflib
import os
import posixpath
import stat
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from repodoc_lsp.refs.extract import HISTORY, Ref, markdown_anchors
from repodoc_lsp.refs.model import Verdict

if TYPE_CHECKING:
    from repodoc_lsp.store.workspace import Workspace


def inside(root: Path, rel: str) -> Path | None:
    """`root / rel` (root resolved) with its symbolic links resolved, or None when a step of it
    leaves `root` (`..` above it, a link to outside): each component is looked at (lstat,
    readlink) only once the path to it is known to stay inside, so nothing outside is ever
    stat'ed or read. A missing component ends the walk: the rest is joined as written."""
    base = str(root)
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    current, links = base, 0
    while parts:
        part = parts.pop(0)
        if part == "..":
            if current == base:
                return None
            current = os.path.dirname(current)
            continue
        step = os.path.join(current, part)
        try:
            is_link = stat.S_ISLNK(os.lstat(step).st_mode)
        except OSError:  # missing (or not a folder): nothing further to follow
            rest = os.path.normpath(os.path.join(step, *parts))
            return Path(rest) if rest == base or rest.startswith(base + os.sep) else None
        if not is_link:
            current = step
            continue
        links += 1
        try:
            target = os.readlink(step)
        except OSError:
            return None
        if links > 40:
            return None  # a loop
        if os.path.isabs(target):
            if target != base and not target.startswith(base + os.sep):
                return None
            current, target = base, os.path.relpath(target, base)
        parts = [p for p in target.split(os.sep) if p not in ("", ".")] + parts
    return Path(current)



class Paths:
    """The link and path checks of one workspace (a Markdown file's anchors read once)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._anchors: dict[str, set[str]] = {}

    def link(self, ref: Ref, place: str) -> Verdict | None:
        path, _, anchor = ref.text.partition("#")
        path = unquote(path)
        target = posixpath.normpath(posixpath.join(posixpath.dirname(place), path)) if path else place
        if target.startswith("../") or target == "..":
            return None  # outside the workspace: not ours to judge
        full = inside(self.ws.root, target)
        if full is None:
            return None  # through a link out of the workspace: not ours to judge (nor to look at)
        if path and not full.exists():
            if not path.endswith("/") and (md := inside(self.ws.root, target + ".md")) is not None and md.exists():
                return None
            return Verdict(f"link `{ref.text}`: {target} does not exist", self._near_path(ref.text, target), sure=False)
        if anchor and full.is_file() and target.lower().endswith((".md", ".markdown")):
            anchors = self._anchors_of(full.relative_to(self.ws.root).as_posix())
            if anchor not in anchors and anchor.lower() not in anchors:
                # an anchor with capitals is an HTML id (heading slugs are lower case): ids first
                ids = sorted(a for a in anchors if a != a.lower()) if anchor != anchor.lower() else []
                near = (difflib.get_close_matches(anchor, ids, n=1, cutoff=0.6)
                        or difflib.get_close_matches(anchor.lower(), sorted(anchors), n=1, cutoff=0.6))
                return Verdict(f"link `{ref.text}`: no heading `#{anchor}` in {target}",
                               f"{ref.text.partition('#')[0]}#{near[0]}" if near else "", sure=False)
        return None

    def path(self, ref: Ref, place: str) -> Verdict | None:
        text = ref.text.removeprefix("./")
        here = posixpath.normpath(posixpath.join(posixpath.dirname(place), text))
        if text.startswith("../"):  # relative to the doc only
            if here.startswith("../") or HISTORY.search(here):
                return None  # outside the workspace: not ours to judge
            text = here
        root = self.ws.root
        first, as_written, beside = inside(root, text.split("/", 1)[0]), inside(root, text), inside(root, here)
        if first is None or as_written is None or beside is None:
            return None  # through a link out of the workspace: not ours to judge (nor to look at)
        if not first.is_dir() or HISTORY.search(text):
            return None  # a path of some other tree (the reader's project, a URL path)
        if as_written.exists() or beside.exists():
            return None
        folder = inside(root, posixpath.dirname(text))
        if folder is None or not folder.is_dir():
            return None  # a folder the workspace does not have (`torch/csrc/...` of a wheel): another tree
        return Verdict(f"`{ref.text}` does not exist in the workspace", self._near_path(ref.text, text), sure=False)

    def _near_path(self, written: str, target: str) -> str:
        base = posixpath.basename(target)
        same = [r for r in self.ws.digests if posixpath.basename(r) == base]
        pool = same or list(self.ws.digests)
        near = difflib.get_close_matches(target, pool, n=1, cutoff=0.6)
        if not near:
            return ""
        _, hash_, anchor = written.partition("#")
        return near[0] + (f"#{anchor}" if hash_ else "")

    def _anchors_of(self, rel: str) -> set[str]:
        if rel not in self._anchors:
            self._anchors[rel] = markdown_anchors(self.ws.read_text(rel) or "")
        return self._anchors[rel]

