// The VS Code side of pmem-lsp: start the server for Markdown files under a memory root, keep
// its settings in sync, and put the server's commands in the palette.
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ResponseError,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';
import { locate, markdownPattern, memoryRoots } from './roots';
import { cliFor, Executable, resolveServer } from './server';
import { contributedKeys, serverSettings } from './settings';

const REQUEST_FAILED = -32803; // a refusal; the server has already shown it
const TITLE = 'Persistent Memory';

let client: LanguageClient | undefined;
let roots: string[] = [];
let keys: string[] = [];
let output: vscode.OutputChannel;

function settingsFor(scope?: vscode.Uri): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration('pmem', scope ?? (roots[0] ? vscode.Uri.file(roots[0]) : undefined));
  return serverSettings(keys, (key) => config.inspect(key));
}

function serverExecutable(): Executable | undefined {
  const config = vscode.workspace.getConfiguration('pmem');
  return resolveServer({
    path: config.get<string>('server.path'),
    python: config.get<string>('server.python'),
    defaultInterpreter: vscode.workspace.getConfiguration('python').get<string>('defaultInterpreterPath'),
  });
}

async function start(): Promise<void> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  roots = memoryRoots(folders, vscode.workspace.getConfiguration('pmem').get<string | null>('root'));
  if (roots.length === 0) {
    output.appendLine('No memory root: open a folder with _index.md, _core/ or _archive/, or set pmem.root.');
    return;
  }
  const exe = serverExecutable();
  if (!exe) {
    const choice = await vscode.window.showErrorMessage(
      `${TITLE}: pmem-lsp was not found. Install it (pip install pmem-lsp) or set pmem.server.path or pmem.server.python.`,
      'Open settings',
    );
    if (choice) await vscode.commands.executeCommand('workbench.action.openSettings', 'pmem.server');
    return;
  }
  output.appendLine(`Starting ${[exe.command, ...exe.args].join(' ')} for ${roots.join(', ')}`);
  const serverOptions: ServerOptions = { command: exe.command, args: exe.args, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: roots.map((root) => ({ scheme: 'file', language: 'markdown', pattern: markdownPattern(root) })),
    initializationOptions: () => ({ pmem: settingsFor() }),
    middleware: {
      workspace: {
        // Only what the user set, without the extension's own keys (see settings.ts).
        configuration: async (params, token, next) => {
          const answer = await next(params, token);
          if (!Array.isArray(answer)) return answer;
          return params.items.map((item, i) =>
            item.section === 'pmem' ? settingsFor(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined) : answer[i],
          );
        },
      },
    },
  };
  client = new LanguageClient('pmem', TITLE, serverOptions, clientOptions);
  try {
    await client.start();
  } catch (err) {
    output.appendLine(`pmem-lsp did not start: ${String(err)}`);
    output.show(true);
    client = undefined;
  }
}

async function restart(): Promise<void> {
  const old = client;
  client = undefined;
  if (old) await old.stop().catch(() => undefined);
  await start();
}

async function execute(command: string, args: Record<string, unknown>): Promise<any> {
  if (!client) {
    void vscode.window.showWarningMessage(`${TITLE}: no memory root is open, or pmem-lsp is not running.`);
    return undefined;
  }
  try {
    return await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [args] });
  } catch (err) {
    if (!(err instanceof ResponseError && err.code === REQUEST_FAILED)) {
      void vscode.window.showErrorMessage(`${TITLE}: ${command}: ${err instanceof Error ? err.message : String(err)}`);
    }
    return undefined;
  }
}

async function report(command: string): Promise<void> {
  const result = await execute(command, {});
  if (result && typeof result.text === 'string') {
    output.appendLine(result.text);
    output.show(true);
  }
}

/** The root of the active file, else the only root, else the user's pick. */
async function chooseRoot(): Promise<string | undefined> {
  const file = vscode.window.activeTextEditor?.document.uri;
  const here = file?.scheme === 'file' ? locate(roots, file.fsPath) : undefined;
  if (here) return here.root;
  if (roots.length <= 1) return roots[0];
  return vscode.window.showQuickPick(roots, { title: `${TITLE}: which root?` });
}

async function upgrade(): Promise<void> {
  const root = await chooseRoot();
  if (root) await execute('pmem.upgrade', roots.length > 1 ? { root } : {});
}

async function archive(): Promise<void> {
  const doc = vscode.window.activeTextEditor?.document;
  const where = doc?.uri.scheme === 'file' ? locate(roots, doc.uri.fsPath) : undefined;
  if (!where) {
    void vscode.window.showWarningMessage(`${TITLE}: the active file is not under a memory root.`);
    return;
  }
  const reason = await vscode.window.showInputBox({
    title: `Archive ${where.relative}`,
    prompt: 'Why is it archived? The reason is kept in _archive/_index.md (empty: the default reason).',
    placeHolder: 'project finished',
    ignoreFocusOut: true,
  });
  if (reason === undefined) return; // Escape: nothing happens
  const args: Record<string, unknown> = { path: where.relative };
  if (reason.trim()) args.reason = reason.trim();
  if (roots.length > 1) args.root = where.root;
  await execute('pmem.archive', args); // the server asks to confirm, then moves the file
}

async function checkRoot(): Promise<void> {
  const root = await chooseRoot();
  const cli = cliFor(serverExecutable());
  if (!root || !cli) {
    void vscode.window.showWarningMessage(`${TITLE}: ${root ? 'the pmem command was not found' : 'no memory root is open'}.`);
    return;
  }
  const args = [...cli.args, '--root', root, 'check'];
  output.show(true);
  output.appendLine(`$ ${[cli.command, ...args].join(' ')}`);
  execFile(cli.command, args, { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
    output.append(stdout);
    output.append(stderr);
    const code = err ? (typeof err.code === 'number' ? err.code : String(err.code ?? err.message)) : 0;
    output.appendLine(code === 0 ? 'no problems at or above the fail-on severity' : code === 1 ? 'problems found (exit 1)' : `exit ${code}`);
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  // The client logs to its own "Persistent Memory" channel; reports and `pmem check` go here.
  output = vscode.window.createOutputChannel(`${TITLE}: reports`);
  keys = contributedKeys(context.extension.packageJSON);
  const command = (id: string, fn: () => Promise<void>) => vscode.commands.registerCommand(`persistentMemory.${id}`, fn);
  context.subscriptions.push(
    output,
    command('status', () => report('pmem.status')),
    command('health', () => report('pmem.health')),
    command('upgrade', upgrade),
    command('archive', archive),
    command('checkRoot', checkRoot),
    command('restart', restart),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (['pmem.server', 'pmem.root', 'python.defaultInterpreterPath'].some((s) => e.affectsConfiguration(s))) {
        await restart();
      } else if (e.affectsConfiguration('pmem') && client) {
        await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { pmem: settingsFor() } });
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => restart()),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
