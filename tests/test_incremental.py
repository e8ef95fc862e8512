"""Incremental equals fresh, through the CLI's entry point: after every random edit, `repodoc
generate` on the kept tree, then `--check`, then the tree compared byte for byte with a fresh
generation of a copy of the workspace (each run in this process, `cli.main`, with the run's own
cache on disk: what one run leaves for the next is the manifest, the pages and the cache, as
between processes). The CLI as a process: `test_package_appearing_after_its_import`. More
examples: REPODOC_PROPERTY_EXAMPLES=100."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from edits import SETTINGS, EditMachine, differences, run_cli, tree
from hypothesis.stateful import run_state_machine_as_test


class CliEdits(EditMachine):
    def after_edit(self, changed: list[str], folders: list[str]) -> None:
        code, output = self.cli("generate", str(self.ws), "--quiet")
        assert code == 0, output
        code, output = self.cli("generate", str(self.ws), "--check", "--quiet")
        assert code == 0, f"--check after {changed}: " + output
        assert differences(tree(self.ws / "docs"), self.fresh()) == []


def test_cli_incremental_equals_fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random edits through the CLI: an edit that only changes contents takes the run from the last
    run's state (`since_last_run`: only the pages the change can alter are planned), the others plan
    every page; the kept tree equals a fresh one after each. Checked at each run, not as "some run
    took it" over the sequences drawn: random sequences (locally, not derandomized) could draw none
    of those edits (a file deleted and written again, and again), which failed the test with no
    fault (`test_since_last_run.py` has the path's own tests)."""
    from repodoc_lsp.pipeline import generate as pipeline

    real = pipeline.since_last_run

    def checked(ws: Any, last: Any, *rest: Any) -> Any:
        held, files = real(ws, last, *rest)
        contents_only = bool(last) and last.keys() == ws.digests.keys() and last != ws.digests
        assert (files is not None) == contents_only, f"contents only: {contents_only}, planned from the state: {files}"
        return held, files

    monkeypatch.setattr(pipeline, "since_last_run", checked)
    machine = type("Run", (CliEdits,), {"base": tmp_path})
    run_state_machine_as_test(machine, settings=SETTINGS)


def test_package_appearing_after_its_import(tmp_path: Path, cache_env: dict[str, str]) -> None:
    """The issue's sequence: `import foo.missing`, then the package `foo` appears."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("import foo.missing\n")
    assert run_cli("generate", str(ws), env=cache_env).returncode == 0
    (ws / "foo").mkdir()
    (ws / "foo/__init__.py").write_text('"""foo"""\n')
    assert run_cli("generate", str(ws), env=cache_env).returncode == 0
    check = run_cli("generate", str(ws), "--check", env=cache_env)
    assert check.returncode == 0, check.stdout
