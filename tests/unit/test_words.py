"""Counts and their nouns (`repodoc_lsp/words.py`): one helper for pages, hovers and summaries."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from repodoc_lsp import cli
from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.words import plural, plural_of


@pytest.fixture(autouse=True)
def _keep_sigint() -> Iterator[None]:
    """main() sets its own Ctrl-C handler; the test process keeps pytest's."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, handler)


def test_plural() -> None:
    assert [plural(n, "page") for n in (0, 1, 2)] == ["0 pages", "1 page", "2 pages"]
    assert plural(1, "workspace file") == "1 workspace file" and plural(3, "workspace file") == "3 workspace files"
    assert [plural_of(w) for w in ("class", "entry", "key", "index", "match", "sub-folder")] == \
        ["classes", "entries", "keys", "indexes", "matches", "sub-folders"]
    assert plural(1234, "line", grouped=True) == "1,234 lines" and plural(1234, "line") == "1234 lines"
    assert plural(2, "child", "children") == "2 children" and plural(1, "child", "children") == "1 child"


def test_the_templates_have_it_as_a_filter() -> None:
    env = Renderer(lazy=True).env
    assert env.from_string('{{ n|plural("more line") }}').render(n=1) == "1 more line"
    assert env.from_string('{{ n|plural("line", grouped=true) }}').render(n=1500) == "1,500 lines"


def test_the_cli_summary_says_one_file_one_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("just words\n")
    assert cli.main(["generate", str(tmp_path / "ws"), "--cache-dir", str(tmp_path / "cache")]) == 0
    out = capsys.readouterr().out
    assert "repodoc: 1 file analysed (" in out and " 1 conflicts" not in out and "0 errors" in out
    assert cli.main(["generate", str(tmp_path / "ws"), "--check", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "repodoc: 1 file analysed, up to date" in capsys.readouterr().out
