"""Used by of the definitions of files read with tree-sitter, by name: the names each file uses
(`FileFacts.refs`, not the name at a definition, not in a comment) and the workspace-wide table of
who names what (`NameUsers`), kept a file at a time."""

from __future__ import annotations

from repodoc_lsp.analysis.model import FileFacts
from repodoc_lsp.analysis.treesitter import analyse_tree_sitter
from repodoc_lsp.analysis.treesitter.byname import NameUsers

HEADER = "#pragma once\n/// Adds two numbers.\nint add_numbers(int a, int b);\n"
MAIN = '#include "math.h"\nint main() {\n  // add_numbers in a comment\n  return add_numbers(1, 2);\n}\n'
OTHER = '#include "math.h"\nint twice(int x) { return add_numbers(x, x); }\n'


def _facts(files: dict[str, str]) -> dict[str, FileFacts]:
    return {rel: analyse_tree_sitter(rel, text) for rel, text in files.items()}


def test_used_names_leave_out_definitions_and_comments() -> None:
    facts = _facts({"math.h": HEADER, "main.cpp": MAIN, "app.ts": 'import { formatName } from "./util";\n'
                                                                  'console.log(formatName("a", "b"));\n'})
    assert "add_numbers" not in facts["math.h"].refs  # its definition, not a use
    assert dict(facts["main.cpp"].reference_lines())["add_numbers"] == (4,)  # line 3 is a comment
    assert dict(facts["app.ts"].reference_lines())["formatName"] == (1, 2)



def test_a_name_s_lines_are_its_first_in_the_text() -> None:
    """A name used as a variable and as a property (two node kinds of the names query, whose captures
    come in no fixed order) keeps the first lines naming it in the text, the same on every run."""
    text = "".join(f"let a{i} = token;\n" if i % 2 else f"x.token = {i};\n" for i in range(40))
    facts = _facts({"m.js": text})
    assert dict(facts["m.js"].reference_lines())["token"] == (1, 2, 3)

def test_table_follows_files_that_start_and_stop_naming_a_definition() -> None:
    facts = _facts({"math.h": HEADER, "main.cpp": MAIN, "other.cc": OTHER})
    table = NameUsers(facts.items())
    assert table.counted("add_numbers", "math.h") == ([("main.cpp", 4), ("other.cc", 2)], 2)

    # other.cc stops naming it: math.h's page changes (and other.cc's own)
    changed = table.update_many(_facts({"other.cc": "int twice(int x) { return x + x; }\n"}))
    assert changed == {"math.h", "other.cc"}
    assert table.counted("add_numbers", "math.h") == ([("main.cpp", 4)], 1)

    # a new file defines what main.cpp already names: its users are found without main.cpp changing
    changed = table.update_many(_facts({"main.cpp": MAIN.replace("add_numbers(1, 2)", "sub_numbers(1, 2)"),
                                        "sub.h": "int sub_numbers(int a, int b);\n"}))
    assert {"math.h", "sub.h"} <= changed
    assert table.counted("sub_numbers", "sub.h") == ([("main.cpp", 4)], 1)
    assert table.counted("add_numbers", "math.h") == ([], 0)

    # the defining file gone: no table of its names
    table.update_many({"sub.h": None})
    assert table.users("sub_numbers") == {}



def test_a_page_lists_a_names_users_once_and_not_for_namespaces() -> None:
    """A class and its constructor share a name: its users are listed once, at the class; a namespace
    shows none (every file of it names it)."""
    from repodoc_lsp.analysis.relations import Relations
    from repodoc_lsp.render.gather import gather_docs
    from repodoc_lsp.render.pages import Site

    facts = _facts({"box.h": "namespace shapes {\nclass Box {\n public:\n  Box();\n};\n}\n",
                    "use.cpp": '#include "box.h"\nshapes::Box make() { return shapes::Box(); }\n'})
    site = Site.build(project="p", root="/r", out="/r/docs", embed_max=0,
                      relations=Relations({rel: f.imports for rel, f in facts.items()}), facts=facts,
                      sizes={rel: 1 for rel in facts}, folders=[""])
    site.by_name = NameUsers(facts.items())
    assert gather_docs(site, "box.h")["named"] == {"class-shapes.Box": ([("use.cpp", 2)], 1)}


def test_an_edit_of_the_only_file_defining_a_name_keeps_its_other_users() -> None:
    """The file defining `helper`, alone, and naming it itself: an edit moving its own use lost the
    other files' uses (the name was tabled anew from that file alone)."""
    files = {"x.c": "int helper(int a) { return a; }\nint main() { return helper(1); }\n",
             "y.c": "int twice(void) { return helper(2); }\n"}
    table = NameUsers(_facts(files).items())
    assert table.counted("helper", "x.c") == ([("y.c", 1)], 1)
    edited = {**files, "x.c": "\n" + files["x.c"]}
    assert table.update_many(_facts({"x.c": edited["x.c"]})) == {"x.c"}
    fresh = NameUsers(_facts(edited).items())
    assert table.counted("helper", "x.c") == fresh.counted("helper", "x.c") == ([("y.c", 1)], 1)
    assert table.users("helper") == fresh.users("helper") == {"x.c": 3, "y.c": 1}
