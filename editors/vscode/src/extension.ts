// The VS Code side of pmem-lsp: start the server for Markdown files under a memory root, keep
// its settings in sync, put the server's commands in the palette, and show what the server
// says the way VS Code users expect (README.md, "Decisions").
import { execFile } from 'node:child_process';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  MessageActionItem,
  ResponseError,
  ServerOptions,
  ShowMessageNotification,
  ShowMessageParams,
  ShowMessageRequest,
  TransportKind,
} from 'vscode-languageclient/node';
import { pipeStderr, traceChannel } from './channel';
import { argumentObject, clientCommandFor, HISTORY_SCHEME, historyTextArgs } from './history';
import { answerFor, dialogFor, noticeFor, severityOf, ShowMessageRequestParams, splitMessage } from './messages';
import { locate, markdownPattern, memoryRoots } from './roots';
import {
  cliFor,
  Executable,
  notFound,
  probeServer,
  Problem,
  ProbeResult,
  resolveServer,
  ServerSettings,
  trustedServerSettings,
} from './server';
import { contributedKeys, serverSettings } from './settings';

const REQUEST_FAILED = -32803; // a refusal; the server has already shown it
const TITLE = 'Persistent Memory';
const REPORT_SCHEME = 'pmem-report';
const PROBE_TIMEOUT_MS = 30_000;

let client: LanguageClient | undefined;
let roots: string[] = [];
let keys: string[] = [];
let channel: vscode.LogOutputChannel;
let trace: ReturnType<typeof traceChannel>;
let extensionUri: vscode.Uri;
/** Texts of the reports the extension shows itself (their server notice is not repeated). */
const reportTexts = new Map<string, string>();
let reportsInFlight = 0;
const heldNotices: ShowMessageParams[] = [];

function settingsFor(scope?: vscode.Uri): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration('pmem', scope ?? (roots[0] ? vscode.Uri.file(roots[0]) : undefined));
  return serverSettings(keys, (key) => config.inspect(key));
}

function currentServerSettings(): ServerSettings {
  const pmem = vscode.workspace.getConfiguration('pmem');
  const python = vscode.workspace.getConfiguration('python');
  return trustedServerSettings(vscode.workspace.isTrusted, (key) => {
    const [config, name] =
      key === 'path' ? [pmem, 'server.path'] : key === 'python' ? [pmem, 'server.python'] : [python, 'defaultInterpreterPath'];
    return { value: config.get<string>(name), inspected: config.inspect<string>(name) };
  });
}

function serverExecutable(): Executable | undefined {
  return resolveServer(currentServerSettings());
}

const runProbe = (command: string, args: string[]): Promise<ProbeResult> =>
  new Promise((resolve) => {
    execFile(command, args, { timeout: PROBE_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr), error: err && code === null ? err.message : undefined });
    });
  });

/** Says what is missing and how to install it, with the actions that help. Not awaited. */
function reportProblem(problem: Problem): void {
  channel.error(`${problem.message} ${problem.detail}`);
  const settings = 'Open Settings';
  const install = 'How to Install';
  void vscode.window.showErrorMessage(`${TITLE}: ${problem.message} ${problem.detail}`, settings, install).then(async (choice) => {
    if (choice === settings) await vscode.commands.executeCommand('workbench.action.openSettings', 'pmem.server');
    else if (choice === install) await showInstallGuide();
  });
}

/** The extension's README (its "Install" section), as a Markdown preview. */
async function showInstallGuide(): Promise<void> {
  // vsce packages README.md as readme.md.
  for (const name of ['README.md', 'readme.md']) {
    const readme = vscode.Uri.joinPath(extensionUri, name);
    const found = await vscode.workspace.fs.stat(readme).then(() => true, () => false);
    if (!found) continue;
    await vscode.commands.executeCommand('markdown.showPreview', readme).then(undefined, async () => {
      await vscode.window.showTextDocument(readme); // the Markdown extension is disabled
    });
    return;
  }
}

/** `window/showMessageRequest`: a modal dialog, the preview's line breaks kept. */
async function confirm(params: ShowMessageRequestParams) {
  const dialog = dialogFor(params);
  channel.info(`asked: ${params.message.replace(/\n/g, ' | ')}`);
  const show =
    dialog.severity === 'error'
      ? vscode.window.showErrorMessage
      : dialog.severity === 'warning'
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  const items = dialog.items.map((i) => ({ title: i.title, isCloseAffordance: i.isCloseAffordance }));
  const chosen = await show(dialog.message, { modal: true, detail: dialog.detail || undefined }, ...items);
  const answer = answerFor(dialog, chosen);
  channel.info(`answered: ${answer ? answer.title : 'nothing (dismissed)'}`);
  return answer;
}

/** `window/showMessage`: one line as a notice; several lines (a report) to the log and a view. */
function notify(params: ShowMessageParams): void {
  const severity = severityOf(params.type);
  channel[severity === 'warning' ? 'warn' : severity](params.message);
  if (!params.message.includes('\n')) {
    const show =
      severity === 'error' ? vscode.window.showErrorMessage : severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(params.message);
    return;
  }
  if (reportsInFlight > 0) {
    heldNotices.push(params); // the report's own view says it; see report()
    return;
  }
  const open = 'Show';
  const show =
    severity === 'error' ? vscode.window.showErrorMessage : severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  void show(noticeFor(params.message, '(more in the Persistent Memory output)'), open).then((choice) => {
    if (choice === open) void showReport('Persistent Memory message', params.message);
  });
}

async function start(): Promise<void> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  roots = memoryRoots(folders, vscode.workspace.getConfiguration('pmem').get<string | null>('root'));
  if (roots.length === 0) {
    channel.info('No memory root: open a folder with _index.md, _core/ or _archive/, or set pmem.root.');
    return;
  }
  const settings = currentServerSettings();
  const exe = resolveServer(settings);
  if (!exe) {
    reportProblem(notFound(settings));
    return;
  }
  const problem = await probeServer(exe, runProbe);
  if (problem) {
    reportProblem(problem);
    return;
  }
  channel.info(`Starting ${[exe.command, ...exe.args].join(' ')} for ${roots.join(', ')}`);
  const serverOptions: ServerOptions = { command: exe.command, args: exe.args, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: roots.map((root) => ({ scheme: 'file', language: 'markdown', pattern: markdownPattern(root) })),
    initializationOptions: () => ({ pmem: settingsFor() }),
    outputChannel: channel,
    traceOutputChannel: trace.trace,
    stdioOptions: {
      stdout: (input, out) => pipeStderr(input, out), // unused with the stdio transport
      stderr: (input, out) => pipeStderr(input, out),
    },
    middleware: {
      // History lenses run the extension's commands, which show what the server answers.
      provideCodeLenses: async (document, token, next) => {
        const lenses = await next(document, token);
        for (const lens of lenses ?? []) if (lens.command) lens.command = clientCommandFor(lens.command);
        return lenses;
      },
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
  // Registered before start: the client installs these after its own defaults, replacing them.
  client.onRequest(ShowMessageRequest.type, async (params) => (await confirm(params)) as MessageActionItem | null);
  client.onNotification(ShowMessageNotification.type, (params) => notify(params));
  try {
    await client.start();
  } catch (err) {
    channel.error(`pmem-lsp did not start: ${String(err)}`);
    channel.show(true);
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

/** A report in a read-only editor (not a file, never dirty), with a one-line notice. */
async function showReport(title: string, text: string): Promise<void> {
  const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${title}`, query: String(Date.now()) });
  reportTexts.set(uri.toString(), text.endsWith('\n') ? text : `${text}\n`);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: false });
}

async function report(command: 'pmem.status' | 'pmem.health', title: string): Promise<void> {
  reportsInFlight++;
  let result: any;
  try {
    const root = await chooseRoot();
    result = await execute(command, roots.length > 1 && root ? { root } : {});
  } finally {
    reportsInFlight--;
  }
  const text = result && typeof result.text === 'string' ? (result.text as string) : undefined;
  // The server also sent the report as window/showMessage: that one is not shown again.
  const held = heldNotices.splice(0);
  for (const notice of held) if (!text || notice.message.trimEnd() !== text.trimEnd()) notify(notice);
  if (!text) return;
  channel.info(`${title}:\n${text}`);
  await showReport(title, text);
  void vscode.window.showInformationMessage(`${TITLE}: ${title} (${splitMessage(text).first}) is open in the editor.`);
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

/** The file a history command is about: its `path` argument (from a lens), else the active file. */
function historyTarget(args: Record<string, unknown>): Record<string, unknown> | undefined {
  if (typeof args.path === 'string') return args;
  const doc = vscode.window.activeTextEditor?.document;
  const where = doc?.uri.scheme === 'file' ? locate(roots, doc.uri.fsPath) : undefined;
  if (!where) {
    void vscode.window.showWarningMessage(`${TITLE}: the active file is not under a memory root.`);
    return undefined;
  }
  return { ...args, path: where.relative, ...(roots.length > 1 ? { root: where.root } : {}) };
}

/** The file's history (every entry that changed it), in a read-only editor. */
async function history(...raw: unknown[]): Promise<void> {
  const args = historyTarget(argumentObject(raw));
  if (!args) return;
  const result = await execute('pmem.history', { ...args, show: false });
  if (result && typeof result.text === 'string') await showReport(`History of ${String(args.path)}`, result.text);
}

/** VS Code's own diff editor: the text before the unreviewed change (a pmem-history: document) ↔ the file. */
async function diff(...raw: unknown[]): Promise<void> {
  const args = historyTarget(argumentObject(raw));
  if (!args) return;
  const result = await execute('pmem.diff', args);
  if (!result || typeof result.oldUri !== 'string') return;
  await vscode.commands.executeCommand('vscode.diff', vscode.Uri.parse(result.oldUri), vscode.Uri.parse(result.uri),
    String(result.title));
}

/** Undo the file's newest unreviewed change (or the lens's entry): the server previews and asks first. */
async function undo(...raw: unknown[]): Promise<void> {
  const given = argumentObject(raw);
  const args = Array.isArray(given.paths) ? given : historyTarget(given);
  if (!args) return;
  const { path, ...rest } = args;
  await execute('pmem.undo', path === undefined ? rest : { ...rest, paths: [path] });
}

/** Keep the file's unreviewed changes: marked reviewed, the lens goes away. */
async function reviewAccept(...raw: unknown[]): Promise<void> {
  const args = historyTarget(argumentObject(raw));
  if (!args) return;
  const result = await execute('pmem.review.accept', args);
  if (result) void vscode.window.showInformationMessage(`${TITLE}: ${String(args.path)}: changes kept (marked reviewed).`);
}

/** The text behind a pmem-history: URI, asked from the server (nothing is stored here). */
async function historyText(uri: vscode.Uri): Promise<string> {
  const args = historyTextArgs(uri.query);
  if (!args) return '';
  const result = await execute('pmem.historyText', { ...args });
  return result && typeof result.text === 'string' ? result.text : '';
}

async function checkRoot(): Promise<void> {
  const root = await chooseRoot();
  const cli = cliFor(serverExecutable());
  if (!root || !cli) {
    void vscode.window.showWarningMessage(`${TITLE}: ${root ? 'the pmem command was not found' : 'no memory root is open'}.`);
    return;
  }
  const args = [...cli.args, '--root', root, 'check'];
  channel.show(true);
  channel.info(`$ ${[cli.command, ...args].join(' ')}`);
  execFile(cli.command, args, { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
    for (const line of `${stdout}${stderr}`.split('\n')) if (line.trim()) channel.info(line);
    const code = err ? (typeof err.code === 'number' ? err.code : String(err.code ?? err.message)) : 0;
    const summary = code === 0 ? 'no problems at or above the fail-on severity' : code === 1 ? 'problems found (exit 1)' : `exit ${code}`;
    channel.info(summary);
    void vscode.window.showInformationMessage(`${TITLE}: pmem check: ${summary} (in the Persistent Memory output)`);
  });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  extensionUri = context.extensionUri;
  channel = vscode.window.createOutputChannel(TITLE, { log: true });
  trace = traceChannel(channel, () => vscode.workspace.getConfiguration('pmem').get<string>('trace.server'));
  keys = contributedKeys(context.extension.packageJSON);
  const command = (id: string, fn: () => Promise<void>) => vscode.commands.registerCommand(`persistentMemory.${id}`, fn);
  context.subscriptions.push(
    channel,
    trace,
    vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, {
      provideTextDocumentContent: (uri) => reportTexts.get(uri.toString()) ?? '',
    }),
    vscode.workspace.onDidCloseTextDocument((doc) => {
      if (doc.uri.scheme === REPORT_SCHEME) reportTexts.delete(doc.uri.toString());
    }),
    command('status', () => report('pmem.status', 'Memory status')),
    command('health', () => report('pmem.health', 'Memory health')),
    command('upgrade', upgrade),
    command('archive', archive),
    command('checkRoot', checkRoot),
    command('restart', restart),
    vscode.commands.registerCommand('persistentMemory.history', history),
    vscode.commands.registerCommand('persistentMemory.diff', diff),
    vscode.commands.registerCommand('persistentMemory.undo', undo),
    vscode.commands.registerCommand('persistentMemory.reviewAccept', reviewAccept),
    vscode.workspace.registerTextDocumentContentProvider(HISTORY_SCHEME, { provideTextDocumentContent: historyText }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('pmem.trace.server')) trace.settingChanged();
      if (['pmem.server', 'pmem.root', 'python.defaultInterpreterPath'].some((s) => e.affectsConfiguration(s))) {
        await restart();
      } else if (e.affectsConfiguration('pmem') && client) {
        await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { pmem: settingsFor() } });
      }
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => restart()),
    // Trust granted: the workspace's own server settings may now apply.
    vscode.workspace.onDidGrantWorkspaceTrust(() => restart()),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
