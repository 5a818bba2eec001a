// Which folders are memory roots, and where a file sits in one. No `vscode` import: unit-tested.
// The same rules as the server (pmem_lsp/server/roots.py): workspace folders that have
// `_index.md`, `_core/` or `_archive/`, plus `pmem.root`; with neither, $PMEM_ROOT or
// ~/.persistent-memory when it exists.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { expandHome } from './server';

export interface FileSystem {
  isFile(p: string): boolean;
  isDirectory(p: string): boolean;
}

export const nodeFs: FileSystem = {
  isFile: (p) => fs.statSync(p, { throwIfNoEntry: false })?.isFile() ?? false,
  isDirectory: (p) => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false,
};

export function looksLikeRoot(dir: string, fsys: FileSystem = nodeFs): boolean {
  return (
    fsys.isFile(path.join(dir, '_index.md')) ||
    fsys.isDirectory(path.join(dir, '_core')) ||
    fsys.isDirectory(path.join(dir, '_archive'))
  );
}

export function memoryRoots(
  folders: string[],
  configured: string | undefined | null,
  env: { PMEM_ROOT?: string; HOME?: string } = process.env,
  fsys: FileSystem = nodeFs,
): string[] {
  const home = env.HOME ?? os.homedir();
  const roots = folders.filter((f) => looksLikeRoot(f, fsys)).map((f) => path.resolve(f));
  if (configured && configured.trim()) roots.push(path.resolve(expandHome(configured.trim(), home)));
  if (roots.length === 0) {
    const fallback = path.resolve(expandHome(env.PMEM_ROOT || '~/.persistent-memory', home));
    if (fsys.isDirectory(fallback)) roots.push(fallback);
  }
  return [...new Set(roots)];
}

/** The root that holds `file` (the innermost when roots nest), and the file's path in it. */
export function locate(roots: string[], file: string): { root: string; relative: string } | undefined {
  let best: string | undefined;
  for (const root of roots) {
    const rel = path.relative(root, file);
    if (rel && !rel.startsWith('..') && !path.isAbsolute(rel) && (!best || root.length > best.length)) best = root;
  }
  if (!best) return undefined;
  return { root: best, relative: path.relative(best, file).split(path.sep).join('/') };
}

/** A document-selector glob for every Markdown file under `root` (forward slashes, as VS Code matches). */
export function markdownPattern(root: string): string {
  return `${root.split(path.sep).join('/').replace(/\/$/, '')}/**/*.md`;
}
