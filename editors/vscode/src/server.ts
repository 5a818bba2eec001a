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
