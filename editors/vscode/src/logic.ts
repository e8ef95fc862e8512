// Pure logic of the extension (no `vscode` import), unit-tested under node's test runner.
import { spawnSync } from 'child_process';

/** The server settings the extension sends (section `repodoc`, camelCase keys, as in the README contract). */
export const SERVER_SETTINGS = [
  'outputDir', 'regenerateOnSave', 'include', 'exclude', 'maxWorkspaceSymbols',
  'embedSourceMaxBytes', 'pythonPath', 'projectName',
] as const;

export interface ServerCommand { command: string; args: string[] }

/** How to start the server: `repodoc.serverCommand` if set, else `<interpreter> -m repodoc_lsp serve`. */
export function serverCommand(serverCommandSetting: readonly string[] | undefined, interpreter: string | undefined): ServerCommand {
  const argv = (serverCommandSetting ?? []).filter((a) => a.trim() !== '');
  if (argv.length > 0) {
    return { command: argv[0], args: argv.slice(1) };
  }
  return { command: (interpreter ?? '').trim() || 'python3', args: ['-m', 'repodoc_lsp', 'serve'] };
}

/** The `repodoc` settings object for initializationOptions and workspace/configuration. */
export function serverSettings(get: (key: string) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_SETTINGS) {
    const value = get(key);
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out;
}

/** The check run before starting: does the interpreter have repodoc_lsp? */
export function probeArgs(): string[] {
  return ['-c', 'import repodoc_lsp, sys; sys.stdout.write(repodoc_lsp.__version__)'];
}

/** One clear message, with the fix, when the server cannot start. */
export function cannotStartMessage(cmd: ServerCommand, failure: { notFound?: boolean; stderr?: string }): string {
  const python = cmd.command;
  if (failure.notFound) {
    return `RepoDoc: cannot start the server: "${python}" was not found. Install Python and repodoc-lsp ` +
      `(\`pip install repodoc-lsp\`), or set "repodoc.interpreter" to a Python that has it.`;
  }
  if ((failure.stderr ?? '').includes('No module named')) {
    return `RepoDoc: repodoc-lsp is not installed for "${python}". Run \`${python} -m pip install repodoc-lsp\`, ` +
      `or set "repodoc.interpreter" to a Python that has it.`;
  }
  const detail = (failure.stderr ?? '').trim().split('\n').pop() ?? '';
  return `RepoDoc: the server command "${[python, ...cmd.args].join(' ')}" failed${detail ? `: ${detail}` : ''}. ` +
    `Check "repodoc.interpreter" or "repodoc.serverCommand".`;
}

/**
 * Checks before starting that `<interpreter> -m repodoc_lsp` can run: undefined and the version when
 * it can, else the one message to show. A custom server command is not checked (the client reports it).
 */
export function checkServer(cmd: ServerCommand): { problem?: string; version?: string } {
  if (cmd.args[0] !== '-m') {
    return {};
  }
  const probe = spawnSync(cmd.command, probeArgs(), { encoding: 'utf8', timeout: 20000 });
  if (probe.error) {
    const notFound = (probe.error as NodeJS.ErrnoException).code === 'ENOENT';
    return { problem: cannotStartMessage(cmd, { notFound, stderr: String(probe.error) }) };
  }
  if (probe.status !== 0) {
    return { problem: cannotStartMessage(cmd, { stderr: probe.stderr }) };
  }
  return { version: probe.stdout };
}

export interface Summary {
  written?: number; unchanged?: number; removed?: number; conflicts?: unknown[]; skipped?: unknown[];
  seconds?: number; cancelled?: boolean;
}

/** The notification shown when generation ends. */
export function summaryMessage(summary: Summary): string {
  if (summary.cancelled) {
    return `RepoDoc: generation cancelled after ${summary.written ?? 0} pages (every page written is complete).`;
  }
  const conflicts = summary.conflicts?.length ?? 0;
  const skipped = summary.skipped?.length ?? 0;
  return `RepoDoc: ${summary.written ?? 0} pages written, ${summary.unchanged ?? 0} unchanged, ` +
    `${summary.removed ?? 0} removed` + (skipped ? `, ${skipped} files skipped` : '') +
    (conflicts ? `, ${conflicts} conflicts (files not written by RepoDoc are left alone)` : '') +
    ` in ${(summary.seconds ?? 0).toFixed(1)} s.`;
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
