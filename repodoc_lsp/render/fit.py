"""A file page within its size budget: the page, and the part pages that take what does not fit.

Members go first, as the parts rule says (`parts.py`: a function of the file's facts alone); then
the complete lists the page folds; then the entries of its last classes, whole; only when that is
not enough is the page brief (docstrings cut to their first sentence). Each step follows from the
page's view alone (its key), so a page and its parts change together.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

from repodoc_lsp.analysis.model import Symbol
from repodoc_lsp.analysis.signature import annotation_spans
from repodoc_lsp.render import markdown as md
from repodoc_lsp.render.anchors import strip_aliases
from repodoc_lsp.render.environment import GuardedTemplate
from repodoc_lsp.render.links import LIST_LIMIT, link_text, list_groups, page_link
from repodoc_lsp.render.parts import assign, moved_bytes, part_page
from repodoc_lsp.render.paths import docs_page
from repodoc_lsp.words import plural

PAGE_LIMIT = 100_000  # bytes: a file page whose embedded source would take it past this leaves it out
LISTS_BUDGET = 80_000  # bytes of lists or class entries a part page past the members' parts takes

Templates = Mapping[str, GuardedTemplate]
Targets = Mapping[str, tuple[str, str, int]]  # a name docstrings mention -> (file, anchor, part)
Pages = list[tuple[str, str]]  # (path, Markdown): a page and its part pages


def _size(out: str, context: dict) -> int:
    """The bytes of the file page `out` made from `context`, without the rename aliases it carries
    (old anchors a kept page keeps so that old links still land; a fresh run has none): whether a
    page embeds its source, is brief or sends entries to parts, and the sizes it states, must not
    depend on the page's history."""
    return len(strip_aliases(out, context["aliases"]).encode())


_DOTTED_NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*")  # a dotted name, as `annotation_spans` reads one


def signature_links(classes: list[Symbol], methods_of: Mapping[str, list[Symbol]], functions: list[Symbol],
                    links: Mapping[str, str], targets: Targets) -> dict[str, dict[str, str]]:
    """The annotation names each signature links (by the definition's anchor): a class, function or
    module the first time the page's signatures name it, in page order (classes with their methods,
    then functions); later signatures show it as code. One link per page and definition keeps the
    tree within its size budget (signatures name the workspace's classes over and over)."""
    seen: set[str] = set()
    found: dict[str, dict[str, str]] = {}
    if not links:
        return found
    names = links.keys()
    for s in [*(m for c in classes for m in methods_of.get(c.anchor, ())), *functions]:
        # An annotation's name is one of the signature's dotted names as `_DOTTED_NAME` finds them
        # (a name starts where no name character is before it, and runs as far): a signature
        # naming none of the links' names (most) is not parsed for its annotations.
        if not s.signature or names.isdisjoint(_DOTTED_NAME.findall(s.signature)):
            continue
        for a, b in annotation_spans(s.signature):
            name = s.signature[a:b]
            href = links.get(name)
            if href is None or href in seen or targets[name][1].startswith("attr-"):
                continue
            seen.add(href)
            found.setdefault(s.anchor, {})[name] = href
    return found


def doclinks(rel: str, part: int, targets: Targets) -> dict[str, str]:
    """The links of the names docstrings and signatures mention, from part `part` of `rel`'s page
    (`#anchor` for a definition on that very page)."""
    page = part_page(rel, part)
    return {name: md.href("", anchor) if r == rel and anchor and n == part
            else page_link(page, part_page(r, n) if anchor else docs_page(r), anchor)
            for name, (r, anchor, n) in targets.items()}


def _users_bytes(xref: Mapping[str, dict], anchors: Iterable[str]) -> int:
    """About how many bytes the Used by lists of the entries `anchors` take (`xref`: the view's
    links): a line per file of the first `LIST_LIMIT`, then the complete list folded by folder."""
    total = 0
    for anchor in anchors:
        users = xref.get(anchor, {}).get("users")
        if users:
            total += 80 + sum(len(u["text"]) + len(u["href"]) + len(u["note"]) + 6 for u in users[:LIST_LIMIT])
            if len(users) > LIST_LIMIT:
                total += 200 + sum(len(u["short"]) + len(u["href"]) + 6 for u in users)
    return total


def lay_out(templates: Templates, rel: str, context: dict, moved: Mapping[str, int], targets: Targets) -> Pages:
    """The file page of `rel` made from its view (`context`) and its part pages, the page first:
    `moved` (the parts rule's plan) sends members to parts; the source is embedded only while the
    page stays within `PAGE_LIMIT`; what still puts it over goes to further parts (`_fit`)."""
    context["page_limit"] = PAGE_LIMIT
    if moved:
        return _split(templates, rel, context, moved, targets)
    context["sig_links"] = signature_links(context["classes"], context["methods_of"], context["functions"],
                                           context["doclinks"], targets)
    template = templates["file_docs"]
    out = template.render(**context)
    if context["embed"] and (size := _size(out, context)) > PAGE_LIMIT:  # the source can be opened elsewhere
        context.update(embed=False, source="", with_source=size)
        out = template.render(**context)
    # still over: long lists, then class entries, go to part pages; docstrings are cut last (`_fit`)
    out, more = _fit(templates, rel, context, out, 2, targets)
    return [(context["page"], out), *more]


def _moved_lines(rel: str, context: dict, moved: Mapping[str, int], of_class: Mapping[str, list[int]],
                 count: int) -> dict:
    """What the page says in place of the entries `moved` sends to parts 2 to `count`: per class whose
    members left, what left and for which parts (`moved`); the functions and the local classes' lines
    each part holds."""
    classes, functions = context["classes"], context["functions"]
    methods_of, attributes_of = context["methods_of"], context["attributes_of"]
    names = {n: posixpath.basename(part_page(rel, n)) for n in range(2, count + 1)}
    shown: dict[str, dict] = {}
    for c in classes:
        if c.anchor in of_class:
            n_attr = len(attributes_of.get(c.anchor, {}).get("entries", ()))
            n_meth = len(methods_of.get(c.anchor, ()))
            what = [plural(n, word, grouped=True) for n, word in ((n_attr, "attribute"), (n_meth, "method")) if n]
            shown[c.anchor] = {"what": " and ".join(what),
                               "parts": [(names[n], md.href(names[n])) for n in of_class[c.anchor]]}
    local = [c for c in classes if c.anchor in context["local_classes"] and c.anchor in of_class]
    function_parts: list[dict] = []
    local_parts: list[dict] = []
    for n in range(2, count + 1):
        for listed, held in ((function_parts, [f for f in functions if moved.get(f.anchor) == n]),
                             (local_parts, [c for c in local if of_class[c.anchor][0] == n])):
            if held:
                listed.append({"count": len(held), "first": held[0].qualname, "last": held[-1].qualname,
                               "name": names[n], "href": md.href(names[n]), "classes": held})
    shown.update((f.anchor, {}) for f in functions if f.anchor in moved)
    return {"moved": shown, "function_parts": function_parts, "local_parts": local_parts}


def _split(templates: Templates, rel: str, context: dict, moved: Mapping[str, int], targets: Targets) -> Pages:
    """The page of `rel` without the entries `moved` sends to part pages, and those part pages
    (`parts.py`), each made from the page's view (`context`). They are *brief* when the page in
    one piece, without its source, would pass the limit: this page's analysis as rendered plus
    the rule's estimate of the entries that left it (`parts.moved_bytes`), so nothing is
    rendered twice to decide it."""
    page = context["page"]
    count = max(moved.values())
    facts = context["facts"]
    of_class, members = assign(facts)  # one pass of the rule for the page and its parts
    kept_classes = [c for c in context["classes"] if c.anchor not in moved]
    kept_functions = [f for f in context["functions"] if f.anchor not in moved]
    context = {**context, **_moved_lines(rel, context, moved, of_class, count),
               "sig_links": signature_links(kept_classes, context["methods_of"], kept_functions, context["doclinks"],
                                            targets)}
    template = templates["file_docs"]
    out = template.render(**{**context, "embed": False, "source": ""})
    whole = _size(out, context) + moved_bytes(facts, members) + _users_bytes(context["xref"], members)
    if whole > PAGE_LIMIT:  # what the page says its analysis takes in one piece (docstrings stay whole)
        context.update(without_source=whole, estimated=True)
    if context["embed"]:
        out = template.render(**context)
    if context["embed"] and (size := _size(out, context)) > PAGE_LIMIT:
        context.update(embed=False, source="", with_source=size)
        out = template.render(**context)
    out, more = _fit(templates, rel, context, out, count + 1, targets)
    total = count + len(more)
    pages = [(page, out)]
    for n in range(2, count + 1):
        pages.append((part_page(rel, n), _member_part(templates, rel, n, total, context, moved, of_class, members,
                                                      targets)))
    return pages + more


def _member_part(templates: Templates, rel: str, n: int, total: int, context: dict, moved: Mapping[str, int],
                 of_class: Mapping[str, list[int]], members: Mapping[str, int], targets: Targets) -> str:
    """Part page `n` of `total` of `rel`'s page: the members and functions the parts rule gives it."""
    page = context["page"]
    methods_of, attributes_of = context["methods_of"], context["attributes_of"]
    mine = [c for c in context["classes"] if n in of_class.get(c.anchor, ())]
    mine_classes = [c for c in mine if c.anchor not in context["local_classes"]]
    mine_local = [c for c in mine if c.anchor in context["local_classes"]]  # their lines
    mine_methods = {c.anchor: [m for m in methods_of.get(c.anchor, ()) if members.get(m.anchor) == n]
                    for c in mine}
    mine_attributes = {c.anchor: {**group, "entries": [e for e in group["entries"]
                                                        if members.get(e["anchor"]) == n]}
                       for c in mine if (group := attributes_of.get(c.anchor))}
    mine_attributes = {a: group for a, group in mine_attributes.items() if group["entries"]}
    mine_functions = [f for f in context["functions"] if moved.get(f.anchor) == n]
    links = doclinks(rel, n, targets)
    what = []
    if mine_classes:
        what.append(f"the attributes and methods of {plural(len(mine_classes), 'class', grouped=True)}")
    if mine_functions:
        what.append(plural(len(mine_functions), "function", grouped=True))
    if mine_local:
        what.append(f"the lines of {plural(len(mine_local), 'local class', grouped=True)}")
    view = {**context, "page": part_page(rel, n), "part": n, "parts": total, "what": " and ".join(what),
            "main_name": posixpath.basename(page), "main_href": md.href(posixpath.basename(page)),
            "part_classes": mine_classes, "part_functions": mine_functions, "part_local": mine_local,
            "doclinks": links,
            "methods_of": mine_methods, "attributes_of": mine_attributes, "brief": False,
            "sig_links": signature_links(mine_classes, mine_methods, mine_functions, links, targets)}
    text = templates["file_part"].render(**view)
    if _size(text, view) > PAGE_LIMIT:  # the rule's part holds its entries whole, but for huge lists
        text = templates["file_part"].render(**{**view, "brief": True})
    return text


def _folded_lists(context: dict) -> list[tuple[str, str, str, list[dict]]]:
    """The lists the page folds, in page order, as (anchor, kind, qualname, items): Used by of the
    methods and Subclassed by and Used by of each class, Used by of each function, Imported by, tests."""
    moved, xref = context["moved"], context["xref"]
    blocks = []
    for c in context["classes"]:
        if c.anchor not in moved:
            blocks += [(f"list-users-{m.anchor}", "method users", m.qualname, xref[m.anchor]["users"])
                       for m in context["methods_of"].get(c.anchor, ()) if m.anchor in xref]
        x = xref.get(c.anchor)
        if x:
            blocks += [(f"list-subclasses-{c.anchor}", "subclasses", c.qualname, x["subclasses"]),
                       (f"list-users-{c.anchor}", "users", c.qualname, x["users"])]
    for f in context["functions"]:
        if f.anchor not in moved and (x := xref.get(f.anchor)):
            blocks.append((f"list-users-{f.anchor}", "users", f.qualname, x["users"]))
    blocks += [("list-imported-by", "importers", "", context["importers"]),
               ("list-tests", "tests", "", context["tests"])]
    return blocks


def _list_parts(blocks: list[tuple[str, str, str, list[dict]]],
                first: int) -> tuple[list[list[dict]], dict[str, list[int]]]:
    """The lists of `blocks` longer than `LIST_LIMIT`, grouped by folder, in parts of about
    `LISTS_BUDGET` bytes numbered from `first` (a list may go on on the next part); and the parts
    each list's anchor is on."""
    parts: list[list[dict]] = [[]]
    used = 0
    where_of_list: dict[str, list[int]] = {}
    for anchor, kind, qual, items in blocks:
        if len(items) <= LIST_LIMIT:
            continue
        chunk: dict | None = None
        for group in list_groups(items, "name"):
            size = len(group["name"]) + 6 + sum(len(it["short"]) + len(it["href"]) + 4 for it in group["entries"])
            if used and used + size > LISTS_BUDGET:  # the list goes on on the next part
                parts.append([])
                used, chunk = 0, None
            if chunk is None:
                chunk = {"anchor": anchor, "kind": kind, "qual": qual, "count": len(items), "groups": [],
                         "continued": anchor in where_of_list}
                parts[-1].append(chunk)
                where_of_list.setdefault(anchor, []).append(first + len(parts) - 1)
                used += 200
            chunk["groups"].append(group)
            used += size
    return parts, where_of_list


def _lists_linked(rel: str, context: dict, where_of_list: Mapping[str, list[int]]) -> dict:
    """`context` whose folded lists link to the part pages holding them whole (`where_of_list`)."""
    away = {anchor: " and ".join(f"on [{link_text(name)}]({md.href(name, anchor)})"
                                 for n in ns for name in (posixpath.basename(part_page(rel, n)),))
            for anchor, ns in where_of_list.items()}
    xref = {a: {**x, "users_away": away.get(f"list-users-{a}", ""),
                "subclasses_away": away.get(f"list-subclasses-{a}", "")} for a, x in context["xref"].items()}
    return {**context, "xref": xref, "away_lists": {"imported-by": away.get("list-imported-by", ""),
                                                    "tests": away.get("list-tests", "")}}


def _fit(templates: Templates, rel: str, context: dict, out: str, first: int,
         targets: Targets) -> tuple[str, Pages]:
    """The page `out` (made from `context`), and the part pages from number `first` on that take
    what still puts it over the limit once its members left: first the complete lists it folds
    (Imported by, tests, Used by, Subclassed by: a part page of lists, linked from the folded
    line; the page then keeps their count and breakdown, not their first 20), then the entries
    of its last classes, whole (a line each stays, with the class's anchor and those of its
    members still on the page, linking to the part holding its entry); only when that is not
    enough is the page brief (docstrings cut to their first sentence). All follow from the
    page's view alone (its key), and no link of another page points into them: links land on
    the page's anchors."""
    if (full := _size(out, context)) <= PAGE_LIMIT:
        return out, []
    template = templates["file_docs"]
    parts, where_of_list = _list_parts(_folded_lists(context), first)
    n_lists = len(parts) if where_of_list else 0
    context = _lists_linked(rel, context, where_of_list)
    if n_lists:
        out = template.render(**context)
    if n_lists and _size(out, context) > PAGE_LIMIT:  # the lists' first 20 go too: count and link stay
        context = {**context, "short_lists": True, "without_source": max(context["without_source"], full)}
        out = template.render(**context)
    entries, out = _classes_away(templates, rel, context, out, first + n_lists, targets)
    if _size(out, context) > PAGE_LIMIT and not context["brief"]:
        # the last resort, when whole class entries on parts of their own are not enough:
        # docstrings cut to their first sentence, counts for lists
        context = {**context, "brief": True, "without_source": max(context["without_source"], full)}
        out = template.render(**context)
        entries, out = _classes_away(templates, rel, context, out, first + n_lists, targets)
    return out, _more_pages(templates, rel, context, parts[:n_lists], entries, first, targets)


def _more_pages(templates: Templates, rel: str, context: dict, lists: list[list[dict]],
                entries: list[list[Symbol]], first: int, targets: Targets) -> Pages:
    """The part pages from number `first` on: those of complete lists, then those of class entries."""
    page = context["page"]
    main = {"main_name": posixpath.basename(page), "main_href": md.href(posixpath.basename(page)),
            "parts": first - 1 + len(lists) + len(entries)}
    more = []
    for i, chunks in enumerate(lists):
        n = first + i
        more.append((part_page(rel, n), templates["file_more"].render(
            **{**context, **main, "page": part_page(rel, n), "part": n, "lists": chunks, "entries": [],
               "what": "complete lists that page folds"})))
    for i, held in enumerate(entries):
        n = first + len(lists) + i
        links = doclinks(rel, n, targets)
        more.append((part_page(rel, n), templates["file_more"].render(
            **{**context, **main, "page": part_page(rel, n), "part": n, "lists": [], "entries": held,
               "doclinks": links, "sig_links": signature_links(held, context["methods_of"], [], links, targets),
               "what": f"the entries of {plural(len(held), 'class', grouped=True)}"})))
    return more


def _classes_away(templates: Templates, rel: str, context: dict, out: str, first: int,
                  targets: Targets) -> tuple[list[list[Symbol]], str]:
    """The classes whose entries go to part pages from number `first` on (`_entries_away`) so
    that the page `out` (made from `context`) passes no limit, and the page without them."""
    entries: list[list[Symbol]] = []
    whole = out
    classes, moved = context["classes"], context["moved"]
    for margin in (2_000, 10_000, 30_000):  # the entries' sizes as rendered, the stubs' as about 200 bytes
        if _size(out, context) <= PAGE_LIMIT:
            break
        found = _entries_away(context, whole, margin)
        if not found or found == entries:
            break
        entries = found
        away_classes = {c.anchor: {"name": (name := posixpath.basename(part_page(rel, first + i))),
                                   "href": md.href(name)}
                        for i, held in enumerate(entries) for c in held}
        # The page links what its own signatures name first, not counting the entries that left
        # it (their part links them): else a name first named by a moved class is linked nowhere here.
        sig_links = signature_links(
            [c for c in classes if c.anchor not in moved and c.anchor not in away_classes],
            context["methods_of"], [f for f in context["functions"] if f.anchor not in moved],
            context["doclinks"], targets)
        out = templates["file_docs"].render(**{**context, "away_classes": away_classes, "sig_links": sig_links})
    return entries, out


def _entries_away(context: dict, out: str, margin: int) -> list[list[Symbol]]:
    """The last classes of the page `out` whose entries go to part pages so that it takes at most
    `PAGE_LIMIT - margin` bytes, in parts of at most `LISTS_BUDGET` bytes of entries (a class
    whose members are on the page keeps their anchors on its line: other pages link to them)."""
    local = context["local_classes"]  # a local class's line takes no more than its stub would
    classes = [c for c in context["classes"] if c.anchor not in local or c.anchor not in context["moved"]]
    out = strip_aliases(out, context["aliases"])  # measured as a fresh run would measure it (`_size`)
    starts = [out.find(f'\n<a id="{c.anchor}"></a>') for c in classes]
    if not classes or min(starts) < 0:
        return []
    tail = min((i for i in (out.find(h, starts[-1]) for h in ("\n### Functions\n", "\n### Module-level names\n",
                                                             "\n## Architecture & Design\n")) if i >= 0),
               default=len(out))
    sizes = [len(out[a:b].encode()) for a, b in zip(starts, [*starts[1:], tail], strict=True)]
    need = len(out.encode()) - (PAGE_LIMIT - margin)
    away: list[tuple[Symbol, int]] = []
    for c, size in reversed(list(zip(classes, sizes, strict=True))):
        if need <= 0:
            break
        if c.anchor in local:
            continue
        away.append((c, size))  # its members' anchors stay on the page too, on its line
        need -= size - 200 - 40 * (0 if c.anchor in context["moved"] else
                                    len(context["methods_of"].get(c.anchor, ()))
                                    + len(context["attributes_of"].get(c.anchor, {}).get("entries", ())))
    groups: list[list[Symbol]] = []
    used = 0
    for c, size in reversed(away):
        if not groups or used + size > LISTS_BUDGET:
            groups.append([])
            used = 0
        groups[-1].append(c)
        used += size
    return groups
