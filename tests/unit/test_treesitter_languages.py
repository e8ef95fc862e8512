"""C, C++, CUDA, JavaScript, TypeScript, Go, Rust and Java read with tree-sitter into `FileFacts`."""

from __future__ import annotations

import textwrap

import pytest

from repodoc_lsp.analysis import Language, analyse_source, language_for
from repodoc_lsp.analysis.model import Import
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.analysis.source import TooComplex
from repodoc_lsp.analysis.treesitter import resolve_path_import
from repodoc_lsp.analysis.treesitter.doccomments import docstring


def facts(name: str, text: str):
    return analyse_source(name, textwrap.dedent(text).encode())


def table(f) -> dict[str, tuple[str, str | None]]:
    found: dict[str, tuple[str, str | None]] = {}
    for s in f.symbols:  # a declaration before its definition: the first
        found.setdefault(s.qualname, (s.kind.value, s.docstring))
    return found


@pytest.mark.parametrize(("name", "language"), [
    ("a.c", Language.C), ("a.h", Language.CPP), ("a.hpp", Language.CPP), ("a.cu", Language.CUDA),
    ("a.cuh", Language.CUDA), ("a.js", Language.JAVASCRIPT), ("a.mjs", Language.JAVASCRIPT),
    ("a.jsx", Language.JAVASCRIPT), ("a.ts", Language.TYPESCRIPT), ("a.tsx", Language.TYPESCRIPT),
    ("a.go", Language.GO), ("a.rs", Language.RUST), ("A.java", Language.JAVA), ("a.txt", Language.TEXT)])
def test_language_by_suffix(name, language):
    assert language_for(name) is language


def test_cpp_definitions_containers_docs_and_blanked_export_macros():
    f = facts("m.h", """\
        #include "c10/core/Device.h"
        namespace torch { namespace nn {
        /** A module.
         * @param x the input
         * @return the output
         */
        template <typename T>
        class TORCH_API Module : public Base {
          int count; ///< how many
          /// Runs it.
          virtual Tensor forward(const Tensor& x) const;
        };
        enum class Mode { A, B };
        using Alias = int;
        #define MAX(a, b) ((a) > (b) ? (a) : (b))
        C10_API void free_fn(int x);
        __host__ __device__ int kernel_helper(int x) { return x; }
        Tensor Module::forward(const Tensor& x) const { return x; }
        }}
        """)
    found = table(f)
    assert found["torch.nn.Module"] == ("class", "A module.\n\nArgs:\n    x: the input\n\nReturns:\n    the output")
    assert found["torch.nn.Module.forward"] == ("method", "Runs it.")
    assert found["torch.nn.free_fn"][0] == "function"
    assert found["torch.nn.kernel_helper"][0] == "function"
    assert found["MAX"][0] == "function"  # a macro is in no namespace
    assert {"torch", "torch.nn", "torch.nn.Mode", "torch.nn.Alias"} <= set(found)
    assert [a.qualname for a in f.attributes] == ["torch.nn.Module.count"]
    assert [(i.module, i.level) for i in f.imports] == [("c10/core/Device.h", -1)]
    module = next(s for s in f.symbols if s.qualname == "torch.nn.Module")
    assert module.signature == ": public Base" and module.line == 8
    forward = next(s for s in f.symbols if s.name == "forward")
    assert forward.signature == "(const Tensor& x) const"


def test_typescript_javascript_go_rust_java():
    ts = table(facts("a.ts", """\
        import { x } from "./util";
        /**
         * Greets.
         * @param name who
         * @returns the greeting
         */
        export function greet(name: string): string { return name; }
        export interface Shape { area(): number }
        export type Id = string;
        export class Box {
          /** Area. */
          area(): number { return 1; }
        }
        """))
    assert ts["greet"] == ("function", "Greets.\n\nArgs:\n    name: who\n\nReturns:\n    the greeting")
    assert ts["Box.area"] == ("method", "Area.") and ts["Shape"][0] == ts["Id"][0] == "class"
    js = table(facts("a.js", "/** Adds. */\nconst add = (a, b) => a + b;\nclass K { m() {} }\n"))
    assert js == {"add": ("function", "Adds."), "K": ("class", None), "K.m": ("method", None)}
    go = table(facts("m.go", """\
        package m
        // Server serves.
        type Server struct { Addr string }
        // Start starts it.
        func (s *Server) Start() error { return nil }
        """))
    assert go == {"Server": ("class", "Server serves."), "Server.Start": ("method", "Start starts it.")}
    rs = table(facts("lib.rs", """\
        mod util;
        /// A point.
        #[derive(Debug)]
        pub struct Point { pub x: i32 }
        impl Point {
            /// Makes one.
            pub fn new() -> Self { todo!() }
        }
        macro_rules! m { () => {} }
        """))
    assert rs["Point"] == ("class", "A point.") and rs["Point.new"] == ("method", "Makes one.")
    assert rs["m"][0] == "function" and "util" in rs
    java = table(facts("A.java", """\
        import java.util.List;
        /** A thing. */
        public class A {
          /**
           * Runs.
           * @param n how many
           */
          @Override public int run(int n) { return n; }
        }
        """))
    assert java == {"A": ("class", "A thing."), "A.run": ("method", "Runs.\n\nArgs:\n    n: how many")}


def test_bad_input_gives_partial_facts_or_a_reason():
    broken = facts("x.cpp", "int ok(int a) { return a; }\nclass {{{ int broken(\nvoid after() {}\n")
    assert "ok" in table(broken) and broken.syntax_error is not None
    deep = facts("deep.js", "f(" * 5000 + ")" * 5000 + "\nfunction g() {}\n")
    assert "g" in table(deep)
    with pytest.raises(TooComplex, match="minified"):
        analyse_source("bundle.min.js", b"var a=1;" * 40_000)
    latin = analyse_source("x.c", "/** caf\xe9 */\nint f(void) { return 0; }\n".encode("latin-1"))
    assert latin.encoding == "latin-1" and "f" in table(latin)


def test_doc_comment_tags_become_sections():
    assert docstring(["/**\n * \\brief Adds.\n * \\param a first\n * \\throws Error when bad\n */"]) == \
        "Adds.\n\nArgs:\n    a: first\n\nRaises:\n    Error: when bad"


def test_path_imports_resolve_to_workspace_files():
    files = {"src/lib/a.cpp", "src/include/x.h", "include/top/y.h", "web/app.ts", "web/util/index.ts",
             "crate/src/lib.rs", "crate/src/util.rs", "crate/src/net/mod.rs"}
    inc = Import("top/y.h", (), 1, level=-1)
    assert resolve_path_import("src/lib/a.cpp", inc, files) is None  # include/ is not a parent of src/lib
    assert resolve_path_import("src/lib/a.cpp", Import("../include/x.h", (), 1, level=-1), files) == "src/include/x.h"
    assert resolve_path_import("include/top/z.h", inc, files) == "include/top/y.h"
    assert resolve_path_import("web/app.ts", Import("./util", (), 1, level=-1), files) == "web/util/index.ts"
    assert resolve_path_import("crate/src/lib.rs", Import("util", (), 1, level=-1), files) == "crate/src/util.rs"
    assert resolve_path_import("crate/src/lib.rs", Import("net", (), 1, level=-1), files) == "crate/src/net/mod.rs"
    use = facts("crate/src/net/mod.rs", "use crate::util::{help, Other};\nuse std::fmt;\nuse super::util;\n")
    assert [(i.module, i.names, i.level) for i in use.imports] == [
        ("crate::util", ("help", "Other"), -1), ("std", ("fmt",), 0), ("super::util", (), -1)]
    assert resolve_path_import("crate/src/net/mod.rs", use.imports[0], files) == "crate/src/util.rs"
    assert resolve_path_import("crate/src/net/mod.rs", use.imports[2], files) == "crate/src/util.rs"
    deep = Import("crate::net::Server", ("Server",), 1, level=-1)
    assert resolve_path_import("crate/src/util.rs", deep, files) == "crate/src/net/mod.rs"
    relations = Relations({"crate/src/lib.rs": [Import("util", (), 1, level=-1)], "crate/src/util.rs": []})
    assert relations.importers("crate/src/util.rs") == ["crate/src/lib.rs"]
    assert relations.category("crate/src/lib.rs", Import("nope", (), 1, level=-1)) == "third-party"


def test_blank_macros_setting(monkeypatch):
    from repodoc_lsp.analysis.treesitter import blank_macros_variant, set_blank_macros

    source = b"class MYLIB_PUBLIC Widget { };\nclass TORCH_API Other { };\n"
    monkeypatch.delenv("REPODOC_BLANK_MACROS", raising=False)
    assert blank_macros_variant() == ""
    assert "Other" in table(analyse_source("w.h", source))  # the default: *_API
    set_blank_macros("MYLIB_PUBLIC")
    assert blank_macros_variant().startswith("-b")  # the cache keeps these facts apart
    assert "Widget" in table(analyse_source("w.h", source))
    set_blank_macros("")
    assert "Widget" not in table(analyse_source("w.h", source))
