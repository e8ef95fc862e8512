"""How a generated tree reads to a newcomer: the measures of issue 35, found independently of repodoc.

    python bench/check_reading.py DOCS [--sources DIR] [--show N]

Pages are read as CommonMark (markdown-it-py) and the sources with `ast`; nothing of repodoc is
imported. Measures (target in brackets):

- swallowed labels [0]: a line starting `**Label**` at column 0 that CommonMark does not read as the
  start of a top-level paragraph (it lands in the preceding list item, or continues a paragraph);
- cut docstrings [0]: brief entries (`... ([N more lines](...))`) on file pages, and how many of
  those end mid-sentence (not at `.`, `!`, `?` or `:`);
- mid-sentence summaries in `doc.md` lists [<= 2%]: a summary shorter than its docstring's first
  paragraph (from `ast`) that does not end at a sentence;
- purpose [>= 95%]: of the Python files whose purpose line is derived (no module docstring, no
  leading comment of prose) and whose public top-level names have Used by counts (the
  `**Used by** (N files` of their own entries), those whose File Purpose names the most-used one
  first;
- sub-folders without a purpose [0]: `index.md` entries under `## Folders` that give only counts;
- attribute recall [>= 0.98]: every `self.x =` anywhere in a class's `__init__` (any depth, tuple
  targets, annotated) against the `attr-Class.x` anchors of the file's page and its parts;
- keyword noise [<= 5%]: `_kw.md` entries that are dunders, relative module strings or imports of
  the standard library (or `typing_extensions`).
"""

from __future__ import annotations

import argparse
import ast
import posixpath
import re
import sys
from collections import Counter
from pathlib import Path

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark")
_LABEL = re.compile(r"\*\*[^*\n]{1,50}\*\*(?:$| \(|:)")  # a label: `**Used by** (3 files):`, not `**bold** words`
_CUT = re.compile(r"^(.*?) \(\[\d[\d,]* more lines?\]\(", re.M)
_ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
_USED = re.compile(r"\*\*Used by\*\* \((\d[\d,]*) files?")
_DOC_ITEM = re.compile(r"^- \[`[^`]+`\]\(([^)#]+)#([^)]+)\) in `[^`]*`(?: \([^)]*\))?: (.+)$", re.M)
_SENTENCE_END = re.compile(r"[.!?:;][)\]\"'`*_]*$")
_KW_ENTRY = re.compile(r"^- \*\*`([^`]+)`\*\*: \[[^\]]*\]\([^)#]*#?([^)]*)\)", re.M)
_STDLIB = set(sys.stdlib_module_names) | {"typing_extensions", "__future__"}


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def swallowed_labels(text: str) -> list[int]:
    """Lines starting with a bold label at column 0 that do not start a top-level block."""
    tokens = _MD.parse(text)
    starts: set[int] = set()
    in_para: dict[int, bool] = {}  # line -> inside a paragraph (not a fence, HTML or code block)
    depth = 0
    for t in tokens:
        if t.type in ("bullet_list_open", "ordered_list_open", "blockquote_open"):
            depth += 1
        elif t.type in ("bullet_list_close", "ordered_list_close", "blockquote_close"):
            depth -= 1
        elif t.type == "paragraph_open" and t.map:
            if depth == 0:
                starts.add(t.map[0])
            for line in range(*t.map):
                in_para[line] = True
    lines = text.split("\n")
    return [i + 1 for i, line in enumerate(lines)
            if line.startswith("**") and _LABEL.match(line) and in_para.get(i) and i not in starts]


def docstring_of(tree: ast.Module, anchor: str) -> str | None:
    """The docstring of the class or function an anchor (`class-A.B`, `function-f-2`) names."""
    kind, _, rest = anchor.partition("-")
    if kind not in ("class", "function", "method"):
        return None
    nth = 1
    if (m := re.fullmatch(r"(.*)-(\d+)", rest)) and not rest.endswith("-"):
        rest, nth = m.group(1), int(m.group(2))
    found: list[ast.AST] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + node.name
                if q == rest:
                    found.append(node)
                walk(node.body, q + ".")
            elif isinstance(node, (ast.If, ast.Try)):
                walk(node.body, prefix)
                walk(getattr(node, "orelse", []), prefix)
    walk(tree.body, "")
    if len(found) < nth:
        return None
    # overloads (`@overload` stubs) have no docstring: the definition that has one speaks for them
    docs = [ast.get_docstring(f) for f in found]  # type: ignore[arg-type]
    return docs[nth - 1] or next((d for d in docs if d), None)


def first_paragraph(doc: str) -> str:
    return doc.strip().split("\n\n", 1)[0]


def mid_sentence(summary: str, doc: str | None) -> bool:
    summary = summary.replace("*(from", "").strip()
    if _SENTENCE_END.search(summary):
        return False
    if doc is None:
        return True
    return len(words(summary)) < len(words(first_paragraph(doc)))


def init_attributes(tree: ast.Module) -> dict[str, set[str]]:
    """Each class's (by qualname) `self.x` targets anywhere in its `__init__` (nested defs aside)."""
    out: dict[str, set[str]] = {}

    def targets(t: ast.expr, into: set[str]) -> None:
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e, into)
        elif isinstance(t, ast.Starred):
            targets(t.value, into)
        elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
            into.add(t.attr)

    def scan(node: ast.AST, into: set[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Assign):
                for t in child.targets:
                    targets(t, into)
            elif isinstance(child, ast.AnnAssign):
                targets(child.target, into)
            scan(child, into)

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                q = prefix + node.name
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__":
                        scan(item, out.setdefault(q, set()))
                walk(node.body, q + ".")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(node.body, prefix + node.name + ".")
    walk(tree.body, "")
    return out


def page_group(page: Path) -> str:
    """The text of a file page and its part pages."""
    texts = [page.read_text(encoding="utf-8")]
    stem = page.name[: -len(".md")]
    texts += [p.read_text(encoding="utf-8") for p in sorted(page.parent.glob(stem + ".part*.md"))]
    return "\n".join(texts)


def used_counts(text: str) -> dict[str, int]:
    """Each top-level public class's and function's Used by count, read from its entry."""
    counts: dict[str, int] = {}
    marks = list(_ANCHOR.finditer(text))
    for i, m in enumerate(marks):
        anchor = m.group(1)
        kind, _, name = anchor.partition("-")
        if kind not in ("class", "function") or "." in name or name.startswith("_") or re.search(r"-\d+$", name):
            continue
        end = next((n.start() for n in marks[i + 1:] if n.group(1).startswith(("class-", "function-"))), len(text))
        used = _USED.search(text, m.end(), end)
        counts[name] = max(counts.get(name, 0), int(used.group(1).replace(",", "")) if used else 0)
    return counts


def purpose_of(text: str) -> str:
    body = text.split("\n## File Purpose\n", 1)[1].split("\n## ", 1)[0].strip() if "\n## File Purpose\n" in text else ""
    return body.split("\n\n", 1)[0]


def parse(source: Path) -> ast.Module | None:
    try:
        return ast.parse(source.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return None


def check(docs: Path, sources: Path, show: int) -> dict[str, object]:
    res: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}

    def example(kind: str, text: str) -> None:
        examples.setdefault(kind, []).append(text)

    trees: dict[Path, ast.Module | None] = {}

    def tree_of(src: Path) -> ast.Module | None:
        if src not in trees:
            if len(trees) >= 256:  # a few folders' sources at a time (all of PyTorch's took 1.3 GB)
                trees.pop(next(iter(trees)))
            trees[src] = parse(src) if src.suffix == ".py" and src.is_file() else None
        return trees[src]

    for page in sorted(docs.rglob("*.md")):
        rel = page.relative_to(docs).as_posix()
        text = page.read_text(encoding="utf-8")
        for line in swallowed_labels(text):
            res["swallowed labels"] += 1
            example("swallowed labels", f"{rel}:{line}")
        if page.name.endswith("_kw.md"):
            for name, fragment in _KW_ENTRY.findall(text):
                res["keyword entries"] += 1
                module = fragment[len("import-"):] if fragment.startswith("import-") else ""
                if (name.startswith("__") and name.endswith("__")) or name.startswith(".") \
                        or (module and module.split(".")[0] in _STDLIB):
                    res["keyword noise"] += 1
                    if res["keyword noise"] % 97 == 1:
                        example("keyword noise", f"{rel}: {name}")
            continue
        if page.name == "index.md" and "\n## Folders\n" in text:
            section = text.split("\n## Folders\n", 1)[1].split("\n## ", 1)[0]
            for entry in re.findall(r"^- \[`[^`]+`\]\([^)]*\)(.*)$", section, re.M):
                res["sub-folders"] += 1
                rest = re.sub(r"\d[\d,]* (?:files?|sub-folders?|lines?)|[:;,.()\s]|and", "", entry)
                if not rest:
                    res["sub-folders without a purpose"] += 1
                    example("sub-folders without a purpose", f"{rel}: {entry.strip()}")
        if page.name == "doc.md":
            for target, anchor, summary in _DOC_ITEM.findall(text):
                src_page = posixpath.normpath((page.parent / target).as_posix())
                src = sources / re.sub(r"_docs(\.part\d+)?\.md$", "", str(Path(src_page).relative_to(docs))) \
                    if re.search(r"_docs(\.part\d+)?\.md$", target) else None
                tree = tree_of(src) if src else None
                doc = docstring_of(tree, anchor) if tree else None
                res["doc.md summaries"] += 1
                if mid_sentence(summary, doc):
                    res["doc.md summaries mid-sentence"] += 1
                    example("doc.md summaries mid-sentence", f"{rel}: {summary[-70:]}")
        if not re.search(r"_docs(\.part\d+)?\.md$", page.name):
            continue
        for cut in _CUT.findall(text):
            res["cut docstrings"] += 1
            if not _SENTENCE_END.search(cut.strip()):
                res["cut mid-sentence"] += 1
            if res["cut docstrings"] % 50 == 1:
                example("cut docstrings", f"{rel}: {cut[-70:]}")
        if ".part" in page.name or not page.name.endswith(".py_docs.md"):
            continue
        src = sources / rel[: -len("_docs.md")]
        tree = tree_of(src)
        if tree is None:
            continue
        group = page_group(page)
        anchors = set(_ANCHOR.findall(group))
        for cls, attrs in init_attributes(tree).items():
            for a in attrs:
                res["init attributes"] += 1
                if f"attr-{cls}.{a}" in anchors:
                    res["init attributes found"] += 1
                elif res["init attributes"] - res["init attributes found"] <= 200:
                    example("attributes missed", f"{rel}: {cls}.{a}")
        if ast.get_docstring(tree) is None and "\n*Derived from" in text.split("\n## File Purpose\n", 1)[-1][:3000]:
            counts = used_counts(group)
            if counts and max(counts.values()) > 0:
                res["purpose files"] += 1
                top = max(counts.values())
                spans = re.findall(r"`([^`]+)`", purpose_of(text))
                featured = next((s for s in spans if s in counts), None)
                if featured is not None and counts[featured] == top:
                    res["purpose features the most used"] += 1
                else:
                    best = [n for n, c in counts.items() if c == top]
                    example("purpose misses", f"{rel}: features {featured} ({counts.get(featured or '', 0)}), "
                                              f"most used {best[0]} ({top})")
    report: dict[str, object] = dict(res)
    ratio = lambda a, b: res[a] / res[b] if res[b] else 0.0  # noqa: E731
    print(f"swallowed labels: {res['swallowed labels']:,}")
    print(f"cut docstrings: {res['cut docstrings']:,} ({res['cut mid-sentence']:,} mid-sentence)")
    print(f"doc.md summaries mid-sentence: {res['doc.md summaries mid-sentence']:,} of {res['doc.md summaries']:,} "
          f"({ratio('doc.md summaries mid-sentence', 'doc.md summaries'):.1%})")
    print(f"purpose features the most-used public symbol: {res['purpose features the most used']:,} of "
          f"{res['purpose files']:,} ({ratio('purpose features the most used', 'purpose files'):.1%})")
    print(f"sub-folders without a purpose: {res['sub-folders without a purpose']:,} of {res['sub-folders']:,}")
    print(f"attribute recall: {res['init attributes found']:,} of {res['init attributes']:,} "
          f"({ratio('init attributes found', 'init attributes'):.4f})")
    print(f"keyword noise: {res['keyword noise']:,} of {res['keyword entries']:,} "
          f"({ratio('keyword noise', 'keyword entries'):.1%})")
    for kind, found in examples.items():
        for e in found[:show]:
            print(f"  {kind}: {e}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("docs", type=Path)
    parser.add_argument("--sources", type=Path, help="the workspace the tree documents (default: DOCS's parent)")
    parser.add_argument("--show", type=int, default=5, help="examples shown of each finding")
    args = parser.parse_args()
    check(args.docs, args.sources or args.docs.parent, args.show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
