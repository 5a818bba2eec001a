// Which command starts pmem-lsp, and which runs the `pmem` CLI. No `vscode` import: unit-tested.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface Executable {
  command: string;
  args: string[];
}

export interface ServerSettings {
  /** `pmem.server.path` */
  path?: string;
  /** `pmem.server.python` */
  python?: string;
  /** `python.defaultInterpreterPath` (the Python extension's setting), if any */
  defaultInterpreter?: string;
}

export interface Environment {
  PATH?: string;
  PATHEXT?: string;
  HOME?: string;
  platform?: NodeJS.Platform;
  isExecutable?: (file: string) => boolean;
}

function defaultIsExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (process.platform === 'win32') return true;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function expandHome(p: string, home = os.homedir()): string {
  if (p === '~') return home;
  if (p.startsWith('~/') || p.startsWith('~\\')) return path.join(home, p.slice(2));
  return p;
}

/** The first executable called `name` on PATH (or `name` itself when it is a path). */
export function which(name: string, env: Environment = process.env): string | undefined {
  const isExecutable = env.isExecutable ?? defaultIsExecutable;
  const platform = env.platform ?? process.platform;
  const exts = platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';')] : [''];
  if (name.includes('/') || (platform === 'win32' && name.includes('\\'))) {
    const file = expandHome(name, env.HOME ?? os.homedir());
    return exts.map((e) => file + e).find(isExecutable);
  }
  const sep = platform === 'win32' ? ';' : ':';
  for (const dir of (env.PATH ?? '').split(sep)) {
    if (!dir) continue;
    for (const ext of exts) {
      const file = path.join(dir, name + ext);
      if (isExecutable(file)) return file;
    }
  }
  return undefined;
}

/**
 * How to start the server: `pmem.server.path` if set; else `pmem-lsp` on PATH; else the
 * configured Python (`pmem.server.python`, then `python.defaultInterpreterPath`, then
 * `python3`/`python` on PATH) with `-m pmem_lsp`. Undefined when nothing fits.
 */
export function resolveServer(settings: ServerSettings, env: Environment = process.env): Executable | undefined {
  const configured = settings.path?.trim();
  if (configured) {
    const found = which(configured, env);
    return found ? { command: found, args: [] } : undefined;
  }
  const onPath = which('pmem-lsp', env);
  if (onPath) return { command: onPath, args: [] };
  const python = pythonFor(settings, env);
  return python ? { command: python, args: ['-m', 'pmem_lsp'] } : undefined;
}

function pythonFor(settings: ServerSettings, env: Environment): string | undefined {
  for (const candidate of [settings.python, settings.defaultInterpreter]) {
    const c = candidate?.trim();
    // `python` is the Python extension's placeholder default, not a choice.
    if (c && c !== 'python') return which(c, env) ?? expandHome(c, env.HOME ?? os.homedir());
  }
  return which('python3', env) ?? which('python', env);
}

/**
 * The `pmem` CLI that belongs to a server command: `pmem` next to `pmem-lsp`, else the same
 * interpreter with `-m pmem_lsp.cli.main`, else `pmem` on PATH.
 */
export function cliFor(server: Executable | undefined, env: Environment = process.env): Executable | undefined {
  const isExecutable = env.isExecutable ?? defaultIsExecutable;
  if (server && server.args.length === 0) {
    const dir = path.dirname(server.command);
    const ext = path.extname(server.command);
    const sibling = path.join(dir, 'pmem' + ext);
    if (path.basename(server.command, ext) === 'pmem-lsp' && isExecutable(sibling)) {
      return { command: sibling, args: [] };
    }
  }
  if (server && server.args[0] === '-m') return { command: server.command, args: ['-m', 'pmem_lsp.cli.main'] };
  const onPath = which('pmem', env);
  return onPath ? { command: onPath, args: [] } : undefined;
}

/** What a run of a candidate server with `--version` gave. */
export interface ProbeResult {
  /** exit code, or null when it could not run (not found, not executable, timed out) */
  code: number | null;
  stdout: string;
  stderr: string;
  error?: string;
}

export type Runner = (command: string, args: string[]) => Promise<ProbeResult>;

/** Why the server cannot start, for the user: one line, the details, how to fix it. */
export interface Problem {
  message: string;
  detail: string;
}

/** Plain text: notifications do not render Markdown. */
export const INSTALL_HINT =
  "Install it from a clone of pmem-lsp with 'make install' (it lands in the clone's .venv/bin/pmem-lsp) " +
  "or 'pipx install PATH-TO-CLONE' (puts pmem-lsp on PATH), then set pmem.server.path to it unless it is on PATH.";

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  return lines[lines.length - 1] ?? '';
}

/** The problem when `resolveServer` found nothing to start. */
export function notFound(settings: ServerSettings): Problem {
  const configured = settings.path?.trim();
  if (configured) {
    return {
      message: `pmem.server.path is "${configured}", which is not an executable file.`,
      detail: `Correct pmem.server.path, or clear it to use pmem-lsp from PATH. ${INSTALL_HINT}`,
    };
  }
  return {
    message: 'The pmem-lsp language server is not installed: pmem-lsp is not on PATH and no Python was found.',
    detail: INSTALL_HINT,
  };
}

/**
 * Runs `<server> --version` before the client starts it: a server that cannot start would
 * otherwise crash five times and leave the user with "crashed 5 times" and a -32097 error.
 * Returns the problem, or undefined when the server answered as pmem-lsp.
 */
export async function probeServer(exe: Executable, run: Runner): Promise<Problem | undefined> {
  const result = await run(exe.command, [...exe.args, '--version']);
  if (result.code === 0 && /pmem-lsp/.test(result.stdout)) return undefined;
  const said = lastLine(result.stderr) || lastLine(result.stdout) || result.error || `exit code ${result.code}`;
  if (exe.args[0] === '-m') {
    const missing = /No module named/.test(result.stderr);
    return {
      message: missing
        ? `The pmem-lsp language server is not installed: pmem-lsp is not on PATH, and ${exe.command} has no module pmem_lsp.`
        : `${exe.command} -m pmem_lsp did not start: ${said}`,
      detail: `${INSTALL_HINT} Or set pmem.server.python to a Python that has pmem-lsp installed.`,
    };
  }
  return {
    message: `${exe.command} is not a working pmem-lsp: ${said}`,
    detail: `Correct pmem.server.path, or clear it to use pmem-lsp from PATH. ${INSTALL_HINT}`,
  };
}

/** What the user's settings say about the server; in Restricted Mode, the user's own values only. */
export interface Inspected<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * The server settings to use. In a trusted workspace: the effective values. In Restricted Mode
 * an executable named by the workspace (its .vscode/settings.json, which came with the folder)
 * is never run: only the user's values count (package.json also lists these settings under
 * `restrictedConfigurations`, so VS Code itself hides the workspace values from `get`).
 */
export function trustedServerSettings(
  trusted: boolean,
  get: (key: 'path' | 'python' | 'defaultInterpreter') => { value?: string; inspected?: Inspected<string> },
): ServerSettings {
  const pick = (key: 'path' | 'python' | 'defaultInterpreter') => {
    const { value, inspected } = get(key);
    return trusted ? value : inspected?.globalValue;
  };
  return { path: pick('path'), python: pick('python'), defaultInterpreter: pick('defaultInterpreter') };
}
