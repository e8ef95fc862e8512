"""The repository's own cross-references resolve: every relative link and `#anchor` of its Markdown
files (GitHub's heading slugs), and every section a file cites by name (`README "Trust"`,
`bench/README, "Figures"`) is a heading of that file."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

from helpers import REPO, md_tokens

_CITED = re.compile(r'\b((?:bench/|tests/)?README)(?:\.md)?(?:\'s)?,? "([^"\n]+)"')
_TEXT_SUFFIXES = (".py", ".md", ".yaml", ".yml", ".lua", ".ts", ".mjs", ".txt", ".sh", ".toml", ".json")


def _tracked(*suffixes: str) -> list[Path]:
    """The repository's files (as git lists them; every file when it is not a clone), generated
    trees left out: their links are the pages' own tests' business."""
    try:
        names = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                               check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        names = [p.relative_to(REPO).as_posix() for p in REPO.rglob("*") if p.is_file()]
    skip = ("tests/golden/", "node_modules/", ".venv/")
    return [REPO / n for n in names
            if n.endswith(suffixes) and not n.startswith(skip) and "/node_modules/" not in n]


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _headings(path: Path) -> list[str]:
    tokens = md_tokens(path.read_text(encoding="utf-8"))
    out = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[i + 1]
            out.append("".join(c.content for c in inline.children or () if c.type in ("text", "code_inline")))
    return out


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for heading in _headings(path):
        slug = _slug(heading)
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    anchors |= set(re.findall(r'<a (?:id|name)="([^"]+)"', path.read_text(encoding="utf-8")))
    return anchors


def test_markdown_links_resolve() -> None:
    broken = []
    files = _tracked(".md")
    assert REPO / "README.md" in files
    for path in files:
        for token in md_tokens(path.read_text(encoding="utf-8")):
            href = token.attrs.get("href") if token.type == "link_open" else None
            if not isinstance(href, str) or re.match(r"[a-z][a-z0-9+.-]*:", href, re.I):
                continue  # not a link, or a URL
            target, _, anchor = unquote(href).partition("#")
            dest = (path.parent / target).resolve() if target else path
            where = f"{path.relative_to(REPO)}: {href}"
            if not dest.exists():
                broken.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{where}: no heading #{anchor}")
    assert broken == []


def test_cited_sections_exist() -> None:
    cited = 0
    missing = []
    for path in _tracked(*_TEXT_SUFFIXES):
        for match in _CITED.finditer(path.read_text(encoding="utf-8", errors="replace")):
            doc = REPO / f"{match.group(1)}.md"
            name = " ".join(match.group(2).replace("`", "").split())  # a heading's text has no backticks
            cited += 1
            # a heading may go on after the name cited: "NAME: ...", "NAME, date", "NAME (issue N)"
            if not any(h == name or h.startswith((name + ":", name + ",", name + " ("))
                       for h in _headings(doc)):
                missing.append(f"{path.relative_to(REPO)}: {match.group(0)}")
    assert cited > 10  # README "Trust" alone is cited a dozen times
    assert missing == []


def test_slugs_as_github_makes_them() -> None:
    assert _slug("Stale references: `repodoc check`".replace("`", "")) == "stale-references-repodoc-check"
    assert _slug("CI and pre-commit") == "ci-and-pre-commit"
