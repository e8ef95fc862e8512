"""Rename-safe anchors (`render/anchors.py`): body digests, the unique-match rule, how long an
alias lives, the manifest's entries taken as untrusted data, and stripping exactly the aliases."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from helpers import read_manifest, write_manifest

from repodoc_lsp.analysis.python import analyse_python
from repodoc_lsp.anchor_state import AnchorState, is_anchor, state_from_json
from repodoc_lsp.output.writer import Writer
from repodoc_lsp.render.anchors import aliases, definitions, pack, renamed, strip_aliases

WIDGET = 'import os\n\n\nclass Widget(Base):\n    """Draws."""\n\n    def draw(self, n):\n        return n + 1\n'


def _bodies(source: str) -> dict[str, str]:
    return definitions(analyse_python(source))


def test_the_same_body_under_another_name_has_the_same_digest() -> None:
    before = _bodies(WIDGET + "\n\ndef helper(): return 2\n")
    # renamed, moved down two lines, the file's other lines changed: the digests follow the bodies
    after = _bodies("import sys\n\n\n\n\n" + WIDGET.replace("Widget", "Gadget").replace("import os\n", "")
                    + "\n\ndef assist(): return 2\n")
    assert before["class-Widget"] == after["class-Gadget"]
    assert before["method-Widget.draw"] == after["method-Gadget.draw"]
    assert before["function-helper"] == after["function-assist"]  # one line: the name is blanked in place
    changed = _bodies(WIDGET.replace("n + 1", "n + 2"))
    assert changed["class-Widget"] != before["class-Widget"]
    assert changed["method-Widget.draw"] != before["method-Widget.draw"]
    assert _bodies(WIDGET.replace("(Base)", "(Other)"))["class-Widget"] != before["class-Widget"]
    # a file that does not parse has no digests (its symbols come from parso's recovery)
    assert _bodies(WIDGET + "def broken(:\n") == {}


def test_a_rename_is_a_unique_match() -> None:
    assert renamed({"class-A": "1", "function-f": "2"}, {"class-B": "1", "function-f": "2"}) == {"class-A": "class-B"}
    # two new definitions with that body, or two gone: which one it became is not known
    assert renamed({"class-A": "1"}, {"class-B": "1", "class-C": "1"}) == {}
    assert renamed({"class-A": "1", "class-Z": "1"}, {"class-B": "1"}) == {}
    # an unchanged definition with the same body does not make it ambiguous; a changed body is no rename
    assert renamed({"class-A": "1", "class-K": "1"}, {"class-B": "1", "class-K": "1"}) == {"class-A": "class-B"}
    assert renamed({"class-A": "1"}, {"class-B": "2"}) == {}
    # an old anchor still on the page (a symbol without a digest) is not written twice
    assert renamed({"class-A": "1"}, {"class-B": "1"}, taken={"class-A"}) == {}


def test_an_alias_lives_while_the_file_is_as_it_was_when_the_rename_was_seen() -> None:
    old = analyse_python(WIDGET)
    new_source = WIDGET.replace("Widget", "Gadget")
    new = analyse_python(new_source)
    assert aliases(None, "d1", new) == {}  # no history: a fresh generation
    seen = aliases(AnchorState("d0", pack(definitions(old))), "d1", new)
    assert seen == {"class-Widget": "class-Gadget", "method-Widget.draw": "method-Gadget.draw"}
    held = AnchorState("d1", pack(definitions(new)), seen)
    assert aliases(held, "d1", new) == seen  # the page rewritten for another file's sake keeps them
    edited = analyse_python(new_source + "\nx = 1\n")
    assert aliases(held, "d2", edited) == {}  # the file's next change drops them
    # a held alias whose anchor is defined again, or whose new anchor is gone, is dropped
    back = analyse_python(WIDGET + "\n\n" + new_source.replace("import os\n", ""))
    assert aliases(AnchorState("d3", pack(definitions(back)), seen), "d3", back) == {}


def test_a_rename_undone_leaves_no_alias() -> None:
    """Widget -> Gadget saved, then Gadget -> Widget: no alias for Gadget, a name only the undone
    rename had (the page is what a fresh generation writes); a rename onward (Gadget -> Thing) keeps one."""
    old = analyse_python(WIDGET)
    new = analyse_python(WIDGET.replace("Widget", "Gadget"))
    seen = aliases(AnchorState("d0", pack(definitions(old))), "d1", new)
    held = AnchorState("d1", pack(definitions(new)), seen)
    assert aliases(held, "d0", old) == {}
    onward = analyse_python(WIDGET.replace("Widget", "Thing"))
    assert aliases(held, "d2", onward) == {"class-Gadget": "class-Thing", "method-Gadget.draw": "method-Thing.draw"}


def test_anchors_and_entries_from_the_manifest_are_checked() -> None:
    assert is_anchor("class-Widget") and is_anchor("method-Widget.draw") and is_anchor("function-f-2")
    assert is_anchor("class-Größe")
    for forged in ('class-X"><script>alert(1)</script>', "class-X y", "class-", "heading-x", "attr-x",
                   "class-X-1", "class-X-02", "class-X-٣", "class-1X", "class-X..y", "x" * 2000, 7, None):
        assert not is_anchor(forged), forged
    good = {"src": "ab12", "defs": "class-B:00ff method-B.f:0a", "aliases": {"class-A": "class-B"}}
    state = state_from_json(good)
    assert state == AnchorState("ab12", "class-B:00ff method-B.f:0a", {"class-A": "class-B"})
    assert state_from_json(state.as_json()) == state
    assert state.definitions() == {"class-B": "00ff", "method-B.f": "0a"}
    for bad in (
        {**good, "aliases": {'class-A"><img src=x onerror=alert(1)>': "class-B"}},  # markup
        {**good, "aliases": {"class-A": 'class-B"><b>'}},
        {**good, "aliases": {"class-A": "class-B", "class-Z": "class-B"}},  # two beside one
        {**good, "aliases": {"class-A": "class-B", "class-B": "class-C"}},  # a chain
        {**good, "src": "not hex"}, {**good, "src": 3}, {**good, "defs": {"class-B": "00ff"}},
        {**good, "aliases": []}, {**good, "extra": 1}, [good], "x",
    ):
        assert state_from_json(bad) is None, bad
    # packed definitions are read item by item: what analysis could not have made is left out
    forged = AnchorState("ab", 'class-B:00ff class-"><i>:01 method-B.g:xyz  :: class-C:')
    assert forged.definitions() == {"class-B": "00ff"}


def test_a_forged_manifest_entry_is_dropped_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    page = "m.py_docs.md"
    (tmp_path / page).write_text("page\n")
    good = {"src": "ab", "defs": "class-B:01", "aliases": {"class-A": "class-B"}}
    forged = {**good, "aliases": {'class-A"><script>': "class-B"}}
    digest = "d" * 32
    table = {"pages": {page: ["k", 5, 1, digest], "n.py_docs.md": ["k", 5, 1, digest]},
             "anchors": {page: forged, "n.py_docs.md": good, "gone.py_docs.md": good}}
    write_manifest(tmp_path, table)
    with caplog.at_level(logging.WARNING):
        writer = Writer(tmp_path)
    assert writer.anchors == {"n.py_docs.md": state_from_json(good)}  # the page of no manifest entry goes too
    assert "2 anchor entries of the wrong form" in caplog.text
    writer.manifest.pop("n.py_docs.md")  # a page removed: its anchors go with it
    writer.anchors[page] = AnchorState("cd", "class-C:02")
    writer.save_manifest()
    saved = read_manifest(tmp_path)["anchors"]
    assert saved == {page: {"src": "cd", "defs": "class-C:02"}}
    assert Writer(tmp_path).anchors == {page: AnchorState("cd", "class-C:02")}


def test_strip_aliases_removes_exactly_the_recorded_ones() -> None:
    pair = '<a id="class-Gadget"></a><a id="class-Widget"></a>'
    method = '- <a id="method-Gadget.draw"></a><a id="method-Widget.draw"></a>`draw(self)`'
    page = f"# P\n\n```python\n{pair}\n```\n\n{pair}\n#### `class Gadget`\n\n{method}\n\n    {pair}\n"
    recorded = {"class-Widget": "class-Gadget", "method-Widget.draw": "method-Gadget.draw"}
    want = (f"# P\n\n```python\n{pair}\n```\n\n" '<a id="class-Gadget"></a>\n#### `class Gadget`\n\n'
            f'- <a id="method-Gadget.draw"></a>`draw(self)`\n\n    {pair}\n')
    assert strip_aliases(page, recorded) == want  # code blocks (fenced, indented) keep theirs
    assert strip_aliases(page, {"class-Widget": "class-Gadget"}).count(pair) == 2
    assert strip_aliases(page, {}) == page
    # a local class's line: its members' anchors, each with its alias, inside the line
    line = ('<a id="class-t.Index"></a>`class t.Index`, local; methods <a id="method-t.Index.fetch"></a>'
            '<a id="method-t.Index.get"></a>`fetch`, <a id="method-t.Index.put"></a>'
            '<a id="method-t.Index.post"></a>`put`')
    renames = {"method-t.Index.get": "method-t.Index.fetch", "method-t.Index.post": "method-t.Index.put"}
    assert strip_aliases(line, renames) == (
        '<a id="class-t.Index"></a>`class t.Index`, local; methods '
        '<a id="method-t.Index.fetch"></a>`fetch`, <a id="method-t.Index.put"></a>`put`')
