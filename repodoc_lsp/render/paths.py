"""Where each page lives in the output folder (POSIX paths relative to it)."""

from __future__ import annotations

import posixpath


def docs_page(rel: str) -> str:
    return f"{rel}_docs.md"


def kw_page(rel: str) -> str:
    return f"{rel}_kw.md"


def folder_index(folder: str) -> str:
    return posixpath.join(folder, "index.md") if folder else "index.md"


def folder_doc(folder: str) -> str:
    return posixpath.join(folder, "doc.md") if folder else "doc.md"


def folder_of(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def pages_of_file(rel: str) -> tuple[str, str]:
    return docs_page(rel), kw_page(rel)


def pages_of_folder(folder: str) -> tuple[str, str]:
    return folder_index(folder), folder_doc(folder)
