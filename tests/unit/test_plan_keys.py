"""Pages the manifest does not know are planned without their key: the render that gathers their
inputs keys them, with the key planning would have given (a cold run gathers each page once)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import make_workspace

from repodoc_lsp.config import Settings
from repodoc_lsp.pipeline.generate import page_renderer, plan_pages, site_of
from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.store.workspace import Workspace

FILES = {"pkg/__init__.py": "from .core import Base\n",
         "pkg/core.py": '"""Core."""\n\nclass Base:\n    """A base."""\n\n    def run(self):\n        return 1\n',
         "pkg/use.py": "from pkg import Base\n\n\nclass Child(Base):\n    pass\n",
         "tests/test_core.py": "from pkg.core import Base\n\n\ndef test_base():\n    assert Base().run()\n"}


def test_unrecorded_pages_are_keyed_by_their_render_as_planning_would(tmp_path: Path) -> None:
    ws = Workspace(make_workspace(tmp_path / "ws", FILES), Settings(), use_cache=False)
    ws.scan(jobs=1)
    site = site_of(ws)
    keyed = plan_pages(ws, site)
    assert all(p.key for p in keyed)
    recorded = {keyed[0].path}
    unkeyed = plan_pages(ws, site, recorded=recorded)
    assert [(p.kind, p.subject) for p in unkeyed] == [(p.kind, p.subject) for p in keyed]
    assert [p.key for p in unkeyed] == [keyed[0].key] + [""] * (len(keyed) - 1)
    render = page_renderer(ws, Renderer(), site)
    for planned, bare in zip(keyed, unkeyed, strict=True):
        assert render(bare) == render(planned)
        assert render(bare)[1] == planned.key, planned.path


def test_a_key_is_of_the_inputs_values_not_of_what_they_share_or_intern() -> None:
    import pickle
    import sys

    from repodoc_lsp.pipeline.keys import keyed
    from repodoc_lsp.render.pages import Page

    name = sys.intern("pkg/core.py")
    users = [(name, 3)]
    held = {"importers": [name, name], "xref": {"class-Base": {"users": users, "again": users}}, "digest": None}
    built = {"importers": ["pkg/" + "core.py", "".join(["pkg/", "core.py"])],
             "xref": {"class-Base": {"users": [("pkg/" + "core.py", 3)], "again": [("pkg/core" + ".py", 3)]}},
             "digest": None}
    page = Page("docs", "pkg/core.py", "")
    key = keyed(page, "base", held).key
    assert keyed(page, "base", built).key == key
    assert keyed(page, "base", pickle.loads(pickle.dumps(held))).key == key  # as a render worker gets them
    assert keyed(page, "other", held).key != key
    assert keyed(Page("kw", "pkg/core.py", ""), "base", held).key != key
    assert keyed(page, "base", {**held, "digest": "0"}).key != key
    assert keyed(page, "base", {**held, "importers": (name, name)}).key != key  # a tuple is not a list


def test_a_key_refuses_inputs_that_are_not_plain_data() -> None:
    # the repr of an object may hold its address, or leave out what differs: such a key would not
    # be the same in the next run, or the same for other inputs
    from collections import namedtuple

    from repodoc_lsp.pipeline.keys import keyed
    from repodoc_lsp.render.pages import Page

    page = Page("docs", "pkg/core.py", "")
    for odd in (object(), namedtuple("Link", "rel")("pkg/core.py"), Path("pkg/core.py")):
        with pytest.raises(ValueError):
            keyed(page, "base", {"links": [odd]})
