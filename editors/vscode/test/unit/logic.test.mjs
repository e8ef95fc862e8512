// Unit tests of the extension's pure logic (node --test; run `npm run test:unit`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';

const require = createRequire(import.meta.url);
const logic = require('../../out/logic.js');

test('server command from the interpreter (isolated), or the explicit command', () => {
  assert.deepEqual(logic.serverCommand([], '/usr/bin/python3'), { command: '/usr/bin/python3', args: ['-I', '-m', 'repodoc_lsp', 'serve'] });
  assert.deepEqual(logic.serverCommand(undefined, ''), { command: 'python3', args: ['-I', '-m', 'repodoc_lsp', 'serve'] });
  assert.deepEqual(logic.serverCommand(['repodoc', 'serve', ''], 'python3'), { command: 'repodoc', args: ['serve'], custom: true });
});

test('server settings: every server key, none of the client ones', () => {
  const values = { outputDir: 'site', regenerateOnSave: false, interpreter: 'python3', maxWorkspaceSymbols: 5, jobs: 2,
    maxFileBytes: 10, cacheDir: '/home/me/.cache/x', templates: '/home/me/tpl' };
  const { settings, ignored } = logic.serverSettings((k) => (k in values ? { globalValue: values[k] } : undefined));
  assert.deepEqual(settings, { outputDir: 'site', regenerateOnSave: false, maxWorkspaceSymbols: 5, jobs: 2, maxFileBytes: 10,
    cacheDir: '/home/me/.cache/x', templates: '/home/me/tpl' });
  assert.deepEqual(ignored, []);
  // the four the extension could not send before
  for (const key of ['cacheDir', 'jobs', 'templates', 'maxFileBytes']) assert.ok(logic.SERVER_SETTINGS.includes(key), key);
});

test('code and path settings come from user settings only', () => {
  const ws = ['/w/proj'];
  const inspected = {
    templates: { defaultValue: '', workspaceValue: 'evil-templates' },
    cacheDir: { defaultValue: '', globalValue: '/home/me/cache', workspaceFolderValue: '/w/proj/.cache' },
    pythonPath: { defaultValue: '', workspaceValue: '/w/proj/.venv/bin/python' },
    maxWorkspaceSymbols: { defaultValue: 200, workspaceValue: 7 },
    outputDir: { defaultValue: 'docs', workspaceValue: 'site' },
  };
  for (const trusted of [true, false]) {
    const { settings, ignored } = logic.serverSettings((k) => inspected[k], trusted, ws);
    assert.equal(settings.templates, '');
    assert.equal(settings.cacheDir, '/home/me/cache');
    assert.equal(settings.pythonPath, '');
    assert.equal(settings.maxWorkspaceSymbols, 7);  // a plain setting: the workspace's value
    // the output folder: a trusted workspace may choose it inside itself
    assert.equal(settings.outputDir, trusted ? 'site' : undefined);  // unset: the server chooses
    assert.deepEqual(ignored.sort(), ['repodoc.cacheDir', ...(trusted ? [] : ['repodoc.outputDir']), 'repodoc.pythonPath', 'repodoc.templates']);
  }
  for (const outside of ['../elsewhere', '/tmp/x', '.', 'docs/../..']) {
    const v = logic.trustedValue('outputDir', { defaultValue: 'docs', globalValue: 'mine', workspaceValue: outside }, true, ws);
    assert.deepEqual(v, { value: 'mine', ignored: 'repodoc.outputDir' }, outside);
  }
  // nobody chose: not sent, so the server keeps a project's own docs/ out of it
  assert.deepEqual(logic.trustedValue('outputDir', { defaultValue: 'docs' }, true, ws), { value: undefined });
  assert.ok(!('outputDir' in logic.serverSettings((k) => ({ defaultValue: k === 'outputDir' ? 'docs' : 1 }), true, ws).settings));
  // the person may choose any output folder in their user settings
  assert.deepEqual(logic.trustedValue('outputDir', { defaultValue: 'docs', globalValue: '/srv/docs' }, false, ws), { value: '/srv/docs' });
  assert.match(logic.ignoredMessage(['repodoc.templates']), /repodoc\.templates.*user settings only/);
});

test('the interpreter: the setting, else the Python extension, else python3', () => {
  const ws = ['/w/proj'];
  assert.deepEqual(logic.chooseInterpreter('/opt/py', '/venv/bin/python', true, ws), { interpreter: '/opt/py', source: 'setting' });
  assert.deepEqual(logic.chooseInterpreter('', '/venv/bin/python', false, ws), { interpreter: '/venv/bin/python', source: 'python-extension' });
  assert.deepEqual(logic.chooseInterpreter(undefined, undefined, true, ws), { interpreter: 'python3', source: 'default' });
  // a checkout's own .venv, selected by the Python extension, runs only in a trusted workspace
  assert.deepEqual(logic.chooseInterpreter('', '/w/proj/.venv/bin/python', true, ws), { interpreter: '/w/proj/.venv/bin/python', source: 'python-extension' });
  assert.deepEqual(logic.chooseInterpreter('', '/w/proj/.venv/bin/python', false, ws), { interpreter: 'python3', source: 'default' });
});

test('one clear message with the fix when the server cannot start', () => {
  const cmd = logic.serverCommand([], 'py');
  for (const message of [logic.cannotStartMessage(cmd, { notFound: true }),
    logic.cannotStartMessage(cmd, { stderr: "Traceback...\nModuleNotFoundError: No module named 'repodoc_lsp'" })]) {
    assert.match(message, /"py"/);
    assert.match(message, /from its repository .*python3 -m venv .*pip install \/path\/to\/repodoc-lsp/);
    assert.doesNotMatch(message, /pip install repodoc-lsp/);  // not a published package
  }
  assert.match(logic.cannotStartMessage(cmd, { notFound: true }, 'python-extension'), /selected in the Python extension/);
  assert.doesNotMatch(logic.cannotStartMessage(cmd, { stderr: 'line 1\nline 2\nboom' }), /line 1/);
  // a custom command that does not exist: checked before starting, one message naming the setting
  const missing = logic.checkServer(logic.serverCommand(['/nonexistent/repodoc', 'serve'], ''));
  assert.match(missing.problem, /"\/nonexistent\/repodoc" of "repodoc.serverCommand" was not found/);
  assert.deepEqual(logic.checkServer(logic.serverCommand(['sh', '-c', 'exit 1'], '')), {});
  assert.equal(logic.findExecutable('sh', '/nonexistent:/bin:/usr/bin') !== undefined, true);
  assert.equal(logic.findExecutable('no-such-command-here', '/bin:/usr/bin'), undefined);
});

test("a checkout's own repodoc_lsp/ is never imported", (t) => {
  const python = process.env.REPODOC_TEST_PYTHON;
  if (!python) {
    t.skip('REPODOC_TEST_PYTHON is not set');
    return;
  }
  const checkout = mkdtempSync(join(tmpdir(), 'repodoc-checkout-'));
  const sentinel = join(checkout, 'SENTINEL');
  mkdirSync(join(checkout, 'repodoc_lsp'));
  const hostile = `open(${JSON.stringify(sentinel)}, "a").write("imported\\n")\n__version__ = "hostile"\n`;
  writeFileSync(join(checkout, 'repodoc_lsp', '__init__.py'), hostile);
  writeFileSync(join(checkout, 'repodoc_lsp', '__main__.py'), hostile);
  const safe = mkdtempSync(join(tmpdir(), 'repodoc-safe-'));
  const before = process.cwd();
  process.chdir(checkout);  // as if VS Code's own working folder were the checkout
  try {
    // the attack is real: a plain `python -m repodoc_lsp` in the checkout imports it
    spawnSync(python, ['-m', 'repodoc_lsp', '--version'], { cwd: checkout, env: { ...process.env, PYTHONPATH: checkout } });
    assert.ok(existsSync(sentinel), 'the hostile package should be importable without isolation');
    writeFileSync(sentinel, '');
    const cmd = logic.serverCommand([], python);
    const probe = logic.checkServer(cmd, safe);
    assert.equal(probe.problem, undefined);
    assert.notEqual(probe.version, 'hostile');
    // the server as the extension starts it, even with PYTHONPATH pointing into the checkout; stdin
    // closed, so it ends at once
    const run = spawnSync(cmd.command, cmd.args, { cwd: safe, input: '', timeout: 20000,
      env: { ...process.env, PYTHONPATH: checkout } });
    assert.equal(run.error, undefined);
    assert.equal(readFileSync(sentinel, 'utf8'), '', 'the checkout\'s repodoc_lsp was imported');
  } finally {
    process.chdir(before);
  }
});

test('the summary names the pages that could not be written', () => {
  const message = logic.summaryMessage({ written: 2, unchanged: 0, removed: 0, seconds: 0.5,
    errors: [{ path: 'docs/a.py_docs.md', reason: 'No space left on device' }, { path: 'docs/b.md', reason: 'EACCES' },
      { path: 'c', reason: 'x' }, { path: 'd', reason: 'y' }] });
  assert.match(message, /4 pages could not be written: docs\/a\.py_docs\.md: No space left on device; docs\/b\.md: EACCES; c: x \(and 1 more/);
  assert.doesNotMatch(logic.summaryMessage({ written: 1, errors: [] }), /could not/);
  assert.match(logic.summaryMessage({ cancelled: true, written: 1, errors: [{ path: 'p', reason: 'r' }] }), /cancelled after 1 page .*1 page could not be written: p: r/);
});

test('pages a person edited: the summary says how to overwrite them, apart from files RepoDoc did not write', () => {
  const summary = { written: 0, unchanged: 5, removed: 0, seconds: 1, conflicts: [
    { path: 'pkg/a.py_docs.md', reason: 'changed since repodoc wrote it (kept; repodoc.generate with {"force": true} ...)' },
    { path: 'gone.py_kw.md', reason: 'no longer generated, but changed since repodoc wrote it (kept; ...)' },
    { path: 'notes.md', reason: 'a file repodoc did not generate is in the way' }] };
  assert.deepEqual(logic.editedConflicts(summary).map((c) => c.path), ['pkg/a.py_docs.md', 'gone.py_kw.md']);
  assert.equal(logic.summaryMessage(summary), 'RepoDoc: 0 pages written, 5 unchanged, 0 removed, ' +
    '1 conflict (files not written by RepoDoc are left alone), 2 pages you edited kept ' +
    '("RepoDoc: Generate, Overwriting Edited Pages" overwrites them after copying each to PAGE.orig) in 1.0 s.');
  assert.deepEqual(logic.editedConflicts({ conflicts: [{ path: 'x', reason: 'a folder is in the way' }] }), []);
  assert.match(logic.overwriteQuestion(), /copied to PAGE\.orig first/);
});

test('summary and status texts', () => {
  assert.equal(logic.summaryMessage({ written: 3, unchanged: 2, removed: 1, conflicts: [{}], skipped: [], seconds: 1.25 }),
    'RepoDoc: 3 pages written, 2 unchanged, 1 removed, 1 conflict (files not written by RepoDoc are left alone) in 1.3 s.');
  assert.equal(logic.summaryMessage({ written: 1, unchanged: 0, removed: 0, skipped: [{}], conflicts: [
    { path: 'a', reason: 'changed since repodoc wrote it (kept)' }], seconds: 0 }),
    'RepoDoc: 1 page written, 0 unchanged, 0 removed, 1 file skipped, 1 page you edited kept ' +
    '("RepoDoc: Generate, Overwriting Edited Pages" overwrites it after copying each to PAGE.orig) in 0.0 s.');
  assert.deepEqual([0, 1, 2].map((n) => logic.plural(n, 'page')), ['0 pages', '1 page', '2 pages']);
  assert.match(logic.summaryMessage({ cancelled: true, written: 7 }), /cancelled after 7 pages/);
  assert.equal(logic.statusText('indexing', '3/9'), '$(sync~spin) RepoDoc: indexing 3/9');
});

test('the start-up check runs the interpreter for real', (t) => {
  // a Python that does not exist
  const missing = logic.checkServer(logic.serverCommand([], '/nonexistent/python3'));
  assert.match(missing.problem, /"\/nonexistent\/python3" was not found/);
  // a real Python without repodoc_lsp: no site-packages (-S), isolated (-I)
  const dir = mkdtempSync(join(tmpdir(), 'repodoc-py-'));
  const bare = join(dir, 'python-without-repodoc');
  writeFileSync(bare, '#!/bin/sh\nexec python3 -I -S "$@"\n');
  chmodSync(bare, 0o755);
  const probe = spawnSync(bare, ['-c', 'import repodoc_lsp']);
  if (probe.status === 0) {
    t.skip('every python3 here has repodoc_lsp');
  } else {
    const result = logic.checkServer(logic.serverCommand([], bare));
    assert.match(result.problem, new RegExp(`repodoc-lsp is not installed for "${bare}"`));
  }
  // a custom command: only that it exists (the client reports the rest)
  assert.deepEqual(logic.checkServer(logic.serverCommand(['sh', 'serve'], '')), {});
  // the interpreter the Python tests run with (REPODOC_TEST_PYTHON) has it: no problem, its version
  if (process.env.REPODOC_TEST_PYTHON) {
    const ok = logic.checkServer(logic.serverCommand([], process.env.REPODOC_TEST_PYTHON));
    assert.equal(ok.problem, undefined);
    assert.match(ok.version, /^\d+\.\d+/);
  }
});

test('status bar follows the server progress', () => {
  const p = new logic.ProgressTracker();
  assert.equal(p.update('a', { kind: 'begin', title: 'RepoDoc: indexing', message: '0/9' }), '$(sync~spin) RepoDoc: indexing 0/9');
  assert.equal(p.update('x', { kind: 'begin', title: 'Something else' }), undefined);
  assert.equal(p.update('x', { kind: 'report', message: '1' }), undefined);
  assert.equal(p.update('a', { kind: 'report', message: '5/9' }), '$(sync~spin) RepoDoc: indexing 5/9');
  assert.equal(p.update(7, { kind: 'begin', title: 'RepoDoc: generating' }), '$(sync~spin) RepoDoc: generating');
  assert.equal(p.update(7, { kind: 'report', percentage: 40 }), '$(sync~spin) RepoDoc: generating 40%');
  assert.equal(p.update('a', { kind: 'end' }), '$(sync~spin) RepoDoc: generating 40%');
  assert.equal(p.update(7, { kind: 'end' }), '$(book) RepoDoc');
});

test('hover: extras beside another Python language server, unless the person chose', () => {
  const unset = { defaultValue: 'full' };
  assert.equal(logic.hoverMode(unset, ['ms-python.vscode-pylance', 'repodoc.repodoc']), 'extras');
  assert.equal(logic.hoverMode(unset, ['detachhead.basedpyright']), 'extras');
  assert.equal(logic.hoverMode(unset, ['ms-python.python'], 'Jedi'), 'extras');
  assert.equal(logic.hoverMode(unset, ['ms-python.python'], 'None'), undefined);
  assert.equal(logic.hoverMode(unset, ['repodoc.repodoc']), undefined);
  assert.equal(logic.hoverMode({ defaultValue: 'full', globalValue: 'full' }, ['ms-python.vscode-pylance']), undefined);
  assert.equal(logic.hoverMode({ defaultValue: 'full', workspaceValue: 'off' }, ['ms-pyright.pyright']), undefined);
});
