// Pure logic of the extension (no `vscode` import), unit-tested under node's test runner.
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { OUTPUT_SETTING, SERVER_SETTINGS, USER_ONLY_SETTINGS } from './fields';

export { OUTPUT_SETTING, SERVER_SETTINGS, USER_ONLY_SETTINGS };

export interface ServerCommand { command: string; args: string[]; custom?: boolean }

/** Where the Python that runs the server came from (for the messages). */
export type InterpreterSource = 'setting' | 'python-extension' | 'default';

/**
 * How to start the server: `repodoc.serverCommand` if set, else `<interpreter> -I -m repodoc_lsp serve`
 * (-I: isolated, so neither the working folder nor PYTHONPATH can put a checkout's own `repodoc_lsp/`
 * before the installed one).
 */
export function serverCommand(serverCommandSetting: readonly string[] | undefined, interpreter: string | undefined): ServerCommand {
  const argv = (serverCommandSetting ?? []).filter((a) => a.trim() !== '');
  if (argv.length > 0) {
    return { command: argv[0], args: argv.slice(1), custom: true };
  }
  return { command: (interpreter ?? '').trim() || 'python3', args: ['-I', '-m', 'repodoc_lsp', 'serve'] };
}

/** The values of one setting at each level, as `WorkspaceConfiguration.inspect` gives them. */
export interface Inspected {
  defaultValue?: unknown; globalValue?: unknown; workspaceValue?: unknown; workspaceFolderValue?: unknown;
}

/** Is `p` (a setting's path) inside `folder` once resolved against it? */
export function insideFolder(folder: string, p: string): boolean {
  const resolved = path.resolve(folder, p);
  const rel = path.relative(folder, resolved);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/**
 * The value of a setting that respects the trust model: settings that run code or choose paths
 * (USER_ONLY_SETTINGS) come from user settings only; the output folder also from a trusted workspace's
 * settings when it stays inside every workspace folder; the rest as VS Code merges them. `ignored`
 * names a workspace value that was not used.
 */
export function trustedValue(key: string, v: Inspected, trusted: boolean, folders: readonly string[]): { value: unknown; ignored?: string } {
  const fromWorkspace = v.workspaceFolderValue ?? v.workspaceValue;
  // The output folder nobody set is the server's to choose (`docs`, or `repodoc-docs` beside a
  // project's own documentation): its default is not sent.
  const userLevel = v.globalValue ?? (key === OUTPUT_SETTING ? undefined : v.defaultValue);
  const userOnly = (USER_ONLY_SETTINGS as readonly string[]).includes(key);
  if (fromWorkspace === undefined || (!userOnly && key !== OUTPUT_SETTING)) {
    return { value: fromWorkspace ?? userLevel };
  }
  if (key === OUTPUT_SETTING && trusted && typeof fromWorkspace === 'string' && folders.length > 0 &&
      folders.every((f) => insideFolder(f, fromWorkspace))) {
    return { value: fromWorkspace };
  }
  return { value: userLevel, ignored: `repodoc.${key}` };
}

/** The `repodoc` settings object for initializationOptions and workspace/configuration, and the workspace values left out. */
export function serverSettings(inspect: (key: string) => Inspected | undefined, trusted = true, folders: readonly string[] = []):
  { settings: Record<string, unknown>; ignored: string[] } {
  const settings: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const key of SERVER_SETTINGS) {
    const inspected = inspect(key);
    if (!inspected) {
      continue;
    }
    const { value, ignored: left } = trustedValue(key, inspected, trusted, folders);
    if (value !== undefined) {
      settings[key] = value;
    }
    if (left) {
      ignored.push(left);
    }
  }
  return { settings, ignored };
}

/** Extensions that show a Python hover of their own (signature and docstring). */
export const PYTHON_HOVER_EXTENSIONS = ['ms-python.vscode-pylance', 'detachhead.basedpyright', 'ms-pyright.pyright'];

/**
 * `hover` when the person did not set it: `extras` beside another Python language server (one of
 * PYTHON_HOVER_EXTENSIONS, or the Python extension running Jedi or Pylance), so a hover shows one
 * signature and docstring; undefined to keep the setting's value.
 */
export function hoverMode(hover: Inspected | undefined, extensions: readonly string[], pythonLanguageServer?: string): string | undefined {
  if (hover && (hover.globalValue ?? hover.workspaceValue ?? hover.workspaceFolderValue) !== undefined) {
    return undefined;
  }
  const ids = extensions.map((id) => id.toLowerCase());
  const beside = PYTHON_HOVER_EXTENSIONS.some((id) => ids.includes(id)) ||
    (ids.includes('ms-python.python') && ['Jedi', 'Pylance'].includes(pythonLanguageServer ?? ''));
  return beside ? 'extras' : undefined;
}

/** The message for workspace settings left out (one, naming every key). */
export function ignoredMessage(ignored: readonly string[]): string {
  return `RepoDoc: this workspace's settings set ${ignored.join(', ')}, which RepoDoc takes from your user settings ` +
    'only (they run code or choose paths outside the workspace); the workspace values are ignored.';
}

/**
 * The Python that runs the server: `repodoc.interpreter` from user settings, else the interpreter
 * selected in the Python extension (in an untrusted workspace only when it lies outside every
 * workspace folder: a checkout can ship its own `.venv`), else `python3`.
 */
export function chooseInterpreter(userSetting: string | undefined, pythonExtension: string | undefined, trusted: boolean,
  folders: readonly string[]): { interpreter: string; source: InterpreterSource } {
  if (userSetting && userSetting.trim()) {
    return { interpreter: userSetting.trim(), source: 'setting' };
  }
  if (pythonExtension && (trusted || !folders.some((f) => insideFolder(f, pythonExtension)))) {
    return { interpreter: pythonExtension, source: 'python-extension' };
  }
  return { interpreter: 'python3', source: 'default' };
}

/** The executable a command name runs (a path as it is; a bare name looked up in PATH), or undefined. */
export function findExecutable(command: string, envPath = process.env.PATH ?? ''): string | undefined {
  const candidates = command.includes(path.sep) ? [command] : envPath.split(path.delimiter).filter(Boolean).map((d) => path.join(d, command));
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) {
        return candidate;
      }
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** The check run before starting (isolated, as the server is started): does the interpreter have repodoc_lsp? */
export function probeArgs(): string[] {
  return ['-I', '-c', 'import repodoc_lsp, sys; sys.stdout.write(repodoc_lsp.__version__)'];
}

/** How to install the server: from the repository, in a virtual environment (it is not on the package index). */
export const INSTALL_HINT = 'Install repodoc-lsp from its repository (a checkout or a git URL) in a virtual environment: ' +
  '`python3 -m venv ~/.venvs/repodoc && ~/.venvs/repodoc/bin/pip install /path/to/repodoc-lsp`, then select that ' +
  'environment in the Python extension or set "repodoc.interpreter" to ~/.venvs/repodoc/bin/python in your user settings.';

/** One clear message, with the fix, when the server cannot start. */
export function cannotStartMessage(cmd: ServerCommand, failure: { notFound?: boolean; stderr?: string }, source: InterpreterSource = 'setting'): string {
  const exe = cmd.command;
  const from = source === 'python-extension' ? ' (the interpreter selected in the Python extension)' :
    source === 'default' ? ' (the default: no interpreter is set or selected)' : '';
  if (cmd.custom) {
    if (failure.notFound) {
      return `RepoDoc: cannot start the server: "${exe}" of "repodoc.serverCommand" was not found. Fix the command in ` +
        'your user settings, or remove it to run the server with a Python interpreter.';
    }
    const detail = (failure.stderr ?? '').trim().split('\n').pop() ?? '';
    return `RepoDoc: the server command "${[exe, ...cmd.args].join(' ')}" failed${detail ? `: ${detail}` : ''} ` +
      '(see RepoDoc: Show Output). Fix "repodoc.serverCommand" in your user settings, or remove it.';
  }
  if (failure.notFound) {
    return `RepoDoc: cannot start the server: "${exe}"${from} was not found. ${INSTALL_HINT}`;
  }
  if ((failure.stderr ?? '').includes('No module named')) {
    return `RepoDoc: repodoc-lsp is not installed for "${exe}"${from}. ${INSTALL_HINT}`;
  }
  const detail = (failure.stderr ?? '').trim().split('\n').pop() ?? '';
  return `RepoDoc: "${[exe, ...cmd.args].join(' ')}" failed${detail ? `: ${detail}` : ''} (see RepoDoc: Show Output). ` +
    'Check "repodoc.interpreter" or "repodoc.serverCommand" in your user settings.';
}

/**
 * Checks before starting, in `cwd` (a folder outside the workspace): that `<interpreter> -I` can import
 * repodoc_lsp (undefined and its version when it can, else the one message to show); for a custom
 * command, only that its executable exists (the rest is reported once if it fails to start).
 */
export function checkServer(cmd: ServerCommand, cwd?: string, source: InterpreterSource = 'setting'): { problem?: string; version?: string } {
  if (cmd.custom) {
    return findExecutable(cmd.command) ? {} : { problem: cannotStartMessage(cmd, { notFound: true }, source) };
  }
  const probe = spawnSync(cmd.command, probeArgs(), { encoding: 'utf8', timeout: 20000, cwd });
  if (probe.error) {
    const notFound = (probe.error as NodeJS.ErrnoException).code === 'ENOENT';
    return { problem: cannotStartMessage(cmd, { notFound, stderr: String(probe.error) }, source) };
  }
  if (probe.status !== 0) {
    return { problem: cannotStartMessage(cmd, { stderr: probe.stderr }, source) };
  }
  return { version: probe.stdout };
}

export interface PathReason { path?: string; reason?: string }

export interface Summary {
  written?: number; unchanged?: number; removed?: number; conflicts?: PathReason[]; skipped?: unknown[];
  errors?: PathReason[]; seconds?: number; cancelled?: boolean;
}

/** The palette title of the command that overwrites pages a person edited. */
export const OVERWRITE_TITLE = 'RepoDoc: Generate, Overwriting Edited Pages';

/** The conflicts that are generated pages a person edited (the server keeps them until forced). */
export function editedConflicts(summary: Summary): PathReason[] {
  return (summary.conflicts ?? []).filter((c) => (c.reason ?? '').startsWith('changed since repodoc wrote it') ||
    (c.reason ?? '').startsWith('no longer generated, but changed since repodoc wrote it'));
}

/** The question asked before overwriting edited pages. */
export function overwriteQuestion(): string {
  return 'RepoDoc: generate the documentation and overwrite the generated pages you edited? ' +
    'Each edited page is copied to PAGE.orig first; pages RepoDoc did not write are never touched.';
}

/** `n` and `word`, or its plural (`words`, else `word + 's'`): "1 page", "3 pages". */
export function plural(n: number, word: string, words?: string): string {
  return `${n} ${n === 1 ? word : words ?? word + 's'}`;
}

/** The notification shown when generation ends (its severity: an error when pages could not be written). */
export function summaryMessage(summary: Summary): string {
  const errors = summary.errors ?? [];
  const failed = errors.length ? ` ${plural(errors.length, 'page')} could not be written: ` +
    errors.slice(0, 3).map((e) => `${e.path ?? '?'}: ${e.reason ?? 'unknown error'}`).join('; ') +
    (errors.length > 3 ? ` (and ${errors.length - 3} more, see RepoDoc: Show Output)` : '') + '.' : '';
  if (summary.cancelled) {
    return `RepoDoc: generation cancelled after ${plural(summary.written ?? 0, 'page')} (every page written is complete).${failed}`;
  }
  const edited = editedConflicts(summary).length;
  const others = (summary.conflicts?.length ?? 0) - edited;
  const skipped = summary.skipped?.length ?? 0;
  return `RepoDoc: ${plural(summary.written ?? 0, 'page')} written, ${summary.unchanged ?? 0} unchanged, ` +
    `${summary.removed ?? 0} removed` + (skipped ? `, ${plural(skipped, 'file')} skipped` : '') +
    (others ? `, ${plural(others, 'conflict')} (files not written by RepoDoc are left alone)` : '') +
    (edited ? `, ${plural(edited, 'page')} you edited kept ("${OVERWRITE_TITLE}" overwrites ` +
      `${edited === 1 ? 'it' : 'them'} after copying each to PAGE.orig)` : '') +
    ` in ${(summary.seconds ?? 0).toFixed(1)} s.${failed}`;
}

/** Status bar text for a state. */
export function statusText(state: 'starting' | 'indexing' | 'generating' | 'ready' | 'stopped', detail = ''): string {
  const icon = { starting: '$(sync~spin)', indexing: '$(sync~spin)', generating: '$(sync~spin)', ready: '$(book)', stopped: '$(error)' }[state];
  const label = { starting: 'RepoDoc: starting', indexing: 'RepoDoc: indexing', generating: 'RepoDoc: generating', ready: 'RepoDoc', stopped: 'RepoDoc: stopped' }[state];
  return `${icon} ${label}${detail ? ` ${detail}` : ''}`;
}

export interface ProgressValue { kind: string; title?: string; message?: string; percentage?: number }

/**
 * Status bar text from the server's work-done progress: a `begin` titled "RepoDoc: indexing" or
 * "RepoDoc: generating" starts a state, reports update it, and the last `end` returns to ready.
 */
export class ProgressTracker {
  private readonly active = new Map<string, { state: 'indexing' | 'generating'; detail: string }>();

  /** The new status text, or undefined when the progress is not one of the server's known ones. */
  update(token: string | number, value: ProgressValue): string | undefined {
    const key = String(token);
    if (value.kind === 'begin') {
      const title = (value.title ?? '').toLowerCase();
      const state = title.includes('index') ? 'indexing' : title.includes('generat') ? 'generating' : undefined;
      if (!state) {
        return undefined;
      }
      this.active.set(key, { state, detail: '' });
    }
    const entry = this.active.get(key);
    if (!entry) {
      return undefined;
    }
    if (value.kind === 'end') {
      this.active.delete(key);
      const other = [...this.active.values()].pop();
      return other ? statusText(other.state, other.detail) : statusText('ready');
    }
    entry.detail = value.message ?? (value.percentage !== undefined ? `${value.percentage}%` : entry.detail);
    return statusText(entry.state, entry.detail);
  }
}
