import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import { PythonExtension } from '@vscode/python-extension';
import {
  CloseAction, DidChangeConfigurationNotification, ErrorAction, ErrorHandler, ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, State,
} from 'vscode-languageclient/node';
import {
  cannotStartMessage, checkServer, chooseInterpreter, ignoredMessage, InterpreterSource, ProgressTracker,
  editedConflicts, hoverMode, overwriteQuestion, ServerCommand, serverCommand, serverSettings, statusText, Summary,
  summaryMessage,
} from './logic';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let lastFile: vscode.Uri | undefined;
let safeCwd: string;
let python: PythonExtension | undefined;
let pythonInterpreter: string | undefined;
const reportedIgnored = new Set<string>();

/**
 * The client, with every notification it would show itself while starting sent to the output channel
 * instead: a failed start then gives one message, ours, with the fix.
 */
class RepodocClient extends LanguageClient {
  quietStart = true;

  error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    super.error(message, data, this.quietStart ? false : showNotification);
  }
}

function rememberFile(editor: vscode.TextEditor | undefined): void {
  if (editor?.document.uri.scheme === 'file') {
    lastFile = editor.document.uri;
  }
}

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('repodoc');
}

function folders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
}

/** A user-level value (workspace values of code and path settings are never used). */
function userValue<T>(key: string): T | undefined {
  const v = config().inspect<T>(key);
  return v?.globalValue ?? v?.defaultValue;
}

/** The server settings under the trust model; workspace values left out are reported once. */
function settings(): Record<string, unknown> {
  const cfg = config();
  const { settings: values, ignored } = serverSettings((key) => cfg.inspect(key), vscode.workspace.isTrusted, folders());
  const fromWorkspace = ['interpreter', 'serverCommand'].filter((key) => {
    const v = cfg.inspect(key);
    return v?.workspaceValue !== undefined || v?.workspaceFolderValue !== undefined;
  }).map((key) => `repodoc.${key}`);
  const hover = hoverMode(cfg.inspect('hover'), vscode.extensions.all.map((e) => e.id),
    vscode.workspace.getConfiguration('python').get<string>('languageServer'));
  if (hover !== undefined) {
    values.hover = hover;
  }
  const fresh = [...ignored, ...fromWorkspace].filter((key) => !reportedIgnored.has(key));
  if (fresh.length > 0) {
    fresh.forEach((key) => reportedIgnored.add(key));
    const message = ignoredMessage([...ignored, ...fromWorkspace]);
    output.appendLine(message);
    void vscode.window.showWarningMessage(message);
  }
  return values;
}

/** The interpreter selected in the Python extension for the first workspace folder, if it is installed. */
async function refreshPythonInterpreter(): Promise<void> {
  if (!python) {
    return;
  }
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  const active = python.environments.getActiveEnvironmentPath(resource);
  const resolved = await python.environments.resolveEnvironment(active);
  pythonInterpreter = resolved?.executable.uri?.fsPath ?? active?.path;
}

async function connectPythonExtension(context: vscode.ExtensionContext): Promise<void> {
  if (!vscode.extensions.getExtension('ms-python.python')) {
    return;
  }
  try {
    python = await PythonExtension.api();
    await refreshPythonInterpreter();
    context.subscriptions.push(python.environments.onDidChangeActiveEnvironmentPath(async () => {
      const before = pythonInterpreter;
      await refreshPythonInterpreter();
      if (pythonInterpreter !== before && currentCommand().source === 'python-extension') {
        output.appendLine(`the Python extension selected ${pythonInterpreter}: restarting the server`);
        await restart();
      }
    }));
  } catch (err) {
    output.appendLine(`the Python extension's interpreter is not available: ${String(err)}`);
  }
}

function currentCommand(): { cmd: ServerCommand; source: InterpreterSource } {
  const { interpreter, source } = chooseInterpreter(userValue<string>('interpreter'), pythonInterpreter,
    vscode.workspace.isTrusted, folders());
  return { cmd: serverCommand(userValue<string[]>('serverCommand'), interpreter), source };
}

function showProblem(problem: string): void {
  status.text = statusText('stopped');
  output.appendLine(problem);
  void vscode.window.showErrorMessage(problem, 'Open Settings', 'Show Output').then((choice) => {
    if (choice === 'Open Settings') {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'repodoc.interpreter');
    } else if (choice === 'Show Output') {
      output.show();
    }
  });
}

async function startClient(): Promise<LanguageClient | undefined> {
  const { cmd, source } = currentCommand();
  const { problem, version } = checkServer(cmd, safeCwd, source);
  if (version) {
    output.appendLine(`repodoc-lsp ${version} found for ${cmd.command}${source === 'python-extension' ? ' (Python extension)' : ''}`);
  }
  if (problem) {
    showProblem(problem);
    return undefined;
  }
  const progress = new ProgressTracker();
  // no `transport`: the client would append --stdio (the server accepts it, but plain argv is clearer).
  // The working folder is outside the workspace: nothing of a checkout is found through it.
  const serverOptions: ServerOptions = { command: cmd.command, args: cmd.args, options: { env: process.env, cwd: safeCwd } };
  let lc: RepodocClient | undefined;
  let afterStart: ErrorHandler | undefined;
  // a failed start is told once, by whichever comes first: start() rejecting, or the server's end
  // (when it exits after the initialize request was written, the client may not reject start())
  let told = false;
  const tellFailure = (detail: string): void => {
    if (!told) {
      told = true;
      showProblem(cannotStartMessage(cmd, { stderr: detail }, source));
    }
  };
  // once running, the client's own handling: restart after a crash, at most 4 times in 3 minutes
  const running = (): ErrorHandler => (afterStart ??= lc!.createDefaultErrorHandler());
  const clientOptions: LanguageClientOptions = {
    // Python, hand-written docs (their stale references are diagnostics: reST and text as well as Markdown)
    // and the languages repodoc reads with tree-sitter (hover, code lenses, pages on save)
    documentSelector: ['python', 'markdown', 'restructuredtext', 'plaintext', 'c', 'cpp', 'cuda-cpp', 'javascript',
      'javascriptreact', 'typescript', 'typescriptreact', 'go', 'rust', 'java'].map((language) => ({ scheme: 'file', language })),
    outputChannel: output,
    initializationOptions: settings(),
    // no `synchronize.configurationSection`: it would push VS Code's merged values, workspace values of
    // the user-only settings included; changes are sent by onDidChangeConfiguration below, filtered
    // a failed start is reported once, by startClient; a crash later restarts it as usual
    initializationFailedHandler: () => false,
    errorHandler: {
      error: (error, message, count) => (lc?.quietStart ? { action: ErrorAction.Shutdown, handled: true } :
        running().error(error, message, count)),
      closed: () => {
        if (!lc?.quietStart) {
          return running().closed();
        }
        tellFailure('the server ended before it answered initialize');
        return { action: CloseAction.DoNotRestart, handled: true };
      },
    },
    middleware: {
      // the server's work-done progress (indexing, generating) also drives the status bar; `next`
      // keeps the client's own progress notification
      handleWorkDoneProgress: (token, params, next) => {
        const text = progress.update(token, params);
        if (text) {
          status.text = text;
        }
        next(token, params);
      },
      workspace: {
        // answer workspace/configuration (section "repodoc") with the server settings only
        configuration: (params) => params.items.map((item) => (item.section === 'repodoc' ? settings() : null)),
      },
    },
  };
  lc = new RepodocClient('repodoc', 'RepoDoc', serverOptions, clientOptions);
  lc.onDidChangeState((e) => {
    status.text = statusText(e.newState === State.Running ? 'ready' : e.newState === State.Starting ? 'starting' : 'stopped');
  });
  status.text = statusText('starting');
  try {
    await lc.start();
    lc.quietStart = false;
  } catch (err) {
    tellFailure(String((err as Error)?.message ?? err));
    return undefined;
  }
  return lc;
}

async function restart(): Promise<void> {
  await client?.stop();
  client = await startClient();
}

/** Every page that could not be written, in the output channel. */
function logErrors(summary: Summary): void {
  for (const e of summary.errors ?? []) {
    output.appendLine(`page not written: ${e.path ?? '?'}: ${e.reason ?? 'unknown error'}`);
  }
}

async function generate(force = false): Promise<Summary | undefined> {
  if (!client) {
    void vscode.window.showWarningMessage('RepoDoc: the server is not running.');
    return undefined;
  }
  const summary = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'RepoDoc: generating documentation', cancellable: true },
    async (progress, token) => {
      const result = await client!.sendRequest(ExecuteCommandRequest.type,
        { command: 'repodoc.generate', arguments: force ? [{ force: true }] : [] }, token);
      return result as Summary;
    },
  );
  logErrors(summary);
  const overwrite = editedConflicts(summary).length ? ['Overwrite Edited Pages'] : [];
  if (summary.errors?.length) {
    void vscode.window.showErrorMessage(summaryMessage(summary), 'Show Output', ...overwrite).then((choice) => {
      if (choice === 'Show Output') {
        output.show();
      } else if (choice) {
        void generateOverwriting();
      }
    });
  } else {
    void vscode.window.showInformationMessage(summaryMessage(summary), ...overwrite).then((choice) => {
      if (choice) {
        void generateOverwriting();
      }
    });
  }
  return summary;
}

/** Generate, overwriting the pages a person edited (each copied to PAGE.orig first), once confirmed. */
async function generateOverwriting(): Promise<Summary | undefined> {
  const choice = await vscode.window.showWarningMessage(overwriteQuestion(), { modal: true }, 'Overwrite');
  return choice === 'Overwrite' ? generate(true) : undefined;
}

async function openPage(which: 'docs' | 'kw'): Promise<vscode.Uri | undefined> {
  // the active file, or the last one (focus may be on a preview or panel)
  const active = vscode.window.activeTextEditor?.document.uri;
  const file = active?.scheme === 'file' ? active : lastFile;
  if (!client || !file) {
    void vscode.window.showWarningMessage('RepoDoc: open a file of the workspace first.');
    return undefined;
  }
  const pages = await client.sendRequest(ExecuteCommandRequest.type, {
    command: 'repodoc.pagesFor', arguments: [file.toString()],
  }) as { docsUri: string; kwUri: string; exists: boolean };
  const uri = vscode.Uri.parse(which === 'docs' ? pages.docsUri : pages.kwUri);
  if (!pages.exists) {
    const choice = await vscode.window.showWarningMessage('RepoDoc: this file has no pages yet.', 'Generate Documentation');
    if (choice) {
      await generate();
    } else {
      return undefined;
    }
  }
  await vscode.commands.executeCommand('markdown.showPreviewToSide', uri);
  return uri;
}

/** A working folder for the server outside every workspace: the extension's own storage. */
function storageFolder(context: vscode.ExtensionContext): string {
  try {
    fs.mkdirSync(context.globalStorageUri.fsPath, { recursive: true, mode: 0o700 });
    return context.globalStorageUri.fsPath;
  } catch {
    return os.tmpdir();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<{ client: () => LanguageClient | undefined }> {
  output = vscode.window.createOutputChannel('RepoDoc');
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  status.command = 'repodoc.showOutput';
  status.tooltip = 'RepoDoc: show output';
  status.show();
  safeCwd = storageFolder(context);
  context.subscriptions.push(output, status,
    vscode.commands.registerCommand('repodoc.generateDocumentation', () => generate()),
    vscode.commands.registerCommand('repodoc.generateOverwritingEdited', generateOverwriting),
    vscode.commands.registerCommand('repodoc.openDocumentation', () => openPage('docs')),
    vscode.commands.registerCommand('repodoc.openKeywordIndex', () => openPage('kw')),
    vscode.commands.registerCommand('repodoc.showOutput', () => output.show()),
    vscode.commands.registerCommand('repodoc.restartServer', restart),
    vscode.window.onDidChangeActiveTextEditor(rememberFile),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('repodoc.interpreter') || e.affectsConfiguration('repodoc.serverCommand')) {
        await restart();
      } else if (e.affectsConfiguration('repodoc') && client?.isRunning()) {
        // the server settings as the trust model allows them; the server then asks for them again
        await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { repodoc: settings() } });
      }
    }),
    // trust granted: the Python extension's interpreter inside the workspace and its output folder may now be used
    vscode.workspace.onDidGrantWorkspaceTrust(restart),
  );
  rememberFile(vscode.window.activeTextEditor);
  await connectPythonExtension(context);
  client = await startClient();
  return { client: () => client };
}

export function deactivate(): Thenable<void> | undefined {
  return client?.stop();
}
