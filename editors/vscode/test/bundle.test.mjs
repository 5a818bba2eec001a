// Loads the bundled dist/extension.js (`npm test` builds it first) with a stand-in `vscode`
// module and activates it where there is no memory root: it must load, register exactly the
// palette commands package.json declares, and start no server.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));

function fakeVscode(log) {
  const disposable = { dispose() {} };
  const channel = { appendLine: (l) => log.lines.push(l), append() {}, show() {}, dispose() {} };
  const known = {
    window: { createOutputChannel: () => channel, showErrorMessage: async () => undefined,
      showWarningMessage: async (m) => { log.warnings.push(m); } },
    commands: { registerCommand: (id) => { log.commands.push(id); return disposable; }, executeCommand: async () => undefined },
    workspace: { workspaceFolders: [], getConfiguration: () => ({ get: () => undefined, inspect: () => undefined }),
      onDidChangeConfiguration: () => disposable, onDidChangeWorkspaceFolders: () => disposable },
    Uri: { file: (p) => ({ scheme: 'file', fsPath: p }), parse: (u) => ({ scheme: 'file', fsPath: u }) },
  };
  // Anything else vscode-languageclient touches while loading (classes it extends, enums).
  const generic = (name) => new Proxy(class { constructor() {} }, { get: (t, p) => (p in t ? t[p] : generic(`${name}.${String(p)}`)) });
  return new Proxy(known, { get: (t, p) => (p in t ? t[p] : generic(String(p))) });
}

test('the bundle loads and registers the palette commands; no root, no server', async () => {
  const log = { commands: [], lines: [], warnings: [] };
  const vscode = fakeVscode(log);
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
  };
  require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: vscode };
  const home = process.env.HOME;
  const pmemRoot = process.env.PMEM_ROOT;
  process.env.HOME = mkdtempSync(join(tmpdir(), 'pmem-home-'));
  delete process.env.PMEM_ROOT;
  try {
    const ext = require('../dist/extension.js');
    assert.equal(typeof ext.activate, 'function');
    assert.equal(typeof ext.deactivate, 'function');
    await ext.activate({ subscriptions: [], extension: { packageJSON: pkg } });
    assert.deepEqual(log.commands.sort(), pkg.contributes.commands.map((c) => c.command).sort());
    assert.ok(log.lines.some((l) => l.startsWith('No memory root')), log.lines);
    await ext.deactivate();
  } finally {
    Module._resolveFilename = resolve;
    process.env.HOME = home;
    if (pmemRoot !== undefined) process.env.PMEM_ROOT = pmemRoot;
  }
});

test('the bundle carries vscode-languageclient and needs nothing but vscode and node built-ins', () => {
  const text = readFileSync('dist/extension.js', 'utf8');
  const required = new Set([...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
  for (const name of required) {
    assert.ok(name === 'vscode' || Module.builtinModules.includes(name.replace(/^node:/, '')), name);
  }
  assert.ok(required.has('vscode'));
});
