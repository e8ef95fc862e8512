"""Which definitions the tree-sitter analysers list (the disagreements with universal-ctags that
bench/bench_languages.py found on real code), and what each language calls them (`Symbol.word`)."""

from __future__ import annotations

import textwrap

from repodoc_lsp.analysis import analyse_source


def facts(name: str, text: str):
    return analyse_source(name, textwrap.dedent(text).encode())


def test_go_lists_the_package_s_types_fields_and_embedded_fields_not_local_ones():
    f = facts("a.go", """\
        package p

        // S is a server.
        type S struct {
        \tcore
        \t*pkg.Base
        \tname, addr string
        }

        func f() {
        \ttype local struct{ x int }
        \ttests := []struct{ input string }{}
        \t_ = tests
        }
        """)
    assert [(s.qualname, s.word) for s in f.symbols] == [("S", "struct"), ("f", "func")]
    assert sorted((a.name, a.container) for a in f.attributes) == [
        ("Base", "S"), ("addr", "S"), ("core", "S"), ("name", "S")]


def test_javascript_prototype_style_api_named_callbacks_and_no_object_literal_members():
    f = facts("a.js", """\
        /**
         * Append a header.
         * @param {String} field
         */
        res.append = function append(field, val) {
          return this;
        };
        Layer.prototype.match = function match(path) {};
        exports.parse = (text) => text;
        export const add = (a, b) => a + b;
        const provider = { now() { return 1; } };
        defineGetter(req, 'ip', function ip() {});
        function outer() {
          const local = () => 1;
          return function handler(req, res) {};
        }
        class C { m(x) {} }
        module.exports = function query(options) {};
        """)
    got = {s.qualname: (s.signature, s.docstring, s.word) for s in f.symbols}
    assert got["res.append"] == ("(field, val)", "Append a header.\n\nArgs:\n    field:", "function")
    assert got["Layer.match"][0] == "(path)"
    assert got["parse"][0] == "(text)" and got["add"][0] == "(a, b)"
    assert "ip" in got and "handler" in got and "C.m" in got and got["query"][0] == "(options)"
    assert "now" not in got and "local" not in got


def test_typescript_constructor_parameter_properties_and_construct_signatures():
    f = facts("a.ts", """\
        export class Scheduler {
          constructor(public readonly now: () => number, private delay?: number, plain = 1) {}
        }
        export interface ErrorCtor {
          /** Makes one. */
          new (message: string): Error;
        }
        """)
    assert [(a.name, a.container) for a in f.attributes] == [("now", "Scheduler"), ("delay", "Scheduler")]
    assert [(s.qualname, s.word, s.signature, s.docstring) for s in f.symbols][-1] == (
        "ErrorCtor.new", "constructor", "(message: string): Error", "Makes one.")


def test_each_language_s_own_words():
    words = {
        "a.rs": ("pub struct S;\npub trait T {}\npub fn f() {}\nmod m {}\nmacro_rules! mac { () => {} }\n",
                 ["struct", "trait", "fn", "mod", "macro_rules!"]),
        "a.h": ("#define MAX 1\nnamespace n { struct S {}; using A = int; typedef int B; void f(); }\n",
                ["#define", "namespace", "struct", "using", "typedef", "function"]),
        "A.java": ("public @interface Ann {}\nrecord R(int x) {}\nclass C { C() {} void m() {} }\n",
                   ["@interface", "record", "class", "constructor", "method"]),
        "a.ts": ("export interface I {}\nexport type T = number;\nexport enum E {}\nnamespace N {}\n",
                 ["interface", "type", "enum", "namespace"]),
        "a.go": ("package p\ntype I interface{}\ntype N int\nfunc (n N) M() {}\n", ["interface", "type", "func"]),
    }
    for name, (text, expected) in words.items():
        assert [s.word for s in analyse_source(name, text.encode()).symbols] == expected, name
    assert [s.word for s in analyse_source("a.py", b"class A:\n    def f(self): pass\n").symbols] == ["", ""]


def test_java_interface_constants_no_local_or_anonymous_members_and_the_name_s_line():
    f = facts("A.java", """\
        interface Sizes {
            /** Header size. */
            int HEADER = 30;
        }
        @SuppressWarnings(
            "unchecked"
        )
        public class A {
            void run() {
                class Local { void inner() {} }
                Runnable r = new Runnable() { public void run() {} };
            }
        }
        """)
    assert [(a.name, a.container, a.line) for a in f.attributes] == [("HEADER", "Sizes", 3)]
    assert [(s.qualname, s.line) for s in f.symbols] == [("Sizes", 1), ("A", 8), ("A.run", 9)]


def test_rust_associated_types_and_no_fields_of_enum_variants():
    f = facts("a.rs", """\
        pub trait Visitor {
            /// The result.
            type Output;
        }
        pub struct Group { pub index: u32 }
        pub enum Kind { Named { name: String } }
        """)
    assert [(s.qualname, s.word, s.docstring) for s in f.symbols] == [
        ("Visitor", "trait", None), ("Visitor.Output", "type", "The result."), ("Group", "struct", None),
        ("Kind", "enum", None)]
    assert [(a.name, a.container) for a in f.attributes] == [("index", "Group")]


def test_jsdoc_one_blank_line_above_and_above_a_call_that_defines_a_named_function():
    f = facts("a.js", """\
        /*!
         * express
         */

        /**
         * Set a header.
         * @public
         */

        res.set = function set(field, val) {};

        /**
         * The remote address.
         */

        defineGetter(req, 'ip', function ip() {});

        /** Two blank lines: not its doc. */


        function g() {}
        """)
    assert [(s.qualname, s.docstring) for s in f.symbols] == [
        ("res.set", "Set a header.\n@public"), ("ip", "The remote address."), ("g", None)]


def test_cpp_definition_s_line_is_its_name_s():
    f = facts("a.h", """\
        template <typename T>
        [[nodiscard]]
        static inline
        T
        twice(T x) { return 2 * x; }
        """)
    assert [(s.name, s.line, s.end_line) for s in f.symbols] == [("twice", 5, 5)]


def test_cpp_deprecation_macros_are_blanked_and_lines_stay():
    f = facts("a.h", """\
        class C10_CUDA_API Config {
         public:
          C10_DEPRECATED_MESSAGE(
              "Config::size() is deprecated: use \\"other\\"")
          static size_t size() { return 1; }
          int limit_{0};
        };
        enum class C10_API_ENUM Status { ok };
        """)
    assert [(s.qualname, s.line) for s in f.symbols] == [("Config", 1), ("Config.size", 5), ("Status", 8)]
    assert [(a.qualname, a.line) for a in f.attributes] == [("Config.limit_", 6)]


def test_llms_full_lists_definitions_in_their_language_s_words():
    from repodoc_lsp.render import llms

    block = llms._file_block("src/lib.rs", facts("lib.rs", """\
        /// A point.
        pub struct Point { x: f64 }
        /// Adds.
        pub fn add(a: i32, b: i32) -> i32 { a + b }
        """))
    assert "- `struct Point`: A point." in block and "- `fn add(a: i32, b: i32) -> i32`: Adds." in block
    python = llms._file_block("m.py", analyse_source("m.py", b"class A:\n    def f(self, x): pass\n"))
    assert "- `class A`" in python and "- `def A.f(self, x)`" in python
