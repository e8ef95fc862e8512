"""`repodoc check` on real documentation: PyTorch's docstrings against its cold generation, and projects' docs.

    python bench/bench_refs.py [--runs N] [--docs DIR ...] [--no-torch] [--saves N]

PyTorch (bench/corpus.py; the folder holding `torch/`, so modules are named `torch.x`): one cold
`repodoc generate` (empty cache, output in a temporary folder), then `repodoc check --no-pages`
with an empty cache (it analyses every file, as generation does) and again with the cache it
filled; medians of --runs. Each --docs DIR (an unpacked source distribution, say) is checked with
`repodoc check --no-pages` and every finding is printed, for reading. Nothing is written in the
corpus or the DIRs.

--saves N (the 200 ms target): the language server over stdio on a copy of PyTorch's sources plus a
README.md (in a temporary folder) naming up to 200 of its classes and functions and a few misspelt ones
(the report prints how many diagnostics each save gets); once
indexed, N saves of the open README (didChange + didSave, a different line each time): the time
from didSave to the publishDiagnostics of that version, beside the round trip of a trivial request
(`textDocument/codeAction` with no diagnostics, answered without the workspace) measured in the
same session, interleaved; medians and p95.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from corpus import ensure_corpus, python_files  # noqa: E402

SUMMARY = re.compile(r"repodoc: (\d+) references in (\d+) files checked.*?, (\d+) stale")


def timed(argv: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "repodoc_lsp", *argv], capture_output=True, text=True,
                          timeout=1800)
    return time.perf_counter() - started, proc


def check(root: Path, cache: Path) -> tuple[float, int, int, int, list[str]]:
    seconds, proc = timed(["check", str(root), "--no-pages", "--cache-dir", str(cache)])
    if proc.returncode not in (0, 1):
        raise SystemExit(f"repodoc check {root} failed ({proc.returncode}): {proc.stderr}")
    m = SUMMARY.search(proc.stdout)
    if m is None:
        raise SystemExit(f"no summary from repodoc check {root}: {proc.stdout[-500:]}")
    refs, files, stale = map(int, m.groups())
    findings = [line for line in proc.stdout.splitlines() if not line.startswith("repodoc:")]
    return seconds, refs, files, stale, findings


def torch_figures(runs: int) -> None:
    root = ensure_corpus().parent
    gen, cold, warm = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="repodoc-refs-") as tmp:
            t = Path(tmp)
            seconds, proc = timed(["generate", str(root), "--out", str(t / "out"), "--cache-dir", str(t / "gen"),
                                   "--quiet"])
            if proc.returncode != 0:
                raise SystemExit(f"repodoc generate failed ({proc.returncode}): {proc.stderr}")
            gen.append(seconds)
            seconds, refs, files, stale, findings = check(root, t / "check")
            cold.append(seconds)
            warm.append(check(root, t / "check")[0])
    g, c, w = statistics.median(gen), statistics.median(cold), statistics.median(warm)
    print(f"PyTorch ({root}): {files} files, {refs} references, {stale} stale")
    print(f"cold repodoc generate: {g:.2f} s (median of {runs})")
    print(f"repodoc check --no-pages, empty cache: {c:.2f} s = {c / g:.2f}x cold generation (target <= 0.5x)")
    print(f"repodoc check --no-pages, warm cache: {w:.2f} s = {w / g:.2f}x cold generation")
    for line in findings:
        print(f"  {line}")


def _readme(root: Path) -> str:
    """200 references to PyTorch's own classes and functions (every 10th file's first public
    definition), 3 stale ones, in prose and lists as a README has them."""
    import ast

    names = []
    for path in python_files(root / "torch")[::10]:
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and not node.name.startswith("_"):
                names.append(f"{module}.{node.name}")
                break
        if len(names) == 200:
            break
    lines = ["# A guide to the sources", "", "Where things are.", ""]
    lines += [f"- `{n}`: see the module." for n in names]
    lines += ["", "Renamed since: `torch.nn.Modul`, `torch.optim.Adamm` and `torch.utils.data.DataLoadr`.", ""]
    return "\n".join(lines)


def saved_markdown(saves: int) -> None:
    import asyncio
    import shutil

    from bench_lsp import BenchClient, capabilities
    from lsprotocol import types as t

    corpus = ensure_corpus()
    tmp = Path(tempfile.mkdtemp(prefix="repodoc-refs-save-"))
    try:
        ws = tmp / "ws"
        shutil.copytree(corpus, ws / "torch")
        readme = ws / "README.md"
        base = _readme(ws)
        readme.write_text(base, encoding="utf-8")
        (tmp / "cwd").mkdir()
        env = {**os.environ, "REPODOC_CACHE_DIR": str(tmp / "cache")}
        save_s, floor_s, counts = asyncio.run(_saves(BenchClient({}), ws, readme, base, saves, env, tmp / "cwd",
                                                     capabilities(), t))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def p95(values: list[float]) -> float:
        return sorted(values)[max(0, round(0.95 * len(values)) - 1)]

    ms, fl = statistics.median(save_s) * 1000, statistics.median(floor_s) * 1000
    print(f"saved README.md on PyTorch + README ({len(python_files(corpus))} .py files), {saves} saves, "
          f"diagnostics per save {sorted(set(counts))}:")
    print(f"  didSave -> publishDiagnostics: median {ms:.1f} ms, p95 {p95(save_s) * 1000:.1f} ms (target < 200 ms)")
    print(f"  floor, codeAction round trip: median {fl:.2f} ms, p95 {p95(floor_s) * 1000:.2f} ms; "
          f"save/floor {ms / fl:.1f}x")


async def _saves(client: Any, ws: Path, readme: Path, base: str, saves: int, env: dict[str, str], cwd: Path,
                 caps: Any, t: Any) -> tuple[list[float], list[float], list[int]]:
    import asyncio

    published: dict[int, tuple[float, int]] = {}  # version -> (when, diagnostics)
    uri = readme.as_uri()
    features = client.protocol.fm.features

    def on_publish(params: Any) -> None:
        if params.uri == uri and params.version is not None and params.version not in published:
            published[params.version] = (time.perf_counter(), len(params.diagnostics))

    features[t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = on_publish
    await client.start_io(sys.executable, "-m", "repodoc_lsp", "serve", env=env, cwd=str(cwd))
    await client.initialize_async(t.InitializeParams(
        capabilities=caps, process_id=os.getpid(), root_uri=ws.as_uri(),
        workspace_folders=[t.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
    client.initialized(t.InitializedParams())
    client.text_document_did_open(t.DidOpenTextDocumentParams(text_document=t.TextDocumentItem(
        uri=uri, language_id="markdown", version=1, text=base)))
    deadline = time.perf_counter() + 900
    while 1 not in published:  # published once the root is indexed
        if time.perf_counter() > deadline:
            raise SystemExit("no diagnostics for README.md within 900 s")
        await asyncio.sleep(0.05)
    save_s, floor_s, counts = [], [], []
    nothing = t.CodeActionParams(text_document=t.TextDocumentIdentifier(uri=uri), range=t.Range(
        start=t.Position(line=0, character=0), end=t.Position(line=0, character=1)),
        context=t.CodeActionContext(diagnostics=[]))
    for i in range(saves):
        started = time.perf_counter()
        await client.text_document_code_action_async(nothing)
        floor_s.append(time.perf_counter() - started)
        version = i + 2
        text = base + f"\nEdit {i}: `torch.nn.Module` and `torch.nn.Modul{i}`.\n"
        readme.write_text(text, encoding="utf-8")
        client.text_document_did_change(t.DidChangeTextDocumentParams(
            text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[t.TextDocumentContentChangeWholeDocument(text=text)]))
        started = time.perf_counter()
        client.text_document_did_save(t.DidSaveTextDocumentParams(text_document=t.TextDocumentIdentifier(uri=uri)))
        while version not in published:
            if time.perf_counter() - started > 30:
                raise SystemExit(f"no diagnostics for save {i} within 30 s")
            await asyncio.sleep(0.001)
        when, count = published[version]
        save_s.append(when - started)
        counts.append(count)
        await asyncio.sleep(0.6)  # the save's own refresh after indexing settles
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return save_s, floor_s, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--docs", nargs="*", default=[], type=Path)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--saves", type=int, default=0, help="saves of a README in the server (0: none)")
    args = parser.parse_args()
    if args.saves:
        saved_markdown(args.saves)
    for folder in args.docs:
        with tempfile.TemporaryDirectory(prefix="repodoc-refs-") as tmp:
            seconds, refs, files, stale, findings = check(folder, Path(tmp))
        print(f"{folder.name}: {files} files, {refs} references, {stale} stale, {seconds:.2f} s")
        for line in findings:
            print(f"  {line}")
    if not args.no_torch:
        torch_figures(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
