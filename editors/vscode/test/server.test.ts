import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { cliFor, notFound, probeServer, resolveServer, trustedServerSettings, which } from '../src/server';

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

test('a server that cannot start is caught before the client starts it, with what is missing', async () => {
  const noModule = async () => ({ code: 1, stdout: '', stderr: '/usr/bin/python3: No module named pmem_lsp\n' });
  const p = await probeServer({ command: '/usr/bin/python3', args: ['-m', 'pmem_lsp'] }, noModule);
  assert.ok(p && /not installed/.test(p.message) && /\/usr\/bin\/python3 has no module pmem_lsp/.test(p.message), p?.message);
  assert.ok(p && /make install/.test(p.detail) && /pmem\.server\.path/.test(p.detail));

  const ok = async (cmd: string, args: string[]) => {
    assert.deepEqual(args.slice(-1), ['--version']);
    return { code: 0, stdout: 'pmem-lsp 0.1.0\n', stderr: '' };
  };
  assert.equal(await probeServer({ command: '/v/bin/pmem-lsp', args: [] }, ok), undefined);
  assert.equal(await probeServer({ command: '/v/bin/python', args: ['-m', 'pmem_lsp'] }, ok), undefined);

  const notPmem = async () => ({ code: 0, stdout: 'something else 1.0', stderr: '' });
  const wrong = await probeServer({ command: '/usr/bin/true', args: [] }, notPmem);
  assert.ok(wrong && /\/usr\/bin\/true is not a working pmem-lsp/.test(wrong.message));
  const cannotRun = async () => ({ code: null, stdout: '', stderr: '', error: 'spawn EACCES' });
  assert.ok(/EACCES/.test((await probeServer({ command: '/x', args: [] }, cannotRun))!.message));
});

test('nothing to start: the message names the setting or says nothing was found', () => {
  assert.match(notFound({ path: '/nowhere/pmem-lsp' }).message, /pmem\.server\.path is "\/nowhere\/pmem-lsp", which is not an executable file/);
  assert.match(notFound({}).message, /not installed/);
  assert.match(notFound({}).detail, /make install/);
});

test('Restricted Mode: only the user\'s own server settings count', () => {
  const values = {
    path: { value: '/workspace/evil', inspected: { workspaceValue: '/workspace/evil' } },
    python: { value: '/home/u/venv/bin/python', inspected: { globalValue: '/home/u/venv/bin/python' } },
    defaultInterpreter: { value: './.venv/bin/python', inspected: { globalValue: '/usr/bin/python3', workspaceValue: './.venv/bin/python' } },
  };
  const get = (k: keyof typeof values) => values[k];
  assert.deepEqual(trustedServerSettings(true, get), { path: '/workspace/evil', python: '/home/u/venv/bin/python', defaultInterpreter: './.venv/bin/python' });
  assert.deepEqual(trustedServerSettings(false, get), { path: undefined, python: '/home/u/venv/bin/python', defaultInterpreter: '/usr/bin/python3' });
});
