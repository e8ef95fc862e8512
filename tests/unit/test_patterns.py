"""Security and performance findings: each rule on the literal case, the run-time case and the
harmless case (issue 15, "Honest Security and Performance")."""

from __future__ import annotations

import textwrap

import pytest

from repodoc_lsp.analysis import FindingCategory, analyse_source


def security(src: str) -> list[tuple[str, str, int]]:
    facts = analyse_source("m.py", textwrap.dedent(src).encode())
    return [(f.level, f.label, f.line) for f in facts.findings_in(FindingCategory.SECURITY)]


def performance(src: str) -> list[tuple[str, int, str]]:
    facts = analyse_source("m.py", textwrap.dedent(src).encode())
    return [(f.label, f.line, f.detail) for f in facts.findings_in(FindingCategory.PERFORMANCE)]


@pytest.mark.parametrize(("src", "expected"), [
    # shell=: literal true is risky, a variable is to check, false or absent is nothing
    ("import subprocess\nsubprocess.run(c, shell=True)\n", [("risky", "shell=True", 2)]),
    ("import subprocess\ndef f(flag):\n    subprocess.Popen(c, shell=flag)\n", [("check", "shell=", 3)]),
    ("import subprocess as sp\nsp.check_output(\n  c,\n  shell=opts.shell,\n)\n", [("check", "shell=", 2)]),
    ("import subprocess\nsubprocess.run(c, shell=False)\nsubprocess.run(c)\n", []),
    ("from subprocess import run\nrun(c, shell=use_shell)\n", [("check", "shell=", 2)]),
    # torch.load: weights_only=False risky, defaulted or a variable to check, True nothing
    ("import torch\ntorch.load(f, weights_only=False)\n", [("risky", "torch.load", 2)]),
    ("import torch\ntorch.load(f)\n", [("check", "torch.load", 2)]),
    ("import torch\ntorch.load(f, weights_only=None)\n", [("check", "torch.load", 2)]),
    ("import torch\ndef g(w):\n    return torch.load(f, map_location='cpu', weights_only=w)\n",
     [("check", "torch.load", 3)]),
    ("import torch\ntorch.load(f, **kw)\n", [("check", "torch.load", 2)]),
    ("import torch\ntorch.load(f, weights_only=True)\n", []),
    ("from torch.serialization import load\nload(f)\n", [("check", "torch.load", 2)]),
    ("import torch\ntorch.jit.load(f)\n", []),
    # unpickling: the pickle module itself is risky; a module or unpickler in a variable to check
    ("import pickle\npickle.load(f)\npickle.loads(b)\n", [("risky", "deserialisation", 2),
                                                           ("risky", "deserialisation", 3)]),
    ("def _load(f, pickle_module):\n    return pickle_module.load(f, encoding='x')\n",
     [("check", "deserialisation", 2)]),
    ("def _load(self, f):\n    return self._pickle_module.loads(f)\n", [("check", "deserialisation", 2)]),
    ("import pickle\nclass W(pickle.Unpickler):\n    pass\nu = W(f)\nu.load()\n",
     [("check", "deserialisation", 5)]),
    ("def f(pm):\n    class W(pm.Unpickler):\n        pass\n    class V(W):\n        pass\n"
     "    unp = V(fh)\n    return unp.load()\n", [("check", "deserialisation", 7)]),
    ("import pickle\nresult = pickle.Unpickler(f)\n", [("risky", "deserialisation", 2)]),
    ("import mylib\nmylib.Unpickler(f).load()\n", [("check", "deserialisation", 2)]),
    ("import json\njson.load(f)\nconfig.load()\nloader = Loader(f)\nloader.load()\n", []),
    # dynamic imports: a variable is to check, a literal module name is nothing
    ("import importlib.util\nspec = importlib.util.spec_from_file_location(n, p)\nm = importlib.util."
     "module_from_spec(spec)\nspec.loader.exec_module(m)\n", [("check", "exec_module", 4)]),
    ("def f(name):\n    return __import__(name)\n", [("check", "__import__", 2)]),
    ("__import__('os')\n", []),
    ("import importlib\nimportlib.import_module(f'pkg.{name}')\nimportlib.import_module('json')\n",
     [("check", "import_module", 2)]),
    ("from importlib import import_module\nimport_module(name)\n", [("check", "import_module", 2)]),
    # eval/exec: of a variable to check, of a literal string (code written in the file) nothing
    ("def f(code):\n    eval(code)\n    exec(compile(code, 'x', 'exec'))\n",
     [("check", "eval", 2), ("check", "exec", 3)]),
    ("eval('1 + 1')\nexec('x = 1')\nmodel.eval()\nself.exec(q)\n", []),
    # yaml.load: no Loader or an unsafe one risky, a Loader in a variable to check, a safe one nothing
    ("import yaml\nyaml.load(s)\nyaml.load(s, Loader=yaml.FullLoader)\nyaml.unsafe_load(s)\n",
     [("risky", "yaml.load", 2), ("risky", "yaml.load", 3), ("risky", "yaml.load", 4)]),
    ("import yaml\ndef f(s, loader):\n    return yaml.load(s, Loader=loader)\n", [("check", "yaml.load", 3)]),
    ("import yaml\nyaml.load(s, Loader=yaml.SafeLoader)\nyaml.load(s, yaml.CSafeLoader)\nyaml.safe_load(s)\n",
     []),
    # shell commands: a literal command risky, one held in a variable to check
    ("import os\nos.system('ls -l')\n", [("risky", "shell command", 2)]),
    ("import os\ndef f(cmd):\n    os.system(cmd)\n    return os.popen(cmd + ' x').read()\n",
     [("check", "shell command", 3), ("check", "shell command", 4)]),
    ("import tempfile\ntempfile.mktemp()\n", [("risky", "mktemp", 2)]),
    # names that look alike but are not the call
    ("def system(x): ...\nsystem('ls')\nos_system = 1\nshell = True\n", []),
])
def test_security_rule(src: str, expected: list[tuple[str, str, int]]) -> None:
    assert security(src) == expected


def test_security_details_name_the_value_and_why() -> None:
    facts = analyse_source("m.py", b"import torch, subprocess\ndef f(w, flag):\n"
                                   b"    torch.load(p, weights_only=w)\n    subprocess.run(c, shell=flag)\n"
                                   b"    torch.load(p)\n    subprocess.run(c, shell=a[0] or '`<b>`')\n")
    details = [f.detail for f in facts.findings_in(FindingCategory.SECURITY)]
    assert details[0] == "`torch.load(..., weights_only=w)`: unpickles arbitrary objects when that is false at run time"
    assert details[1] == ("`subprocess.run(..., shell=...)` with `flag`: the command goes to the shell when that "
                          "is true at run time")
    assert "default" in details[2] and "2.6" in details[2]
    assert "an expression" in details[3] and "<b>" not in details[3]  # source text never reaches the page


@pytest.mark.parametrize(("src", "expected"), [
    ("import threading\nt = threading.Thread(target=self._run, daemon=True)\n",
     [("threads", 2, "creates a thread: `threading.Thread(target=self._run)`")]),
    ("from threading import Thread, Lock, local\n_lock = Lock()\n_state = local()\nThread(target=lambda: 0)\n",
     [("thread synchronisation", 2, "synchronises threads: `Lock`"),
      ("thread-local state", 3, "keeps state per thread: `local`"),
      ("threads", 4, "creates a thread: `Thread`")]),
    ("import threading\nclass Worker(threading.Thread):\n    pass\n",
     [("threads", 2, "`Worker` is a thread class (subclasses `threading.Thread`)")]),
    ("import multiprocessing as mp\nwith mp.Pool(4) as pool:\n    pool.map(f, xs)\n",
     [("process pool", 2, "a process pool: `mp.Pool`")]),
    ("import multiprocessing\nctx = multiprocessing.get_context('spawn')\nq = ctx.Queue()\n"
     "p = ctx.Process(target=worker)\nmultiprocessing.get_context('fork').Pool(2)\n",
     [("inter-process communication", 3, "passes data between processes: `ctx.Queue`"),
      ("processes", 4, "creates a process: `ctx.Process(target=worker)`"),
      ("process pool", 5, "a process pool: `multiprocessing.get_context(...).Pool`")]),
    # a line naming both the context and the module is read before the context's assignment
    ("import multiprocessing as mp\nctx = mp.get_context('spawn')\np = ctx.Process(target=mp.current_process)\n",
     [("processes", 3, "creates a process: `ctx.Process(target=mp.current_process)`")]),
    ("import torch.multiprocessing as mp\nmp.spawn(fn, nprocs=2)\n",
     [("processes", 2, "starts processes: `mp.spawn`")]),
    ("from multiprocessing.pool import ThreadPool\nThreadPool(4)\n",
     [("thread pool", 2, "a thread pool: `ThreadPool`")]),
    ("from concurrent import futures\nimport concurrent.futures\nfutures.ThreadPoolExecutor(2)\n"
     "concurrent.futures.ProcessPoolExecutor()\n",
     [("thread pool", 3, "a thread pool: `futures.ThreadPoolExecutor`"),
      ("process pool", 4, "a process pool: `concurrent.futures.ProcessPoolExecutor`")]),
    ("import asyncio\nasync def main():\n    await asyncio.gather(a(), b())\nasyncio.run(main())\n",
     [("concurrent coroutines", 3, "runs coroutines concurrently: `asyncio.gather`"),
      ("event loop", 4, "runs an event loop: `asyncio.run`")]),
    # imported but not used, or used only for a name: nothing
    ("import threading\nimport multiprocessing\nimport concurrent.futures\nimport asyncio\n"
     "x = threading.current_thread()\nn = multiprocessing.cpu_count()\n", []),
    ("from threading import Thread\ndef Pool(): ...\nPool()\nexecutor.submit(f)\n", []),
])
def test_concurrency_rule(src: str, expected: list[tuple[str, int, str]]) -> None:
    found = [f for f in performance(src) if f[0] not in ("caching", "compilation", "__slots__")]
    assert found == expected


def test_other_performance_findings_stay() -> None:
    src = ("import functools\n@functools.lru_cache(maxsize=None)\ndef f(): ...\n"
           "class A:\n    __slots__ = ('x',)\n")
    assert [(label, line) for label, line, _ in performance(src)] == [("caching", 3), ("__slots__", 5)]
