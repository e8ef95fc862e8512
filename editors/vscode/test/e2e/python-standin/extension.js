// Test only: the environments API of the Python extension that RepoDoc reads (active interpreter,
// resolve, change event). The interpreter starts as $REPODOC_STANDIN_PYTHON; the command
// `repodocStandin.selectInterpreter` selects another, as a person would in the Python extension.
const vscode = require('vscode');

exports.activate = (context) => {
  let selected = process.env.REPODOC_STANDIN_PYTHON || '';
  const changed = new vscode.EventEmitter();
  context.subscriptions.push(vscode.commands.registerCommand('repodocStandin.selectInterpreter', (path) => {
    selected = path;
    changed.fire({ id: path, path, resource: undefined });
  }));
  return {
    environments: {
      getActiveEnvironmentPath: () => ({ id: selected, path: selected }),
      resolveEnvironment: async (env) => {
        const path = typeof env === 'string' ? env : env.path;
        return path ? { id: path, path, executable: { uri: vscode.Uri.file(path) } } : undefined;
      },
      onDidChangeActiveEnvironmentPath: changed.event,
    },
  };
};
