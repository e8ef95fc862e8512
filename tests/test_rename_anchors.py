"""Rename-safe pages through the CLI's pipeline (`generate`, in-process; `--check` and
`repodoc check` through the CLI's entry point): a renamed class keeps its old anchor as an
alias while its file stays as it was, `--check` accepts it, the kept tree less the aliases the
manifest records is a fresh generation, and a forged alias in the manifest is refused."""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from edits import tree
from helpers import make_workspace, read_manifest, write_manifest

from repodoc_lsp import cli
from repodoc_lsp.config import load_settings
from repodoc_lsp.pipeline.generate import generate as run_generate
from repodoc_lsp.render.pages import Renderer
from repodoc_lsp.store.workspace import Workspace

SHAPES = 'class Widget:\n    """Draws."""\n\n    def draw(self):\n        return 1\n\n\ndef helper():\n    return 2\n'
README = ("# Shapes\n\n[Widget](docs/shapes.py_docs.md#class-Widget), "
          "[draw](docs/shapes.py_docs.md#method-Widget.draw)\n")
PAGE = "shapes.py_docs.md"


@pytest.fixture(autouse=True)
def _keep_sigint() -> Iterator[None]:
    """main() sets its own Ctrl-C handler; the test process keeps pytest's."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, handler)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def test_a_renamed_class_keeps_its_anchor_for_one_generation(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             caplog: pytest.LogCaptureFixture) -> None:
    ws_root = make_workspace(tmp_path / "ws", {"shapes.py": SHAPES, "use.py": "import shapes\n", "README.md": README})
    renderer = Renderer()  # compiled once: the pipeline is the CLI's (`generate`), its templates too

    def workspace(root: Path) -> Workspace:
        return Workspace(root, load_settings(root, {"cacheDir": str(tmp_path / "cache")})[0])

    ws = workspace(ws_root)

    def generate(check: bool = False) -> None:
        summary = run_generate(ws_root, ws, check=check, renderer=renderer)
        assert not (summary.errors or summary.conflicts or summary.stale), summary.as_dict()

    def page() -> str:
        return (ws_root / "docs" / PAGE).read_text()

    def fresh() -> dict[str, bytes]:
        copy = tmp_path / "fresh" / "ws"
        shutil.rmtree(copy.parent, ignore_errors=True)
        shutil.copytree(ws_root, copy, ignore=lambda folder, names: ["docs"] if Path(folder) == ws_root else [])
        run_generate(copy, workspace(copy), renderer=renderer)
        return tree(copy / "docs")

    def refs() -> tuple[int, str]:  # `repodoc check`: do the README's links into the page resolve?
        return _cli(capsys, "check", str(ws_root), "--no-pages")

    generate()
    assert refs()[0] == 0

    # The rename: the old anchors stay beside the new ones; links into the page keep working.
    (ws_root / "shapes.py").write_text(SHAPES.replace("Widget", "Gadget"))
    generate()
    assert '<a id="class-Gadget"></a><a id="class-Widget"></a>\n#### `class Gadget`' in page()
    assert '- <a id="method-Gadget.draw"></a><a id="method-Widget.draw"></a>`draw(self)`' in page()
    assert '<a id="function-helper"></a>\n' in page()  # not renamed: no alias
    assert refs()[0] == 0
    code, said = _cli(capsys, "generate", str(ws_root), "--check", "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, said  # the real `--check` accepts them
    assert tree(ws_root / "docs") == fresh()  # nothing but the recorded aliases differs from a fresh tree
    assert "class-Widget" not in fresh()[PAGE].decode()

    # Rewritten because another file changed (it now uses Gadget): the file is as it was, they stay.
    (ws_root / "use.py").write_text("from shapes import Gadget\n\nGadget().draw()\n")
    generate()
    assert "**Used by** (1 file" in page() and '<a id="class-Widget"></a>' in page()
    generate(check=True)

    # The file's next change drops them: the README's links are stale now, and said so.
    (ws_root / "shapes.py").write_text(SHAPES.replace("Widget", "Gadget") + "\n\nLIMIT = 3\n")
    generate()
    assert "class-Widget" not in page() and "method-Widget" not in page()
    code, said = refs()
    assert code == 1 and "#class-Widget" in said and "#method-Widget.draw" in said
    generate(check=True)
    assert tree(ws_root / "docs") == fresh()

    # A forged alias (markup for an anchor) is refused: the entry is dropped with a warning, and the
    # page, rewritten for use.py's sake, holds no alias; the check then passes.
    manifest = read_manifest(ws_root / "docs")
    manifest["anchors"][PAGE]["aliases"] = {'class-Widget"></a><script>alert(1)</script><a id="x': "class-Gadget"}
    write_manifest(ws_root / "docs", manifest)
    (ws_root / "use.py").write_text("from shapes import Gadget\n")
    generate()
    assert "damaged manifest (1 anchor entries of the wrong form)" in caplog.text
    assert "<script" not in page() and page().count('<a id="class-') == 1
    generate(check=True)
    assert "<script" not in json.dumps(read_manifest(ws_root / "docs"))
