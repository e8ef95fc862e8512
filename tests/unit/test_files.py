"""Reading workspace files: only regular files are read (a FIFO or a device never blocks), bytes
are decoded the way the page says, and a page never shows a source to more people than the source."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

import pytest

from repodoc_lsp.analysis.model import Language
from repodoc_lsp.analysis.source import NotText, decode, language_for
from repodoc_lsp.output.modes import PAGE_MODE, wider_reason
from repodoc_lsp.store.regular import read_regular


def test_read_regular_reads_files_and_refuses_the_rest(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"x = 1\n" * 20_000)
    assert read_regular(tmp_path / "a.py") == b"x = 1\n" * 20_000
    assert read_regular(tmp_path / "a.py", 5) == b"x = 1"
    (tmp_path / "empty").write_bytes(b"")
    assert read_regular(tmp_path / "empty") == b""
    os.symlink(tmp_path / "a.py", tmp_path / "link.py")
    assert read_regular(tmp_path / "link.py", 1) == b"x"
    os.mkfifo(tmp_path / "fifo.py")  # opening it would wait for a writer
    for refused in (tmp_path / "fifo.py", Path("/dev/null"), Path("/dev/zero"), tmp_path):
        with pytest.raises(OSError, match="not a regular file"):
            read_regular(refused)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing")


@pytest.mark.parametrize(("data", "name", "text", "encoding", "note"), [
    (b"x = 1\r\ny = 2\rz = 3\n", "a.py", "x = 1\ny = 2\nz = 3\n", "utf-8", ""),
    (codecs.BOM_UTF8 + "é = 1\n".encode(), "a.py", "é = 1\n", "utf-8-sig", ""),
    ("hello wide world".encode("utf-16"), "a.txt", "hello wide world", "utf-16", ""),
    ("# caf\xe9\n".encode("latin-1"), "a.py", "# caf\xe9\n", "latin-1", "not valid utf-8; decoded as Latin-1"),
    (b"# -*- coding: cp1252 -*-\nx = '\x80'\n", "a.py", "# -*- coding: cp1252 -*-\nx = '\u20ac'\n", "cp1252", ""),
    (b"# -*- coding: cp1252 -*-\n\x80", "a.md", "# -*- coding: cp1252 -*-\n\x80", "latin-1",
     "not valid utf-8; decoded as Latin-1"),  # a cookie means something in Python files only
])
def test_decode(data: bytes, name: str, text: str, encoding: str, note: str) -> None:
    decoded = decode(data, language_for(name))
    assert (decoded.text, decoded.encoding, decoded.note) == (text, encoding, note)


def test_binary_and_broken_byte_order_marks_are_not_text() -> None:
    with pytest.raises(NotText, match=r"binary \(contains NUL bytes\)"):
        decode(b"\x00\x01\x02binary", Language.PYTHON)
    with pytest.raises(NotText, match="after its byte-order mark"):
        decode(codecs.BOM_UTF8 + b"\xff\xfe\xfd", Language.TEXT)


def test_languages() -> None:
    assert [language_for(n) for n in ("a.py", "B.PYI", "c.pyw", "d.md", "e.rst", "f.txt", "Makefile")] == [
        Language.PYTHON, Language.PYTHON, Language.PYTHON, Language.MARKDOWN, Language.MARKDOWN,
        Language.TEXT, Language.TEXT]


def test_a_source_more_private_than_its_pages_is_named() -> None:
    assert wider_reason(stat.S_IFREG | 0o666) == ""
    assert wider_reason(stat.S_IFREG | (PAGE_MODE | 0o044)) == ""
    if PAGE_MODE & 0o044:  # the umask lets pages be read by others or the group
        reason = wider_reason(stat.S_IFREG | 0o600)
        assert reason.startswith("private (mode 0600; pages of mode ") and "read it)" in reason
    assert wider_reason(stat.S_IFREG | 0o600 | (PAGE_MODE & 0o044)) == ""
