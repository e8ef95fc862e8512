"""Nothing a checkout names becomes a CI runner's workflow command (README "Trust"): an output
folder and file names holding line breaks, `::` and `##[`, printed by `generate`, `generate
--check` and `check` (text and GitHub formats): no line starts a command but repodoc's own
annotations, and no line holds `##[` (GitHub's older syntax, read anywhere in a line)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import cli_here, make_workspace, run_cli

from repodoc_lsp.console import line, printable

FORGED = "::error title=forged::repodoc was made to say this"
OUTPUT = f"docs\n{FORGED}"


def _workspace(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "ws", {
        "pyproject.toml": '[tool.repodoc]\noutput = "docs\\n::error title=forged::repodoc was made to say this"\n',
        "pkg/__init__.py": "",
        "pkg/core.py": '"""See :class:`pkg.core.Gone`."""\n\n\nclass Here:\n    pass\n',
        f"pkg/mod\n{FORGED}.py": "X = 1\n",
        "pkg/##[error]legacy.py": "Y = 2\n",
        f"notes\n{FORGED}.md": "Uses `pkg.core.Gone`.\n",
        "::warning::root.md": "Uses `pkg.core.Gone`.\n",
        "##[warning]legacy.md": "Uses `pkg.core.Gone`.\n",
    })
    out = root / OUTPUT
    out.mkdir()
    (out / ".repodoc-manifest.json.gz").write_bytes(b"not a manifest")  # damaged: a warning naming the folder
    return root


def _commands(text: str, *, own: bool = False) -> list[str]:
    """Lines the runner would take as a command (repodoc's own `::warning file=` aside when `own`)."""
    found = []
    for each in text.splitlines():
        bare = each.lstrip()
        if own and bare.startswith("::warning file="):
            continue  # a command already: the runner reads no other in its line
        if "##[" in each or bare.startswith("::"):
            found.append(each)
    return found


def test_no_name_becomes_a_workflow_command(tmp_path: Path, cache_env: dict[str, str]) -> None:
    root = _workspace(tmp_path)
    runs = {
        "generate": cli_here("generate", ".", "--verbose", env=cache_env, cwd=root),
        "generate --check": cli_here("generate", ".", "--check", env=cache_env, cwd=root),
        "generate --json": cli_here("generate", ".", "--json", env=cache_env, cwd=root),
        "check": cli_here("check", ".", env=cache_env, cwd=root),
        "check --format github": run_cli("check", ".", "--format", "github", env=cache_env, cwd=root),
    }
    for what, proc in runs.items():
        assert proc.returncode in (0, 1), (what, proc.stdout, proc.stderr)
        own = what.endswith("github")
        assert _commands(proc.stdout, own=own) == [] and _commands(proc.stderr) == [], (what, proc.stdout,
                                                                                      proc.stderr)
        assert "Traceback" not in proc.stderr
    # what was printed still says which files: escaped, on one line each
    assert "damaged manifest" in runs["generate"].stderr and "docs\\n\\x3a:error" not in runs["generate"].stderr
    assert f"docs\\n{FORGED}" in runs["generate"].stderr
    check = runs["check"].stdout
    assert f"notes\\n{FORGED}.md:1:7: `pkg.core.Gone`" in check
    assert "./::warning::root.md:1:7:" in check and "#\\x23[warning]legacy.md:1:7:" in check
    github = runs["check --format github"].stdout
    assert "::warning file=notes%0A%3A%3Aerror title=forged%3A%3Arepodoc was made to say this.md,line=1" in github
    summary = json.loads(runs["generate --json"].stdout)  # still JSON, the same names
    assert any(FORGED in s["path"] for s in summary.get("skipped", [])) or FORGED in json.dumps(summary)


def test_printable_and_line() -> None:
    assert printable("a\nb\r\x1b[31m\x85\u2028\t##[x]") == "a\\nb\\r\\x1b[31m\\x85\\u2028\\t#\\x23[x]"
    assert line("  ::error::x") == "  \\x3a:error::x" and line("repodoc: ::x") == "repodoc: ::x"
    assert printable("ordinary/path_docs.md: fine, é") == "ordinary/path_docs.md: fine, é"
