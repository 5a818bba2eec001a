// The one "Persistent Memory" output channel: the client's log, the server's stderr at its own
// levels, the LSP trace when `pmem.trace.server` asks for it, reports and `pmem check` — so a
// failure and its cause are in one place.
import * as vscode from 'vscode';
import { LogLevel, stderrLine, traceEnabled } from './messages';

/**
 * The trace channel handed to vscode-languageclient: the same log channel, but at the Trace
 * level whenever `pmem.trace.server` is not "off", and its trace lines written at Info so that
 * they show without changing the channel's level. The client reads `logLevel` and listens to
 * `onDidChangeLogLevel` to decide whether to trace (it ignores the setting otherwise).
 */
export function traceChannel(channel: vscode.LogOutputChannel, setting: () => string | undefined): {
  trace: vscode.LogOutputChannel;
  settingChanged: () => void;
  dispose: () => void;
} {
  const emitter = new vscode.EventEmitter<vscode.LogLevel>();
  const level = () =>
    traceEnabled(setting(), channel.logLevel === vscode.LogLevel.Trace) ? vscode.LogLevel.Trace : channel.logLevel;
  let last = level();
  const changed = () => {
    const now = level();
    if (now !== last) {
      last = now;
      emitter.fire(now);
    }
  };
  const sub = channel.onDidChangeLogLevel(changed);
  const trace: vscode.LogOutputChannel = {
    get name() { return channel.name; },
    get logLevel() { return level(); },
    onDidChangeLogLevel: emitter.event,
    trace: (message, ...args) =>
      channel.logLevel === vscode.LogLevel.Trace ? channel.trace(message, ...args) : channel.info(message, ...args),
    debug: (message, ...args) => channel.debug(message, ...args),
    info: (message, ...args) => channel.info(message, ...args),
    warn: (message, ...args) => channel.warn(message, ...args),
    error: (error, ...args) => channel.error(error, ...args),
    append: (value) => channel.append(value),
    appendLine: (value) => channel.appendLine(value),
    replace: (value) => channel.replace(value),
    clear: () => channel.clear(),
    show: ((preserveFocus?: boolean) => channel.show(preserveFocus)) as vscode.LogOutputChannel['show'],
    hide: () => channel.hide(),
    dispose: () => undefined, // the extension owns the channel
  };
  return { trace, settingChanged: changed, dispose: () => { sub.dispose(); emitter.dispose(); } };
}

/** Forwards the server's stderr to the channel line by line, each at the level it was logged. */
export function pipeStderr(input: NodeJS.ReadableStream, channel: vscode.LogOutputChannel): void {
  let previous: LogLevel | undefined;
  let pending = '';
  const emit = (line: string) => {
    if (!line.trim()) return;
    const { level, text } = stderrLine(line, previous);
    previous = level;
    channel[level](text);
  };
  input.setEncoding?.('utf8');
  input.on('data', (chunk: string | Buffer) => {
    pending += chunk.toString();
    const lines = pending.split(/\r?\n/);
    pending = lines.pop() ?? '';
    lines.forEach(emit);
  });
  input.on('end', () => {
    emit(pending);
    pending = '';
  });
}
