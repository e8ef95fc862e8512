from __future__ import annotations

import ast
import pickle
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from repodoc_lsp.analysis import FindingCategory, KeywordKind, analyse_source
from repodoc_lsp.analysis.model import Import, Symbol, SymbolKind, reference_lines, refs_text
from repodoc_lsp.analysis.python import body_digest
from repodoc_lsp.analysis.signature import (
    _scanned_signature_text,
    _tidy,
    annotation_spans,
    signature_text,
)
from repodoc_lsp.analysis.source import TooComplex
from repodoc_lsp.analysis.unparse import unparse


def test_signatures_as_written() -> None:
    src = (b'def a(x, y=")", *args, z: "s:x" = \'a#b\', **kw) -> dict[str, int]:  # c\n    pass\n'
           b"def b(\n    self,\n    x: int = 1,  # (comment\n) -> None:\n    pass\n"
           b"def c(s=\"\"\":\"\"\"): ...\n")
    sigs = {s.name: s.signature for s in analyse_source("m.py", src).symbols}
    assert sigs == {"a": '(x, y=")", *args, z: "s:x" = \'a#b\', **kw) -> dict[str, int]',
                    "b": "(self, x: int = 1) -> None", "c": '(s=""":""")'}
    assert signature_text("(x") is None


@given(st.text(alphabet=st.sampled_from("( )[],ab:=\t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000\u200b"), max_size=30)
       | st.text(max_size=30))
@example("(\n    self,\n    x: int = 1,\n)")
def test_tidy_collapses_what_a_whitespace_regex_collapses(text: str) -> None:
    """`_tidy` splits at the whitespace `\\s` matches (any Unicode space, `\\x1c`, `\\x85`; not `\\u200b`)."""
    spaced = re.sub(r"\s+", " ", text).strip()
    for a, b in (("( ", "("), (" )", ")"), ("[ ", "["), (" ]", "]"), (", )", ")"), (",)", ")")):
        spaced = spaced.replace(a, b)
    assert _tidy(text) == spaced


@pytest.mark.parametrize("header", [
    "(x, y=1):\n", "(self, x: int, *, f: Callable[[int], T] = lambda y: y) -> dict[str, int]:  ...",
    "(\n    self,\n    x: Tensor,\n    dim: int = 0,\n) -> Tensor:\n", "(a=b[1:2], c={1: 2}, d=(e := 3)):",
    "(x", "(x)) -> y:", "(x) -> y", "() :", "(x: int)\n:", "(a)[b](c):", "(a: {k: v}) -> {1: 2}[1]: pass",
    '(x: int):\n    """Doc: (a."""', "(x):  # y:\n", '(a=")", b):', "(a=':'):", '(a, b="]"): ...', "(a=')' # ):\n):",
    '(a: "x:y", b) -> "z":\n', "(a) -> 'q' :", '(a="]:", b: int) -> T:', "(a: int = {}[0], b='}:') -> c:",
    "(a,  # ]: x\n b: int):", "(a: T = f(x)[0], b: U = {1: 2}) -> V:",
])
def test_signatures_read_by_counting_brackets_as_the_token_scan_reads_them(header: str) -> None:
    """Counting brackets up to the first `:` outside them gives what the token scan gives, strings
    and comments before it or not."""
    assert signature_text(header) == _scanned_signature_text(header)


@pytest.mark.parametrize("source", ["a", "a.b.c", "f()", "a.b()", "a.b(1)", "a.b(k=1)", "(a).b", "a[1].b",
                                    "a.b().c", "x.y .z", "torch . jit . script ( )", "1 .real", "f()()",
                                    "f(a.b, 'x', \"y'\", 'z\\n', 1, True, None, k=c.d, n=-1)", "f(u'x')",
                                    "f(1.5, 1e999, ...)", "f(*a, **k)", "f(x, k=g())", "f(b'x', 0x10)",
                                    "a.b(c)(d)", "f('''x''')", "f(x, *a)", "f(k=1, **m)",
                                    "p('x', [a, b.c], ids=['a', 'b'])", "p('s', (-1, 1))", "f((1,), (), [], {})",
                                    "f([(1, 2), (3,)], ((a,),))", "f({'a': 1, (1, 2): [3], k: {}})", "f({**m})",
                                    "f({'a': 1, **m})", "skipif(not HAS_X, reason='r')", "f(not (a, b), not [a])",
                                    "f(not not a, not -1, not g(x))", "f(-1.5, -0.0, -1e999, 2.5, 1e999, -x)",
                                    "f(-True, -(1), ~1, +1, 1j, -1j)", "f(g(h(1), k=[i()]))", "f([*a], (a, *b), {1})",
                                    "f([[[[[[[[[[[1]]]]]]]]]]])", "f(a=[g(b=[h(c=[1])])])", "f(u'x', [u'y'])",
                                    "f(-10 ** 5, -(-1), lambda: 1, [1.5, -2])"])
def test_names_and_calls_unparsed_as_ast_does(source: str) -> None:
    node = ast.parse(source, mode="eval").body
    assert unparse(node) == ast.unparse(node)


def test_lists_tuples_dicts_and_negative_numbers_in_arguments_are_written_without_astunparse(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A quarter of the scale corpus's decorators (`@pytest.mark.parametrize("x", [a, b])`) went to `ast.unparse`."""
    source = "pytest.mark.parametrize(('a', 'b'), [(1, -2.5), (c.d, None)], ids={'k': [not e, f()]})"
    node = ast.parse(source, mode="eval").body
    monkeypatch.setattr(ast, "unparse", lambda node: "written by ast.unparse")
    assert unparse(node) == source


def test_body_digest_blanks_the_name_on_the_first_line_only() -> None:
    lines = ["x = 1", "def f(a):", "    return f(a)", "def g(a):", "    return f(a)", "class f: pass"]
    assert body_digest(lines, 2, 3, "f") == body_digest(lines, 4, 5, "g")
    assert body_digest(lines, 2, 3, "f") != body_digest(lines, 2, 3, "g")  # the name kept: another digest
    assert body_digest(lines, 6, 6, "f") == body_digest(["class renamed: pass"], 1, 1, "renamed")
    assert body_digest(lines, 0, 1, "x") == body_digest(lines, 6, 7, "f") == ""
    # a method, `async`, a name that is a letter of its keyword: the name blanked, not the `e` of `def`
    lines = ["class C:", "    async def e(self):", "        return 1", "    async def g(self):", "        return 1"]
    assert body_digest(lines, 2, 3, "e") == body_digest(lines, 4, 5, "g") != body_digest(lines, 4, 5, "e")


def test_facts_records_made_and_pickled_by_their_fields() -> None:
    s = Symbol("f", "A.f", SymbolKind.METHOD, 3, 4, 5, "method-A.f", container="A", decorators=("property",))
    assert (s.name, s.level, s.bases, s.docstring, s.decorators) == ("f", 0, (), None, ("property",))
    assert pickle.loads(pickle.dumps(s)) == s and Import("m", (), 1) == Import("m", (), 1, 0, "", (), False)
    with pytest.raises(AttributeError):  # still frozen
        s.name = "g"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Symbol("f")  # type: ignore[call-arg]


def test_annotation_names_of_a_signature() -> None:
    """Names in annotations (a string one when it is one dotted name), not parameter names,
    defaults (a lambda's `:` too) or `Literal` values."""
    def names(signature: str) -> list[str]:
        return [signature[a:b] for a, b in annotation_spans(signature)]

    assert names('(self, x: nn.Linear, n=a.b, *, f: Callable[[int], T] = lambda y: y) -> "Tensor"') == [
        "nn.Linear", "Callable", "int", "T", "Tensor"]
    assert names("(x: 'Optional[int]', y: \"a.B\" = None, **kw: Any) -> dict[str, torch.dtype]") == [
        "a.B", "Any", "dict", "str", "torch.dtype"]
    assert names('(a: Literal["x", "y"], b: t.Literal["z"] | "W" = {"k": v}) -> b"Q"') == [
        "Literal", "t.Literal", "W"]
    assert names("(x, y=1)") == [] and names("()") == []


def test_keywords_are_exact() -> None:
    src = b'''"""class represents nothing"""
from typing import Any, NamedTuple
from a import (
    b,
    c as d,
)
from . import *
@decorator
class Decorated:
    def method(self):
        def nested(): ...
'''
    kw = analyse_source("m.py", src).keywords()
    names = {k: [n for n, _ in v] for k, v in kw.items()}
    assert names == {KeywordKind.CLASS: ["Decorated"], KeywordKind.FUNCTION: ["method", "nested"],
                     KeywordKind.IMPORT: [".", "Any", "NamedTuple", "a", "b", "c", "typing"]}


def test_risky_calls_through_aliases_and_multiline() -> None:
    src = (b"from pickle import loads\nimport subprocess as sp\nimport yaml, torch\n"
           b"loads(b'')\nsubprocess.check_output(\n  'x',\n  shell=True,\n)\n"
           b"yaml.load(s)\nyaml.load(s, Loader=yaml.SafeLoader)\ntorch.load('f')\n"
           b"torch.load('f', weights_only=True)\nmodel.eval()\n")
    found = [(f.label, f.line) for f in analyse_source("m.py", src).findings_in(FindingCategory.SECURITY)]
    assert found == [("deserialisation", 4), ("shell=True", 5), ("yaml.load", 9), ("torch.load", 11)]


def test_deeply_nested_code_does_not_crash() -> None:
    src = ("x = " + "(" * 199 + "1" + ")" * 199 + "\ndef after(:\n    pass\n").encode()
    facts = analyse_source("m.py", src)  # does not parse: parso reads it
    assert facts.syntax_error is not None and [s.name for s in facts.symbols] == ["after"]
    # past Python's own limit (200): no parse at all, and parso's would cost minutes on a large file
    with pytest.raises(TooComplex, match=r"^nesting too deep \(300 levels; limit 200\)$"):
        analyse_source("m.py", ("x = " + "(" * 300 + "1" + ")" * 300 + "\n").encode())
    nested_ifs = "".join("    " * i + "if x:\n" for i in range(120)) + "    " * 120 + "pass\n"
    assert analyse_source("n.py", nested_ifs.encode()).lines == 121


def test_risky_line_search_finds_what_a_full_regex_scan_finds() -> None:
    # risky_lines looks for the pattern only around a few literal words (for speed);
    # it must find every line a scan of the whole text finds.
    from repodoc_lsp.analysis.risky import _RISKY_TEXT, risky_lines

    text = ("x = cPickle.load(f)\nmarshal.loads(b)\nrun(cmd, shell  =\n    True)\nos.system ('ls')\n"
            "evaluate(x)\nmy_eval(x)\nexec(code)\nyaml.unsafe_load(s)\ntorch.load\nUnpickler(f)\n"
            "subprocess.getstatusoutput('x')\ntempfile.mktemp()\nopen(path)\nshelve.open(p)\n") * 3
    expected = sorted({text.count("\n", 0, m.start()) + 1 for m in _RISKY_TEXT.finditer(text)})
    assert risky_lines(text) == expected
    assert 3 in expected and 6 not in expected and 7 not in expected


@pytest.mark.parametrize("text", [
    "eval(x)", "xeval(x) _eval(x) .eval (x) éeval(x) 1eval(x) eval_(x) evaluate(x)", "exec_module(m)exec(c)",
    "pickle.load(f) xpickle.load(f) pickle.loader cPickle.open(p) torch.loads(b)\ntorch.Unpickler",
    "shell =1 myshell=2",
    "os.system (c) ; _system(c) getstatusoutput(c) getoutput(c) mktemp() unsafe_load(s) Unpickler(f) loads(b)",
    "__import__(m) x__import__(m) import_module(m) yaml.load(s) joblib.load(p) dill.loads(b) marshal.load(f)",
])
def test_the_risky_pattern_matches_as_one_with_word_boundaries_does(text: str) -> None:
    """`_RISKY_TEXT` starts each alternative with its word's first letter: it matches where the pattern written
    with `\\b` matches, in any window of the text (the look-behind sees before the window as `\\b` does)."""
    from repodoc_lsp.analysis.risky import _RISKY_TEXT

    plain = re.compile(r"\b(?:eval|exec|exec_module|__import__|import_module|system|popen|getoutput|getstatusoutput"
                       r"|mktemp|unsafe_load|Unpickler|loads?)\s*\("
                       r"|\b(?:pickle|cPickle|dill|marshal|shelve|yaml|joblib|torch)\.(?:loads?|open|Unpickler)\b"
                       r"|\bshell\s*=")
    for start in range(len(text) + 1):
        for end in range(start, len(text) + 2):
            assert [m.span() for m in _RISKY_TEXT.finditer(text, start, end)] == \
                [m.span() for m in plain.finditer(text, start, end)], (start, end)


@pytest.mark.parametrize("text", [
    "popen('ls')", "os.popen(c)\nx = __import__(n)\nimportlib.import_module(m)", "__import__(x)", "_import_(x)",
    "p = popen\nimport_module (m)\nimport__(x)\n__import_module(y)", "xpopen(1)\nopen(f)\nsubprocess.popen(c)",
    "f = lambda: __import__\n" + " " * 190 + "(m)\n" + "x" * 30 + "popen(c)", "import_modules(x)\nimport_module(y)",
])
def test_risky_words_found_from_others_are_where_a_scan_of_each_finds_them(text: str) -> None:
    """`popen`, `__import__` and `import_module` are found from `open` and `import_`: the same windows as a
    scan of the text for each of the words."""
    from repodoc_lsp.analysis.patterns import line_numbers
    from repodoc_lsp.analysis.risky import _RISKY_LEAD, _RISKY_SPAN, _RISKY_TEXT, _RISKY_WORDS, risky_lines

    starts = set()
    for word in _RISKY_WORDS:
        at = text.find(word)
        while at >= 0:
            starts.update(m.start() for m in _RISKY_TEXT.finditer(text, max(0, at - _RISKY_LEAD), at + _RISKY_SPAN))
            at = text.find(word, at + 1)
    assert risky_lines(text) == line_numbers(text, starts)


def test_facts_pickle_as_calls_of_their_makers() -> None:
    """The facts cross processes (analysis workers -> parent -> render workers) as pickles: each
    fact comes back equal, and is made by a call with its fields (no `BUILD` of a state that
    `dataclasses` would read with `fields()` for every object: 5% of a cold run), of a function
    that sets the slots (`model._made_Symbol`...), not of the frozen class, whose `__init__` sets
    each field through `object.__setattr__`. A file's facts are one call (`_made_FileFacts_rows`), each of its
    symbols, imports, findings and attributes the tuple of its fields' values (no call pickled per fact)."""
    import pickle
    import pickletools

    src = (b'"""Doc."""\nimport os, pickle\nfrom . import a as b\nX: int = 1\n'
           b"class C(os.PathLike):\n    y = 2\n    def __init__(self, d):\n        self.z = pickle.loads(d)\n"
           b"def f(x: C) -> None:\n    '''F.'''\n    return os.path.join(x)\n")
    facts = analyse_source("m.py", src)
    assert facts.symbols and facts.imports and facts.attributes and facts.findings
    data = pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL)
    assert pickle.loads(data) == facts
    ops = [(op.name, arg) for op, arg, _pos in pickletools.genops(data)]
    assert "BUILD" not in {name for name, _arg in ops}
    strings = {arg for name, arg in ops if isinstance(arg, str)}
    assert "_made_FileFacts_rows" in strings
    assert not {"Symbol", "Import", "Attribute", "Finding", "FileFacts", "_made_Symbol"} & strings
    one = pickle.dumps(facts.symbols[0], protocol=pickle.HIGHEST_PROTOCOL)  # a fact alone: its maker's call
    assert "_made_Symbol" in {arg for _op, arg, _pos in pickletools.genops(one)}
    assert pickle.loads(one) == facts.symbols[0]
    again = pickle.loads(data)
    assert type(again.symbols[0]) is type(facts.symbols[0]) and hash(again.symbols[0]) == hash(facts.symbols[0])
    with pytest.raises(AttributeError):  # still frozen (FrozenInstanceError)
        again.symbols[0].name = "x"  # type: ignore[misc]
    broken = analyse_source("b.py", b"def f(:\n")
    assert broken.syntax_error is not None and pickle.loads(pickle.dumps(broken)) == broken


def test_the_names_a_file_reads_are_its_refs() -> None:
    """`refs` holds the names `references` found, with their lines, as `reference_lines` reads them."""
    source = ("import os\nimport torch.nn as nn\nfrom a import b\nX = 1\n\n\ndef f(y):\n"
              "    return nn.Linear(os.path.join(b, X), os.sep)\n\n\nclass C(nn.Linear):\n    z = X + f(b)\n")
    first = analyse_source("f.py", source.encode())
    assert first.refs == "X 8,12\nb 8,12\nf 12\nnn.Linear 8,11\nos.path.join 8\nos.sep 8"
    assert reference_lines(first.refs) == [
        ("X", (8, 12)), ("b", (8, 12)), ("f", (12,)), ("nn.Linear", (8, 11)), ("os.path.join", (8,)), ("os.sep", (8,))]
    second = analyse_source("g.py", b"from x import *\n\nprint(y.z)\n")
    assert reference_lines(second.refs) == [("print", (3,)), ("y.z", (3,))]
    assert refs_text(reference_lines(first.refs)) == first.refs


def test_instance_attributes_anywhere_in_init_and_tuple_targets() -> None:
    source = ("class Linear:\n    def __init__(self, a, bias=True):\n        self.weight = 1\n        if bias:\n"
              "            self.bias = 2\n        else:\n            self.bias = None\n"
              "        self.loc, (self.scale, *self.rest) = a\n        for i in range(2):\n"
              "            with open(a):\n                self.n: int = i\n        try:\n            pass\n"
              "        except OSError:\n            self.failed = True\n"
              "        def inner(self):\n            self.no = 1\n")
    found = {a.name: (a.line, a.value, a.annotation) for a in analyse_source("m.py", source.encode()).attributes}
    assert found == {"weight": (3, "1", ""), "bias": (5, "2", ""), "loc": (8, "", ""), "scale": (8, "", ""),
                     "rest": (8, "", ""), "n": (11, "i", "int"), "failed": (15, "True", "")}


def test_an_annotated_all_is_the_public_api() -> None:
    facts = analyse_source("m.py", b'__all__: list[str] = ["a", "b"]\ndef a(): pass\ndef b(): pass\n')
    assert facts.all_names == ("a", "b")
