"""`repodoc_lsp/render/parts.py`: which entries of a file page go to part pages, read from the file's
facts alone; the part pages' names; the links of the keyword index into them; a page and its parts
as `Renderer.render_pages` makes them."""

from __future__ import annotations

from helpers import DOCS_SECTIONS, page_errors

from repodoc_lsp.analysis import analyse_source
from repodoc_lsp.analysis.relations import Relations
from repodoc_lsp.render import parts
from repodoc_lsp.render.pages import PAGE_LIMIT, Renderer, Site, where_of

DOC = "Does one thing and says so at some length. " * 6


def _source(classes: int, methods: int, functions: int) -> str:
    out = ['"""M."""\n\n']
    for c in range(classes):
        out.append(f'class C{c}:\n    """Class {c}."""\n\n    size: int = 1\n\n')
        out.extend(f'    def m{i}(self, x: int) -> int:\n        """{DOC}"""\n        return x\n\n'
                   for i in range(methods))
    out.extend(f'def f{i}(a, b=2):\n    """{DOC}"""\n    return a\n\n\n' for i in range(functions))
    return "".join(out)


def _facts(source: str):
    return analyse_source("pkg/m.py", source.encode())


def test_a_small_file_keeps_everything_on_its_page() -> None:
    facts = _facts(_source(3, 10, 10))
    assert parts.plan(facts) == {} and parts.member_parts(facts) == {}
    assert parts.page_of("pkg/m.py", facts, "method-C0.m1") == "pkg/m.py_docs.md"


def test_members_and_functions_go_to_parts_in_page_order_a_class_whole() -> None:
    facts = _facts(_source(4, 60, 120))
    moved = parts.plan(facts)
    assert [moved[f"class-C{c}"] for c in range(4)] == [2, 2, 3, 3]  # about 25,000 estimated bytes a class
    assert moved["function-f0"] == 3 and moved["function-f119"] == max(moved.values())
    members = parts.member_parts(facts)
    assert members["method-C2.m59"] == 3 and members["attr-C2.size"] == 3 and "class-C2" not in members
    assert parts.page_of("pkg/m.py", facts, "method-C2.m59") == "pkg/m.py_docs.part3.md"
    assert parts.page_of("pkg/m.py", facts, "class-C2") == "pkg/m.py_docs.md"  # classes stay
    assert parts.plan(_facts(_source(4, 60, 120))) == moved  # the same facts, the same parts


def test_part_names_sit_beside_the_page_and_are_never_another_page_kind() -> None:
    assert parts.part_page("a/b.py", 1) == "a/b.py_docs.md"
    assert parts.part_page("a/b.py", 3) == "a/b.py_docs.part3.md"
    assert parts.is_part("a/b.py_docs.part3.md") and not parts.is_part("a/b.py_docs.md")
    assert not parts.is_part("a/b.py_docs.part03.md") and not parts.is_part("a/x.part2.md")
    known = {"a/b.py_docs.md", "a/b.py_docs.part2.md", "a/b.py_docs.part3.md", "a/b.py_docs.part5.md"}
    assert parts.part_paths("a/b.py_docs.md", known) == ["a/b.py_docs.part2.md", "a/b.py_docs.part3.md"]


def test_the_page_links_its_parts_and_each_part_holds_its_anchors() -> None:
    source = _source(4, 60, 120)
    facts = _facts(source)
    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=10**6,
                      relations=Relations({"pkg/m.py": facts.imports}), facts={"pkg/m.py": facts},
                      sizes={"pkg/m.py": len(source.encode())}, folders=["", "pkg"])
    renderer = Renderer()
    pages = dict(renderer.render_pages(where_of(site), "docs", "pkg/m.py",
                                       {**_inputs(site), "doclinks": {}}, site.facts, source))
    count = max(parts.plan(facts).values())
    assert list(pages) == ["pkg/m.py_docs.md", *(f"pkg/m.py_docs.part{n}.md" for n in range(2, count + 1))]
    main = pages["pkg/m.py_docs.md"]
    assert page_errors(main, DOCS_SECTIONS) == [] and len(main.encode()) <= PAGE_LIMIT
    assert '<a id="class-C2"></a>' in main and '<a id="method-C2.m1"></a>' not in main
    assert "- **Members**: 1 attribute and 60 methods on [m.py_docs.part3.md](m.py_docs.part3.md#members-class-C2)" \
        in main
    assert '<a id="members-class-C2"></a>' in pages["pkg/m.py_docs.part3.md"]
    for anchor, n in parts.member_parts(facts).items():
        assert f'<a id="{anchor}"></a>' in pages[parts.part_page("pkg/m.py", n)], anchor
    assert all(len(p.encode()) <= PAGE_LIMIT for p in pages.values())
    kw = renderer.file_kw(site, "pkg/m.py")
    assert "[`C0.m0`](m.py_docs.part2.md#method-C0.m0)" in kw and "[docs](m.py_docs.md#class-C2)" in kw
    assert "[docs](m.py_docs.part3.md#function-f0)" in kw


def _inputs(site: Site) -> dict:
    from repodoc_lsp.render.pages import gather_docs
    return gather_docs(site, "pkg/m.py")


def test_a_class_whose_members_alone_pass_a_part_spreads_over_parts_in_order() -> None:
    source = _source(1, 300, 0)
    facts = _facts(source)
    of_class, members = parts.assign(facts)
    assert of_class["class-C0"] == [2, 3, 4]
    order = [members[f"method-C0.m{i}"] for i in range(300)]
    assert order == sorted(order) and members["attr-C0.size"] == 2
    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=10**6,
                      relations=Relations({"pkg/m.py": facts.imports}), facts={"pkg/m.py": facts},
                      sizes={"pkg/m.py": len(source.encode())}, folders=["", "pkg"])
    pages = dict(Renderer().render_pages(where_of(site), "docs", "pkg/m.py", _inputs(site), site.facts, source))
    assert "on [m.py_docs.part2.md](m.py_docs.part2.md#members-class-C0), [m.py_docs.part3.md](" \
        "m.py_docs.part3.md#members-class-C0) and [m.py_docs.part4.md](m.py_docs.part4.md#members-class-C0)" \
        in pages["pkg/m.py_docs.md"]
    for n in (2, 3, 4):
        part = pages[f"pkg/m.py_docs.part{n}.md"]
        assert '<a id="members-class-C0"></a>' in part and len(part.encode()) <= PAGE_LIMIT
        assert {a for a, k in members.items() if k == n} == {a for a in members if f'<a id="{a}"></a>' in part}


def test_the_rule_runs_once_for_the_same_facts_and_again_for_other_symbols(monkeypatch) -> None:
    """A render worker asks for a file's parts for its page, its keyword page and its folder's page
    from the same facts: the rule runs once for them, and again for facts given other symbols."""
    runs: list[object] = []
    plain = parts._assign

    def counted(facts):  # type: ignore[no-untyped-def]
        runs.append(facts)
        return plain(facts)

    monkeypatch.setattr(parts, "_assign", counted)
    facts = _facts(_source(4, 60, 120))
    moved = parts.member_parts(facts)
    assert parts.plan(facts) and parts.assign(facts)[1] == moved and parts.part_of(facts, "function-f0") == 3
    assert runs == [facts]
    facts.symbols = facts.symbols[:1]  # the class alone: nothing leaves the page
    assert parts.member_parts(facts) == {} and len(runs) == 2
    other = _facts(_source(4, 60, 120))
    assert parts.member_parts(other) == moved and len(runs) == 3
