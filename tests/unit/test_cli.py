"""`repodoc`'s command line, in-process: the paths that end before any analysis (bad settings,
folders, help). Runs that analyse and write are in tests/test_generate.py (the real CLI)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import make_workspace

from repodoc_lsp import cli
from repodoc_lsp.exits import EXIT_USAGE


@pytest.fixture(autouse=True)
def _keep_sigint() -> Iterator[None]:
    """main() sets its own Ctrl-C handler; the test process keeps pytest's."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, handler)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_settings_errors_name_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path / "ws", {"pyproject.toml": "[tool.repodoc]\nembed-source-max-bytes = 'lots'\n"})
    code, out, err = _run(capsys, "generate", str(root))
    assert code == EXIT_USAGE and out == ""
    assert err == (f"repodoc: error: {root / 'pyproject.toml'} [tool.repodoc]: embed-source-max-bytes: "
                   "expected a whole number, got 'lots'\n")
    (root / "pyproject.toml").write_text("[tool.repodoc\n")
    code, _, err = _run(capsys, "generate", str(root))
    assert code == EXIT_USAGE and "invalid TOML" in err and err.count("\n") == 1
    code, _, err = _run(capsys, "generate", str(tmp_path / "missing"))
    assert code == EXIT_USAGE and err == f"repodoc: error: {tmp_path / 'missing'}: not a folder\n"
    assert not (root / "docs").exists()


def test_refused_folders_and_outputs_exit_before_any_analysis(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path / "ws", {"a.py": "x = 1\n", "docs": "not a folder\n"})
    code, _, err = _run(capsys, "generate", str(root), "--cache-dir", str(tmp_path / "cache"))
    assert code == EXIT_USAGE and "docs): exists and is not a folder" in err and err.count("\n") == 1
    assert (root / "docs").read_text() == "not a folder\n"
    assert not (tmp_path / "cache").exists()  # nothing analysed
    code, _, err = _run(capsys, "generate", "/")
    assert code == EXIT_USAGE and "the root of the file system: not a workspace to document" in err
    code, _, err = _run(capsys, "check", str(Path.home()))
    assert code == EXIT_USAGE and "is your home folder" in err


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["generate", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out and "141" in out
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.strip() == "repodoc-lsp 0.1.0"
    assert _run(capsys)[0] == EXIT_USAGE  # no command: the help, exit 2


def test_check_lines_as_text_and_as_github_annotations() -> None:
    from repodoc_lsp.refs.command import _line

    assert _line("text", "README.md", 3, 12, "`a.B`: gone") == "README.md:3:12: `a.B`: gone"
    assert _line("text", "docs/x.md", 0, 0, "stale page: differs") == "docs/x.md: stale page: differs"
    assert _line("github", "README.md", 3, 12, "`a.B`: gone") == "::warning file=README.md,line=3,col=12::`a.B`: gone"
    # workflow-command escaping: % CR LF everywhere, and : , in properties (a path may hold them)
    assert _line("github", "a:b,c%.md", 1, 1, "50%\nnext") == \
        "::warning file=a%3Ab%2Cc%25.md,line=1,col=1::50%25%0Anext"
    assert _line("github", "docs/x.md", 0, 0, "stale") == "::warning file=docs/x.md::stale"
