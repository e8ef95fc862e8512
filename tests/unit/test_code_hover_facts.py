"""Hover on a C-family or JS-family file reads the index's facts of an unchanged file and analyses an
edited one once for the hovers that follow: a big header's analysis took longer than a hover may."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.server import code_hover as module
from repodoc_lsp.server import document_memo
from repodoc_lsp.store.cache import digest

SOURCE = "/// Adds two numbers.\nint add(int a, int b);\n"


class _Facts:
    def __init__(self, held: dict[str, Any]) -> None:
        self.held = held

    def one(self, rel: str) -> Any:
        return self.held.get(rel)

    def __contains__(self, rel: object) -> bool:
        return False  # no page link (no pages written)


def _root(tmp_path: Path, digests: dict[str, str], held: dict[str, Any]) -> Any:
    return SimpleNamespace(contains=lambda p: True, rel=lambda p: p.relative_to(tmp_path).as_posix(),
                           ws=SimpleNamespace(digests=digests, facts=_Facts(held), by_name_ready=None))


def _count_analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []

    def counted(name: str, data: bytes) -> Any:
        calls.append(name)
        return analyse_source(name, data)

    monkeypatch.setattr(document_memo, "analyse_source", counted)
    return calls


def test_an_unchanged_file_is_hovered_from_the_index_facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_analyses(monkeypatch)
    indexed = analyse_source("ops.h", SOURCE.encode())
    root = _root(tmp_path, {"ops.h": digest(SOURCE.encode(), "ops.h")}, {"ops.h": indexed})
    text = module.code_hover(module.DocumentMemo(), root, tmp_path / "ops.h", SOURCE, 2, 5, markdown=True,
                             mode="full")
    assert "Adds two numbers." in text and "`ops.h:2`" in text
    assert calls == []  # the index's facts, no new analysis


def test_an_edited_file_is_analysed_once_for_its_hovers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_analyses(monkeypatch)
    root = _root(tmp_path, {"ops.h": digest(b"an older text", "ops.h")}, {})
    edited = SOURCE + "int sub(int a, int b);\n"
    memo = module.DocumentMemo()
    for line, column in ((2, 5), (3, 5), (2, 6)):
        assert module.code_hover(memo, root, tmp_path / "ops.h", edited, line, column, markdown=True, mode="full")
    assert calls == ["ops.h"]
    # another server's hovers keep their own; a cleared memo (a root made or removed) analyses again
    assert module.code_hover(module.DocumentMemo(), root, tmp_path / "ops.h", edited, 2, 5, markdown=True,
                             mode="full")
    memo.clear()
    assert module.code_hover(memo, root, tmp_path / "ops.h", edited, 2, 5, markdown=True, mode="full")
    assert calls == ["ops.h"] * 3
