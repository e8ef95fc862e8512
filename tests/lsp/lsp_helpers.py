"""Helpers of the language-server tests: workspaces, positions, waiting, starting a session."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

SERVER = [sys.executable, "-m", "repodoc_lsp", "serve"]

SAMPLE = {
    "pyproject.toml": '[project]\nname = "demo"\n',
    "pkg/__init__.py": '"""The demo package."""\n',
    "pkg/shapes.py": (
        '"""Shapes and their areas."""\n'
        "import os\n\n\n"
        "class Shape:\n"
        '    """A shape on the plane.\n\n    Args:\n        name: what it is called.\n    """\n\n'
        "    def __init__(self, name: str) -> None:\n        self.name = name\n\n"
        "    def area(self) -> float:\n"
        '        """Return the area of the shape."""\n        return 0.0\n\n\n'
        "class Circle(Shape):\n"
        '    """A round shape."""\n\n'
        "    def area(self) -> float:\n        return 3.14\n\n\n"
        "def make_shape(name: str) -> Shape:\n"
        '    """Make a shape called NAME."""\n'
        "    return Shape(name)\n\n\n"
        "def path_of(name):\n    return os.path.join('shapes', name)\n"
    ),
    "pkg/use.py": "from pkg.shapes import Shape, make_shape\n\nthing = make_shape('x')\nShape('y').area()\n",
    "tests/test_shapes.py": (
        "from pkg.shapes import Circle\n\n\ndef test_circle():\n    assert Circle('c').area() > 3\n"),
    "README.md": "# Demo\n\n## Shapes section\n",
}


def build(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def position_of(text: str, needle: str, offset: int = 0) -> types.Position:
    """The LSP position (UTF-16 and code points agree for ASCII) of `needle` in `text`."""
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    return types.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1))


async def wait_for(predicate: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = predicate()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("condition not met in time")
        await asyncio.sleep(0.05)


def open_file(client: LanguageClient, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text(encoding="utf-8"))))
    return uri


async def symbols(client: LanguageClient, query: str) -> list[types.SymbolInformation]:
    return await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)) or []


async def start(client: LanguageClient, root: Path | None, profile: str = "visual-studio-code",
                options: dict | None = None, folders: list[Path] | None = None,
                configuration: dict | None = None) -> None:
    """Initialise a session; waits until indexing has put the first symbols in the index."""
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    client.set_configuration(configuration or {}, section="repodoc")
    folders = folders if folders is not None else ([root] if root else [])
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(profile),
        root_uri=root.as_uri() if root else None,
        workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders] or None,
        initialization_options=options or {},
    ))


def record_diagnostics(client: LanguageClient) -> list[types.PublishDiagnosticsParams]:
    """Every publishDiagnostics the server sends (the client keeps only the last per document)."""
    seen: list[types.PublishDiagnosticsParams] = []
    features = client.protocol.fm.features
    keep = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(*args: Any) -> None:
        seen.append(args[-1])
        keep(*args)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    return seen
