// Starts `umpire lsp` for .ump files and a ruleset's YAML files (editors/README.md says how to install it).
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("umpire").get("command", ["umpire", "lsp"]);
  client = new LanguageClient("umpire", "Umpire", { command, args }, {
    documentSelector: [
      { scheme: "file", language: "ump" },
      { scheme: "file", language: "yaml", pattern: "**/{ruleset.yaml,tables/*.yaml,stacks/*.yaml,catalogues/*.yaml,situations/*.yaml,tests/*.yaml}" },
    ],
  });
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
