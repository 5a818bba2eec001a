import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { contributedKeys, explicitValue, serverSettings } from '../src/settings';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));

test('only values the user set are sent, nested, most specific scope first', () => {
  const inspected: Record<string, object> = {
    'core.maxBytes': { defaultValue: 8192, globalValue: 4096 },
    'index.maxLines': { defaultValue: 200 },
    ignore: { defaultValue: [], globalValue: ['PM100'], workspaceValue: ['PM100', 'PM402'] },
    severity: { defaultValue: {}, workspaceFolderValue: { PM202: 'information' }, globalValue: { PM202: 'hint' } },
    root: { defaultValue: null },
    'server.path': { globalValue: '/opt/pmem-lsp' },
    'trace.server': { globalValue: 'verbose' },
  };
  assert.deepEqual(serverSettings(contributedKeys(pkg), (k) => inspected[k]), {
    core: { maxBytes: 4096 },
    ignore: ['PM100', 'PM402'],
    severity: { PM202: 'information' },
  });
});

test('nothing set: an empty object, so the root .pmem.toml decides', () => {
  assert.deepEqual(serverSettings(contributedKeys(pkg), () => ({ defaultValue: 1 })), {});
  assert.equal(explicitValue(undefined), undefined);
  assert.equal(explicitValue({ globalValue: false }), false);
});

test('every contributed key is either a server setting or one of the extension', () => {
  const keys = contributedKeys(pkg);
  assert.ok(keys.includes('core.maxBytes') && keys.includes('secrets.allow') && keys.includes('server.path'));
  assert.deepEqual(keys.filter((k) => k.startsWith('server.') || k.startsWith('trace.')).sort(),
    ['server.path', 'server.python', 'trace.server']);
});
