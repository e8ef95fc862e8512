// Unit tests of the extension's pure logic (node --test; run `npm run test:unit`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';

const require = createRequire(import.meta.url);
const logic = require('../../out/logic.js');

test('server command from the interpreter, or the explicit command', () => {
  assert.deepEqual(logic.serverCommand([], '/usr/bin/python3'), { command: '/usr/bin/python3', args: ['-m', 'repodoc_lsp', 'serve'] });
  assert.deepEqual(logic.serverCommand(undefined, ''), { command: 'python3', args: ['-m', 'repodoc_lsp', 'serve'] });
  assert.deepEqual(logic.serverCommand(['repodoc', 'serve', ''], 'python3'), { command: 'repodoc', args: ['serve'] });
});

test('server settings carry only the server keys', () => {
  const values = { outputDir: 'site', regenerateOnSave: false, interpreter: 'python3', maxWorkspaceSymbols: 5 };
  assert.deepEqual(logic.serverSettings((k) => values[k]), { outputDir: 'site', regenerateOnSave: false, maxWorkspaceSymbols: 5 });
});

test('one clear message with the fix when the server cannot start', () => {
  const cmd = logic.serverCommand([], 'py');
  assert.match(logic.cannotStartMessage(cmd, { notFound: true }), /"py" was not found.*pip install repodoc-lsp/);
  assert.equal(logic.cannotStartMessage(cmd, { stderr: "Traceback...\nModuleNotFoundError: No module named 'repodoc_lsp'" }),
    'RepoDoc: repodoc-lsp is not installed for "py". Run `py -m pip install repodoc-lsp`, or set "repodoc.interpreter" to a Python that has it.');
  assert.doesNotMatch(logic.cannotStartMessage(cmd, { stderr: 'line 1\nline 2\nboom' }), /line 1/);
});

test('summary and status texts', () => {
  assert.equal(logic.summaryMessage({ written: 3, unchanged: 2, removed: 1, conflicts: [{}], skipped: [], seconds: 1.25 }),
    'RepoDoc: 3 pages written, 2 unchanged, 1 removed, 1 conflicts (files not written by RepoDoc are left alone) in 1.3 s.');
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
    assert.equal(result.problem, `RepoDoc: repodoc-lsp is not installed for "${bare}". Run \`${bare} -m pip install repodoc-lsp\`, ` +
      'or set "repodoc.interpreter" to a Python that has it.');
  }
  // a custom command is left to the client
  assert.deepEqual(logic.checkServer(logic.serverCommand(['repodoc', 'serve'], '')), {});
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
