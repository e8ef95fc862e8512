"""`repodoc check` on real projects: false alarms against hand labels, planted renames, suggestions.

    python bench/realprojects/bench_check.py                 # every project of corpus.py
    python bench/realprojects/bench_check.py --only click --renames 0 --show
    python bench/realprojects/bench_check.py --since         # planted renames also with --since HEAD

Per project:
- items: what `repodoc check --no-pages` reports at the project's root; each is looked up in
  labels/NAME.json (key `file:line:target` -> {"label": "true" | "history" | "false", "why": ...});
  false alarms = items labelled "false" (unlabelled items are counted and listed apart, `--show`).
- planted renames: names the docs reference (outside history files: in a Python role, not `:ref:` or
  `:fixture:`; a dotted name from a package or a CamelCase head, a CamelCase name), defined exactly once
  in the project's code (`def NAME`/`class NAME` read with `ast`: not an example in a docstring; a stub
  and `@overload`s repeat a definition) and in no item reported before, picked deterministically (sha1 order): each is
  renamed in every .py file (every whole-word occurrence, as a rename leaving docs as they were),
  then a check must report a new item naming the old name in a doc. Members: names defined in a
  class body. A suggestion is right when it names the new name.
- time: the baseline check's own time as it prints it (warm cache; interpreter start aside).
The repodoc run is `python -m repodoc_lsp.cli` of this interpreter (install repodoc in it).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import roots

HERE = Path(__file__).resolve().parent
LABELS = HERE / "labels"
ITEM = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+):(?P<col>\d+): (?P<message>.*)$")
HISTORYISH = re.compile(r"(change|histor|news|release|upgrad|migrat|whatsnew|deprecat|announce|porting)",
                        re.IGNORECASE)
SKIP_DIRS = {".git", "tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "bench",
             "scripts", "tasks", "_build", "build", "dist", ".tox", "ci"}
SUFFIX = "Renamed"
PY_ROLES = {"class", "func", "meth", "mod", "attr", "exc", "data", "obj", "const", "function", "method", "module",
            "attribute", "exception", "any"}  # roles naming a Python object (`:ref:`, `:fixture:` do not)


def run_check(root: Path, *extra: str) -> tuple[list[dict[str, str]], float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "repodoc_lsp.cli", "check", "--no-pages", *extra, "."],
                          cwd=root, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    own = re.search(r", ([0-9.]+) s$", done.stdout.strip())
    took = float(own.group(1)) if own else took  # repodoc's own time (interpreter start aside)
    if done.returncode not in (0, 1) or not own:  # a traceback exits 1 too: no summary line then
        raise RuntimeError(f"repodoc check failed in {root} ({done.returncode}): {done.stderr[-500:]}")
    items = []
    for line in done.stdout.splitlines():
        m = ITEM.match(line)
        if m:
            item = m.groupdict()
            target = re.search(r"`([^`]+)`", item["message"])
            item["target"] = target.group(1) if target else ""
            item["key"] = f"{item['path']}:{item['line']}:{item['target']}"
            hint = re.search(r"\(did you mean `([^`]+)`\?\)", item["message"])
            item["suggestion"] = hint.group(1) if hint else ""
            items.append(item)
    return items, took


def load_labels(name: str) -> dict[str, dict[str, str]]:
    path = LABELS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def code_files(root: Path) -> list[Path]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        out.extend(Path(folder, f) for f in sorted(files) if f.endswith((".py", ".pyi")))
    return out


def all_py(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.py*") if p.suffix in (".py", ".pyi") and ".git" not in p.parts]


def doc_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.suffix in (".rst", ".md", ".txt") and p.is_file()
            and ".git" not in p.parts and "_build" not in p.parts]


def candidates(root: Path, reported: set[str]) -> tuple[list[str], list[str]]:
    """(top-level names, member names) the docs reference (outside history files: a role, a dotted
    name from a package or a class, a CamelCase name), defined once, named by no item reported before."""
    in_docs: set[str] = set()
    homes = (root, root / "src")
    tops = {p.parent.name for p in code_files(root) if p.name == "__init__.py" and p.parent.parent in homes}
    tops |= {p.stem for p in code_files(root) if p.parent in (root, root / "src")}
    for p in doc_files(root):
        rel = p.relative_to(root).as_posix()
        if HISTORYISH.search(rel) or p.name.lower().startswith(("license", "authors", "contrib")):
            continue
        text = p.read_text(errors="replace")
        for role, span in re.findall(r"(:[\w:]+:|\{[\w:]+\})?`+([^`\n]+)`+", text):
            span = span.split("<")[-1].strip(">~!. ").removesuffix("()")
            words = span.split(".")
            if not re.fullmatch(r"[A-Za-z_][\w.]*", span):
                continue
            # a reference form: a role's lone name, a dotted name from a package or a class (not a variable's
            # `request.host`), a CamelCase name
            python_role = role.strip(":{}").split(":")[-1] in PY_ROLES
            if (python_role and len(words) == 1) or (len(words) > 1 and (words[0] in tops or words[0][:1].isupper())) \
                    or (len(words) == 1 and re.fullmatch(r"_?[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*", span)):
                in_docs.update(w for w in words if len(w) >= 4)
    defined = definitions(code_files(root))
    modules = {p.stem for p in code_files(root)} | {p.parent.name for p in code_files(root)}
    top, members = [], []
    for name in sorted(in_docs - modules):  # a name that is also a module's stays valid as the module's
        where = defined.get(name)
        if not where or len(where) != 1 or name.startswith("_") or name.lower().startswith("test") \
                or any(re.search(rf"\b{name}\b", r) for r in reported):
            continue
        (top if where[0] == "top" else members).append(name)

    def order(names: list[str]) -> list[str]:
        return sorted(names, key=lambda n: hashlib.sha1(n.encode()).hexdigest())

    return order(top), order(members)


def definitions(files: list[Path]) -> dict[str, list[str]]:
    """Name -> the kind of each of its definitions ("top": a module's, "member": a class body's,
    "nested": a function's), read with `ast` (an example in a docstring defines nothing); a module's
    stub (`.pyi`) and `@overload`s repeat its definition: once."""
    seen: dict[str, dict[tuple[str, str], str]] = {}

    def walk(body: list[ast.stmt], module: str, qual: str, kind: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                seen.setdefault(node.name, {})[(module, f"{qual}.{node.name}")] = kind
                walk(node.body, module, f"{qual}.{node.name}",
                     "member" if isinstance(node, ast.ClassDef) else "nested")
            elif isinstance(node, (ast.If, ast.Try, ast.With)):  # `if TYPE_CHECKING:`, `try: ... except ImportError:`
                for block in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", []),
                              *(h.body for h in getattr(node, "handlers", []))):
                    walk(block, module, qual, kind)

    for p in files:
        try:
            tree = ast.parse(p.read_bytes())
        except (SyntaxError, ValueError):
            continue
        walk(tree.body, p.with_suffix("").as_posix(), "", "top")
    return {name: list(where.values()) for name, where in seen.items()}


def new_name(name: str) -> str:
    return f"{name}_{SUFFIX.lower()}" if name[:1].islower() else f"{name}{SUFFIX}"


def plant(root: Path, names: list[str], kind: str, since: bool) -> list[dict[str, object]]:
    results = []
    files = all_py(root)
    texts = {p: p.read_text(errors="surrogateescape") for p in files}
    baseline = {i["key"] for i in run_check(root)[0]}
    for name in names:
        word = re.compile(rf"\b{re.escape(name)}\b")
        changed = {}
        for p, text in texts.items():
            new = word.sub(new_name(name), text)
            if new != text:
                changed[p] = new
                p.write_text(new, errors="surrogateescape")
        try:
            modes = [("full", ())] + ([("since", ("--since", "HEAD"))] if since else [])
            row: dict[str, object] = {"name": name, "kind": kind, "new": new_name(name)}
            for mode, extra in modes:
                items = [i for i in run_check(root, *extra)[0] if i["key"] not in baseline or mode == "since"]
                hits = [i for i in items if not i["path"].endswith(".py") and re.search(rf"\b{name}\b", i["target"])]
                row[mode] = bool(hits)
                key = "" if mode == "full" else "since_"
                row[f"{key}items"] = [i["key"] for i in hits]
                row[f"{key}suggestions"] = [i["suggestion"] for i in hits if i["suggestion"]]
            results.append(row)
        finally:
            for p in changed:
                p.write_text(texts[p], errors="surrogateescape")
    return results


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="")
    parser.add_argument("--renames", type=int, default=10,
                        help="top-level and member renames per project (each; 10 tells 90%% per project)")
    parser.add_argument("--since", action="store_true", help="also check planted renames with --since HEAD")
    parser.add_argument("--show", action="store_true", help="print every item with its label")
    parser.add_argument("--json", type=Path, help="write every row here")
    args = parser.parse_args()
    rows, record = [], []
    totals = {k: 0 for k in ("items", "false", "unlabelled", "planted", "caught", "mplanted", "mcaught",
                             "sugg", "sright", "since", "ssugg", "ssright")}
    for name, root in roots(set(filter(None, args.only.split(","))) or None):
        run_check(root)  # warm the cache
        items, took = run_check(root)
        labels = load_labels(name)
        false = [i for i in items if labels.get(i["key"], {}).get("label") == "false"]
        unlabelled = [i for i in items if i["key"] not in labels]
        if args.show:
            for i in items:
                label = labels.get(i["key"], {})
                print(f"  [{label.get('label', '?'):7}] {name}: {i['path']}:{i['line']}: {i['message']}"
                      + (f"  -- {label['why']}" if label.get("why") else ""))
        planted: list[dict[str, object]] = []
        if args.renames:
            top, members = candidates(root, {i["target"] for i in items})
            with tempfile.TemporaryDirectory(prefix="repodoc-plant-") as tmp:
                copy = Path(tmp) / root.name
                shutil.copytree(root, copy, symlinks=True)
                planted = plant(copy, top[: args.renames], "top", args.since)
                planted += plant(copy, members[: args.renames], "member", args.since)
        caught = sum(bool(p["full"]) for p in planted)
        mem = [p for p in planted if p["kind"] == "member"]
        mcaught = sum(bool(p["full"]) for p in mem)
        sugg = [(s, p["new"]) for p in planted for s in p.get("suggestions", [])]  # type: ignore[attr-defined]
        sright = sum(str(new) in s for s, new in sugg)
        ssugg = [(s, p["new"]) for p in planted for s in p.get("since_suggestions", [])]  # type: ignore[attr-defined]
        ssright = sum(str(new) in s for s, new in ssugg)
        since = sum(bool(p.get("since")) for p in planted)
        if args.show:
            for p in planted:
                print(f"  plant {name}: {p['kind']:6} {p['name']} -> {'caught' if p['full'] else 'MISSED'}"
                      + (f" since={'yes' if p.get('since') else 'NO'}" if args.since else "")
                      + f" {p.get('suggestions')}")
        rows.append([name, len(items), f"{len(false)} ({pct(len(false), len(items))})", len(unlabelled),
                     f"{caught}/{len(planted)} ({pct(caught, len(planted))})",
                     f"{mcaught}/{len(mem)} ({pct(mcaught, len(mem))})",
                     f"{sright}/{len(sugg)} ({pct(sright, len(sugg))})"]
                    + ([f"{since}/{len(planted)}", f"{ssright}/{len(ssugg)}"] if args.since else [])
                    + [f"{took:.2f} s"])
        record.append({"project": name, "items": items, "planted": planted, "time": took})
        for k, v in (("items", len(items)), ("false", len(false)), ("unlabelled", len(unlabelled)),
                     ("planted", len(planted)), ("caught", caught), ("mplanted", len(mem)), ("mcaught", mcaught),
                     ("sugg", len(sugg)), ("sright", sright), ("since", since), ("ssugg", len(ssugg)),
                     ("ssright", ssright)):
            totals[k] += v
    t = totals
    rows.append(["ALL", t["items"], f"{t['false']} ({pct(t['false'], t['items'])})", t["unlabelled"],
                 f"{t['caught']}/{t['planted']} ({pct(t['caught'], t['planted'])})",
                 f"{t['mcaught']}/{t['mplanted']} ({pct(t['mcaught'], t['mplanted'])})",
                 f"{t['sright']}/{t['sugg']} ({pct(t['sright'], t['sugg'])})"]
                + ([f"{t['since']}/{t['planted']}", f"{t['ssright']}/{t['ssugg']}"] if args.since else []) + [""])
    header = ["project", "items", "false alarms", "unlabelled", "renames caught", "members caught",
              "suggestions right"] + (["--since caught", "--since suggestions right"] if args.since else []) + ["time"]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)))
    if args.json:
        args.json.write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
