import * as vscode from 'vscode';
import {
  ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions, State,
} from 'vscode-languageclient/node';
import {
  cannotStartMessage, checkServer, ProgressTracker, serverCommand, serverSettings, statusText, Summary, summaryMessage,
} from './logic';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let lastFile: vscode.Uri | undefined;

function rememberFile(editor: vscode.TextEditor | undefined): void {
  if (editor?.document.uri.scheme === 'file') {
    lastFile = editor.document.uri;
  }
}

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('repodoc');
}

function settings(): Record<string, unknown> {
  const cfg = config();
  return serverSettings((key) => cfg.get(key));
}

async function startClient(): Promise<LanguageClient | undefined> {
  const cmd = serverCommand(config().get<string[]>('serverCommand'), config().get<string>('interpreter'));
  const { problem, version } = checkServer(cmd);
  if (version) {
    output.appendLine(`repodoc-lsp ${version} found for ${cmd.command}`);
  }
  if (problem) {
    status.text = statusText('stopped');
    void vscode.window.showErrorMessage(problem, 'Open Settings').then((choice) => {
      if (choice) {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'repodoc.interpreter');
      }
    });
    return undefined;
  }
  const progress = new ProgressTracker();
  // no `transport`: the client would append --stdio (the server accepts it, but plain argv is clearer)
  const serverOptions: ServerOptions = { command: cmd.command, args: cmd.args, options: { env: process.env } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file', language: 'python' }, { scheme: 'file', language: 'markdown' }],
    outputChannel: output,
    initializationOptions: settings(),
    synchronize: { configurationSection: 'repodoc' },
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
  const lc = new LanguageClient('repodoc', 'RepoDoc', serverOptions, clientOptions);
  lc.onDidChangeState((e) => {
    status.text = statusText(e.newState === State.Running ? 'ready' : e.newState === State.Starting ? 'starting' : 'stopped');
  });
  status.text = statusText('starting');
  try {
    await lc.start();
  } catch (err) {
    status.text = statusText('stopped');
    void vscode.window.showErrorMessage(cannotStartMessage(cmd, { stderr: String((err as Error)?.message ?? err) }));
    return undefined;
  }
  return lc;
}

async function generate(): Promise<Summary | undefined> {
  if (!client) {
    void vscode.window.showWarningMessage('RepoDoc: the server is not running.');
    return undefined;
  }
  const summary = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'RepoDoc: generating documentation', cancellable: true },
    async (progress, token) => {
      const result = await client!.sendRequest(ExecuteCommandRequest.type, { command: 'repodoc.generate', arguments: [] }, token);
      return result as Summary;
    },
  );
  void vscode.window.showInformationMessage(summaryMessage(summary));
  return summary;
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

export async function activate(context: vscode.ExtensionContext): Promise<{ client: () => LanguageClient | undefined }> {
  output = vscode.window.createOutputChannel('RepoDoc');
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  status.command = 'repodoc.showOutput';
  status.tooltip = 'RepoDoc: show output';
  status.show();
  context.subscriptions.push(output, status,
    vscode.commands.registerCommand('repodoc.generateDocumentation', generate),
    vscode.commands.registerCommand('repodoc.openDocumentation', () => openPage('docs')),
    vscode.commands.registerCommand('repodoc.openKeywordIndex', () => openPage('kw')),
    vscode.commands.registerCommand('repodoc.showOutput', () => output.show()),
    vscode.commands.registerCommand('repodoc.restartServer', async () => {
      await client?.stop();
      client = await startClient();
    }),
    vscode.window.onDidChangeActiveTextEditor(rememberFile),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('repodoc.interpreter') || e.affectsConfiguration('repodoc.serverCommand')) {
        await client?.stop();
        client = await startClient();
      }
    }),
  );
  rememberFile(vscode.window.activeTextEditor);
  client = await startClient();
  return { client: () => client };
}

export function deactivate(): Thenable<void> | undefined {
  return client?.stop();
}
