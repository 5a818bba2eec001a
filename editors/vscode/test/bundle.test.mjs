// Loads the bundled dist/extension.js (`npm test` builds it first) with a stand-in `vscode`
// module and activates it where there is no memory root: it must load, register exactly the
// palette commands package.json declares, and start no server.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));

function fakeVscode(log, { folders = [], config = {} } = {}) {
  const disposable = { dispose() {} };
  const channel = {
    name: 'Persistent Memory', logLevel: 3, onDidChangeLogLevel: () => disposable,
    appendLine: (l) => log.lines.push(l), append() {}, show() {}, dispose() {},
    trace: (l) => log.lines.push(l), debug: (l) => log.lines.push(l), info: (l) => log.lines.push(l),
    warn: (l) => log.lines.push(l), error: (l) => log.lines.push(String(l)),
  };
  class EventEmitter { event = () => disposable; fire() {} dispose() {} }
  const known = {
    window: { createOutputChannel: (name, options) => { log.channels.push([name, options]); return channel; },
      showErrorMessage: async (m, ...items) => { log.errors.push([m, items]); },
      showWarningMessage: async (m) => { log.warnings.push(m); },
      showInformationMessage: async () => undefined },
    commands: { registerCommand: (id) => { log.commands.push(id); return disposable; }, executeCommand: async () => undefined },
    workspace: { workspaceFolders: folders.map((f) => ({ uri: { scheme: 'file', fsPath: f } })), isTrusted: true,
      getConfiguration: () => ({ get: (k) => config[k], inspect: (k) => (k in config ? { globalValue: config[k] } : undefined) }),
      onDidChangeConfiguration: () => disposable, onDidChangeWorkspaceFolders: () => disposable,
      onDidGrantWorkspaceTrust: () => disposable, onDidCloseTextDocument: () => disposable,
      registerTextDocumentContentProvider: () => disposable },
    Uri: { file: (p) => ({ scheme: 'file', fsPath: p }), parse: (u) => ({ scheme: 'file', fsPath: u }),
      joinPath: (u, ...p) => ({ scheme: 'file', fsPath: [u.fsPath, ...p].join('/') }) },
    EventEmitter,
    LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
  };
  // Anything else vscode-languageclient touches while loading (classes it extends, enums).
  const generic = (name) => new Proxy(class { constructor() {} }, { get: (t, p) => (p in t ? t[p] : generic(`${name}.${String(p)}`)) });
  return new Proxy(known, { get: (t, p) => (p in t ? t[p] : generic(String(p))) });
}

/** Loads dist/extension.js afresh with `vscode` as given; returns the module. */
function loadExtension(vscode) {
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest);
  };
  require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: vscode };
  const bundle = require.resolve('../dist/extension.js');
  delete require.cache[bundle];
  try {
    return require(bundle);
  } finally {
    Module._resolveFilename = resolve;
  }
}

const newLog = () => ({ commands: [], lines: [], warnings: [], errors: [], channels: [] });

test('the bundle loads and registers the palette commands; no root, no server', async () => {
  const log = newLog();
  const home = process.env.HOME;
  const pmemRoot = process.env.PMEM_ROOT;
  process.env.HOME = mkdtempSync(join(tmpdir(), 'pmem-home-'));
  delete process.env.PMEM_ROOT;
  try {
    const ext = loadExtension(fakeVscode(log));
    assert.equal(typeof ext.activate, 'function');
    assert.equal(typeof ext.deactivate, 'function');
    await ext.activate({ subscriptions: [], extension: { packageJSON: pkg }, extensionUri: { fsPath: '/ext' } });
    assert.deepEqual(log.commands.sort(), pkg.contributes.commands.map((c) => c.command).sort());
    assert.ok(log.lines.some((l) => l.startsWith('No memory root')), log.lines);
    // One output channel, a log channel: the client's log, stderr, trace and reports together.
    assert.deepEqual(log.channels, [['Persistent Memory', { log: true }]]);
    await ext.deactivate();
  } finally {
    process.env.HOME = home;
    if (pmemRoot !== undefined) process.env.PMEM_ROOT = pmemRoot;
  }
});

test('no pmem-lsp and a Python without pmem_lsp: a clear message with actions, and no server started', async () => {
  // PATH holds only a python3 that answers as one without the module (what `python3 -m
  // pmem_lsp` prints there); the extension used to start it and let it crash five times.
  const bin = mkdtempSync(join(tmpdir(), 'pmem-bin-'));
  const python = join(bin, 'python3');
  writeFileSync(python, '#!/bin/sh\necho "$0: No module named pmem_lsp" >&2\nexit 1\n');
  chmodSync(python, 0o755);
  const root = mkdtempSync(join(tmpdir(), 'pmem-root-'));
  writeFileSync(join(root, '_index.md'), '# Memory index\n');
  const log = newLog();
  const path = process.env.PATH;
  process.env.PATH = bin;
  try {
    const ext = loadExtension(fakeVscode(log, { folders: [root], config: { 'server.path': '', 'server.python': '' } }));
    await ext.activate({ subscriptions: [], extension: { packageJSON: pkg }, extensionUri: { fsPath: '/ext' } });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(log.errors.length, 1, JSON.stringify(log));
    const [message, items] = log.errors[0];
    assert.match(message, /not installed/);
    assert.match(message, new RegExp(`${python} has no module pmem_lsp`));
    assert.match(message, /make install/);
    assert.deepEqual(items, ['Open Settings', 'How to Install']);
    assert.ok(!log.lines.some((l) => l.startsWith('Starting ')), log.lines);
    await ext.deactivate();
  } finally {
    process.env.PATH = path;
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
