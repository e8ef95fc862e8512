// Test only: a Python hover of another language server (signature and docstring of the word under
// the cursor), so the test can see that RepoDoc's own hover then adds only what the other lacks.
const vscode = require('vscode');

exports.activate = (context) => {
  context.subscriptions.push(vscode.languages.registerHoverProvider('python', {
    provideHover(doc, position) {
      const range = doc.getWordRangeAtPosition(position);
      const word = range ? doc.getText(range) : '';
      return word ? new vscode.Hover(new vscode.MarkdownString(`\`\`\`python\n(STANDIN) def ${word}(...)\n\`\`\``)) : undefined;
    },
  }));
};
