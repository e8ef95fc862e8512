"""The GitHub Action (`action.yml`): no input is pasted into a shell script (each goes through
`env:`, which the shell reads as data). Read as text: the test needs no YAML library."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from helpers import REPO

_KEY = re.compile(r"^(\s*)(?:-\s+)?([\w-]+):\s*(.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _run_scripts(lines: list[str]) -> list[str]:
    """The text of every `run:` value: a block scalar (`|`, `>`) or a plain one with the
    more-indented lines that continue it."""
    scripts = []
    for i, line in enumerate(lines):
        m = _KEY.match(line)
        if not m or m.group(2) != "run":
            continue
        key_indent = len(m.group(1))
        body = [] if m.group(3).startswith(("|", ">")) else [m.group(3)]
        for more in lines[i + 1:]:
            if more.strip() and _indent(more) <= key_indent:
                break
            body.append(more)
        scripts.append("\n".join(body))
    return scripts


def _parent_key(lines: list[str], i: int) -> str:
    """The key of the mapping that holds line `i` (the nearest line above, less indented)."""
    indent = _indent(lines[i])
    for line in reversed(lines[:i]):
        if line.strip() and _indent(line) < indent:
            m = _KEY.match(line)
            return m.group(2) if m else ""
    return ""


def test_no_expression_reaches_a_shell_script() -> None:
    lines = (REPO / "action.yml").read_text(encoding="utf-8").splitlines()
    scripts = _run_scripts(lines)
    assert len(scripts) == 2 and all(s.strip() for s in scripts)
    for script in scripts:
        assert "${{" not in script, script
    uses = [i for i, line in enumerate(lines) if "${{" in line]
    assert uses
    for i in uses:  # each expression is the value of an environment variable
        assert _parent_key(lines, i) == "env", lines[i]
        assert re.fullmatch(r"\s*[A-Z_]+: \$\{\{ inputs\.[\w-]+ \}\}", lines[i]), lines[i]
    declared = set(re.findall(r"^  ([\w-]+):$", "\n".join(lines[lines.index("inputs:"):lines.index("runs:")]),
                              re.MULTILINE))
    used = set(re.findall(r"inputs\.([\w-]+)", "\n".join(lines[i] for i in uses)))
    assert declared == used == {"root", "since", "pages", "python"}


def test_hostile_inputs_stay_data(tmp_path: Path) -> None:
    """Each step's script run as the runner runs it (bash -eo pipefail, its `env:` set from the
    inputs): quotes and `;` in an input run nothing, and a root like an option stays the root."""
    lines = (REPO / "action.yml").read_text(encoding="utf-8").splitlines()
    sentinel = tmp_path / "ran"
    inputs = {"python": f'true"; touch {sentinel}; "true', "root": "--out=/tmp/elsewhere",
              "since": f"main; touch {sentinel}", "pages": "$(touch " + str(sentinel) + ")"}
    env_lines = [line for i, line in enumerate(lines) if "${{" in line and _parent_key(lines, i) == "env"]
    env = {}
    for line in env_lines:
        name, _, expr = line.strip().partition(": ")
        env[name] = inputs[re.search(r"inputs\.([\w-]+)", expr).group(1)]  # type: ignore[union-attr]
    bin_dir = tmp_path / "repodoc-venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "repodoc").write_text("#!/bin/sh\nprintf '<%s>' \"$@\"\n")
    (bin_dir / "repodoc").chmod(0o755)
    base = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(tmp_path), "GITHUB_ACTION_PATH": str(tmp_path)}
    # the runner pastes an expression's value into a script before bash reads it
    install, check = (re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: inputs[m.group(1)], script)
                      for script in _run_scripts(lines))
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", install],
                          env={**base, **env}, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode != 0 and not sentinel.exists()  # no such interpreter: the step fails
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", check],
                          env={**base, **env}, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert done.returncode == 0 and not sentinel.exists(), done.stderr
    assert done.stdout == (f"<check><--format><github><--since><main; touch {sentinel}><--no-pages><--><--out="
                           "/tmp/elsewhere>")
