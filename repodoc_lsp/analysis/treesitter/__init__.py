"""C, C++, CUDA, JavaScript, TypeScript, Go, Rust and Java -> facts, with tree-sitter.

`SPECS` maps a file suffix to its language's `Spec`; adding a language is one module with its
`Spec`, one query file in `queries/` and a row here. `analyse_tree_sitter` is the analyser;
`resolve_path_import` finds the workspace file a path import (`#include`, `./x`, `mod x;`) names.
"""

from __future__ import annotations

import importlib
import os
import posixpath
import zlib
from collections.abc import Collection

from repodoc_lsp.analysis.model import FileFacts, Import
from repodoc_lsp.analysis.treesitter.core import BLANK_MACROS_ENV, Skipped, Spec

__all__ = ["SUFFIXES", "Skipped", "analyse_tree_sitter", "blank_macros_variant", "grammar_for",
           "resolve_path_import", "set_blank_macros", "spec_for"]



def set_blank_macros(pattern: str) -> None:
    """Use the `blank_macros` setting `pattern` ("": the default) here and in the worker processes
    started after this."""
    if pattern:
        os.environ[BLANK_MACROS_ENV] = pattern
    else:
        os.environ.pop(BLANK_MACROS_ENV, None)


def blank_macros_variant() -> str:
    """"" with the default pattern, else a short tag of the pattern in use: the facts of C-family
    files depend on it, so the analysis cache keeps those of each pattern apart."""
    pattern = os.environ.get(BLANK_MACROS_ENV, "")
    return f"-b{zlib.crc32(pattern.encode()):08x}" if pattern else ""

# suffix -> (module of `treesitter`, its `Spec`): a row per language; the modules load when first needed
_LANGUAGES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    ((".c",), "c_family", "C"),
    # `.h` is read as C++: a superset for what is listed (C headers parse)
    ((".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".c++", ".h++", ".ipp", ".tpp"), "c_family", "CPP"),
    ((".cu", ".cuh"), "c_family", "CUDA"),
    ((".js", ".mjs", ".cjs", ".jsx"), "javascript", "JAVASCRIPT"),
    ((".ts", ".mts", ".cts"), "javascript", "TYPESCRIPT"),
    ((".tsx",), "javascript", "TSX"),
    ((".go",), "go", "GO"),
    ((".rs",), "rust", "RUST"),
    ((".java",), "java", "JAVA"),
)
SUFFIXES = tuple(suffix for suffixes, _module, _name in _LANGUAGES for suffix in suffixes)
_JS_FAMILY = tuple(suffix for suffixes, module, _name in _LANGUAGES if module == "javascript" for suffix in suffixes)


def spec_for(name: str) -> Spec | None:
    """The tree-sitter language of a file name (None: not one of them)."""
    lower = name.lower()
    for suffixes, module, spec in _LANGUAGES:
        if lower.endswith(suffixes):
            return getattr(importlib.import_module(f"repodoc_lsp.analysis.treesitter.{module}"), spec)
    return None


def grammar_for(name: str) -> str:
    """The name of the `Spec` a file name is read with ("": none), without loading its module."""
    lower = name.lower()
    return next((spec for suffixes, _module, spec in _LANGUAGES if lower.endswith(suffixes)), "")


def analyse_tree_sitter(name: str, text: str) -> FileFacts:
    """The facts of a file of one of `SUFFIXES` (raises `Skipped` for a minified bundle)."""
    spec = spec_for(name)
    assert spec is not None, name
    from repodoc_lsp.analysis.treesitter import core

    if spec.query == "c.scm" or spec.query == "cpp.scm":
        from repodoc_lsp.analysis.treesitter.c_family import blank

        text_for_parse = blank(text)
        facts = core.analyse(spec, text_for_parse)
    else:
        facts = core.analyse(spec, text)
    return facts


_JS_TRIES = ("", ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", "/index.ts", "/index.tsx", "/index.js")


def resolve_path_import(rel: str, imp: Import, files: Collection[str]) -> str | None:
    """The workspace file a path import of `rel` names (`Import.level == -1`), or None.

    `#include "x/y.h"` and `<x/y.h>`: against the including file's folder, then each folder above
    it up to the workspace's root. A relative JS/TS import: against the folder, with the usual
    suffixes and `index` files. Rust's `mod x;`: `x.rs` or `x/mod.rs` beside a `mod.rs`, `lib.rs`
    or `main.rs`, else in the folder named after the file."""
    folder = posixpath.dirname(rel)
    spec = imp.module
    lower = rel.lower()
    if lower.endswith(".rs"):
        stem = posixpath.basename(rel)[:-3]
        base = folder if stem in ("mod", "lib", "main") else posixpath.join(folder, stem)
        if "::" not in spec and spec not in ("crate", "self", "super"):  # `mod x;`
            return _rust_module(base, [spec], files)
        head, *parts = spec.split("::")
        if head == "crate":
            crate = _crate_root(folder, files)
            if crate is None:
                return None
            base = crate
        elif head == "super":
            base = posixpath.dirname(base)
        return _rust_module(base, parts, files) if parts else None
    if lower.endswith(_JS_FAMILY):
        base = posixpath.normpath(posixpath.join(folder, spec))
        for tail in _JS_TRIES:
            if base + tail in files:
                return base + tail
        return None
    while True:
        candidate = posixpath.normpath(posixpath.join(folder, spec))
        if candidate in files:
            return candidate
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _crate_root(folder: str, files: Collection[str]) -> str | None:
    """The folder of the crate root (`lib.rs` or `main.rs`) at or above `folder`."""
    while True:
        if any(posixpath.join(folder, root) in files for root in ("lib.rs", "main.rs")):
            return folder
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def _rust_module(base: str, parts: list[str], files: Collection[str]) -> str | None:
    """The file of module `parts` under `base` (`a/b.rs`, `a/b/mod.rs`); the last parts may be items of
    a module (`crate::a::Thing`: `a.rs`)."""
    for end in range(len(parts), 0, -1):
        path = posixpath.join(base, *parts[:end])
        for candidate in (f"{path}.rs", posixpath.join(path, "mod.rs")):
            if candidate in files:
                return candidate
    return None
