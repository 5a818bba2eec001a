import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { cliFor, resolveServer, which } from '../src/server';

// A fake PATH: only these files are executable.
function env(files: string[], extra: Record<string, string> = {}) {
  const set = new Set(files);
  return { PATH: '/usr/local/bin:/usr/bin:/home/u/.local/bin', HOME: '/home/u', platform: 'linux' as const,
    isExecutable: (f: string) => set.has(f), ...extra };
}

test('pmem.server.path wins, looked up on PATH when it is a bare name, ~ expanded', () => {
  const e = env(['/opt/pmem/bin/pmem-lsp', '/usr/bin/pmem-lsp', '/home/u/venv/bin/pmem-lsp', '/usr/bin/my-pmem']);
  assert.deepEqual(resolveServer({ path: '/opt/pmem/bin/pmem-lsp' }, e), { command: '/opt/pmem/bin/pmem-lsp', args: [] });
  assert.deepEqual(resolveServer({ path: '~/venv/bin/pmem-lsp' }, e), { command: '/home/u/venv/bin/pmem-lsp', args: [] });
  assert.deepEqual(resolveServer({ path: 'my-pmem' }, e), { command: '/usr/bin/my-pmem', args: [] });
  // A configured path that does not exist is an error, not a silent fallback.
  assert.equal(resolveServer({ path: '/nowhere/pmem-lsp', python: '/usr/bin/python3' }, e), undefined);
});

test('default: pmem-lsp on PATH, first match', () => {
  const e = env(['/usr/bin/pmem-lsp', '/home/u/.local/bin/pmem-lsp', '/usr/bin/python3']);
  assert.deepEqual(resolveServer({}, e), { command: '/usr/bin/pmem-lsp', args: [] });
  assert.deepEqual(resolveServer({ path: '  ', python: '/usr/bin/python3' }, e), { command: '/usr/bin/pmem-lsp', args: [] });
});

test('without pmem-lsp on PATH: the configured Python with -m pmem_lsp', () => {
  const e = env(['/usr/bin/python3', '/home/u/venv/bin/python']);
  assert.deepEqual(resolveServer({ python: '~/venv/bin/python' }, e), { command: '/home/u/venv/bin/python', args: ['-m', 'pmem_lsp'] });
  assert.deepEqual(resolveServer({ defaultInterpreter: '/home/u/venv/bin/python' }, e),
    { command: '/home/u/venv/bin/python', args: ['-m', 'pmem_lsp'] });
  // `python` is the Python extension's placeholder default: fall through to python3 on PATH.
  assert.deepEqual(resolveServer({ defaultInterpreter: 'python' }, e), { command: '/usr/bin/python3', args: ['-m', 'pmem_lsp'] });
  assert.deepEqual(resolveServer({}, e), { command: '/usr/bin/python3', args: ['-m', 'pmem_lsp'] });
  assert.equal(resolveServer({}, env([])), undefined);
});

test('Windows: PATHEXT and ; separators', () => {
  const e = { PATH: 'C:\\Python\\Scripts;C:\\Windows', PATHEXT: '.EXE;.CMD', platform: 'win32' as const,
    isExecutable: (f: string) => f === path.join('C:\\Python\\Scripts', 'pmem-lsp.EXE') };
  assert.equal(which('pmem-lsp', e), path.join('C:\\Python\\Scripts', 'pmem-lsp.EXE'));
  assert.equal(which('pmem-lsp', { ...e, isExecutable: () => false }), undefined);
});

test('the CLI that goes with the server', () => {
  const e = env(['/home/u/venv/bin/pmem-lsp', '/home/u/venv/bin/pmem', '/usr/bin/pmem']);
  assert.deepEqual(cliFor({ command: '/home/u/venv/bin/pmem-lsp', args: [] }, e), { command: '/home/u/venv/bin/pmem', args: [] });
  assert.deepEqual(cliFor({ command: '/usr/bin/python3', args: ['-m', 'pmem_lsp'] }, e),
    { command: '/usr/bin/python3', args: ['-m', 'pmem_lsp.cli.main'] });
  assert.deepEqual(cliFor({ command: '/opt/custom-server', args: [] }, e), { command: '/usr/bin/pmem', args: [] });
  assert.equal(cliFor(undefined, env([])), undefined);
});
