// How the server's messages reach the user. No `vscode` import: unit-tested.
//
// - `window/showMessageRequest` is a lifecycle confirmation (archive, delete, recover, purge,
//   upgrade): it becomes a modal dialog whose message is the preview's first line and whose
//   detail is the rest, line breaks kept. VS Code's default, a toast, collapses the line breaks
//   and hides itself while the request still waits (docs/design.md §8).
// - `window/showMessage` with several lines (the status and health reports) becomes a one-line
//   notice; the whole text goes to the output channel and, for a report, to a read-only view.
// - The server's stderr lines (`LEVEL logger: message`, Python logging) are logged at their
//   own level, not all as `[error]`.

export const CANCEL = 'Cancel';

/** LSP `MessageType`. */
export const enum MessageType {
  Error = 1,
  Warning = 2,
  Info = 3,
  Log = 4,
  Debug = 5,
}

export interface MessageActionItem {
  title: string;
  [key: string]: unknown;
}

export interface ShowMessageRequestParams {
  type: number;
  message: string;
  actions?: MessageActionItem[];
}

export type Severity = 'error' | 'warning' | 'info';

export function severityOf(type: number): Severity {
  return type === MessageType.Error ? 'error' : type === MessageType.Warning ? 'warning' : 'info';
}

/** The first non-empty line, and the rest (its line breaks kept, surrounding blank lines dropped). */
export function splitMessage(text: string): { first: string; rest: string } {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const at = lines.findIndex((l) => l.trim() !== '');
  if (at < 0) return { first: '', rest: '' };
  const rest = lines.slice(at + 1).join('\n').replace(/^\n+|\s+$/g, '');
  return { first: lines[at].trim(), rest };
}

export interface Dialog {
  severity: Severity;
  message: string;
  detail: string;
  /** The buttons, in the server's order; the one that is the server's Cancel closes the dialog. */
  items: { title: string; isCloseAffordance: boolean; action: MessageActionItem }[];
}

/** The modal dialog for one `window/showMessageRequest`. */
export function dialogFor(params: ShowMessageRequestParams): Dialog {
  const { first, rest } = splitMessage(params.message);
  const items = (params.actions ?? []).map((action) => ({
    title: action.title,
    isCloseAffordance: action.title === CANCEL,
    action,
  }));
  return { severity: severityOf(params.type), message: first, detail: rest, items };
}

/**
 * The answer to the server: the action the user chose; Escape or the dialog's own Cancel is the
 * server's Cancel action when it offered one, else null (LSP: no action chosen).
 */
export function answerFor(dialog: Dialog, chosen: { title: string } | undefined): MessageActionItem | null {
  if (chosen !== undefined) {
    const item = dialog.items.find((i) => i.title === chosen.title);
    if (item) return item.action;
  }
  return dialog.items.find((i) => i.isCloseAffordance)?.action ?? null;
}

/** A one-line notice for a message of several lines. */
export function noticeFor(text: string, more: string): string {
  const { first, rest } = splitMessage(text);
  return rest ? `${first} ${more}` : first;
}

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const PYTHON_LEVELS: Record<string, LogLevel> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
};

/**
 * The level of one stderr line of pmem-lsp (`%(levelname)s %(name)s: %(message)s`) and the text
 * to log without the level word. A line without a level (a traceback's continuation) keeps the
 * previous line's level; output before any level line is an error (a crash, `No module named …`).
 */
export function stderrLine(line: string, previous: LogLevel | undefined): { level: LogLevel; text: string } {
  const m = /^(DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/.exec(line);
  if (m) return { level: PYTHON_LEVELS[m[1]], text: m[2] };
  return { level: previous ?? 'error', text: line };
}

/**
 * vscode-languageclient 10 traces the LSP traffic only when its trace channel is at the Trace log
 * level. `pmem.trace.server` other than "off" turns tracing on whatever the channel's level;
 * "off" leaves it to the channel's level (Output panel → Set Log Level… → Trace), as before.
 */
export function traceEnabled(setting: string | undefined, channelAtTrace: boolean): boolean {
  return channelAtTrace || (setting !== undefined && setting !== 'off');
}
