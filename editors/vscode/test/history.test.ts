import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argumentObject, clientCommandFor, historyTextArgs, LENS_COMMANDS } from '../src/history';

test('a history lens runs the extension command that shows the server\'s answer', () => {
  const lens = { title: 'diff', command: 'pmem.diff', arguments: [{ path: 'notes/a.md', entry: '1a2b3c4d5e6f' }] };
  assert.deepEqual(clientCommandFor(lens), { ...lens, command: 'persistentMemory.diff' });
  assert.equal(clientCommandFor({ title: 'keep', command: 'pmem.review.accept' }).command, 'persistentMemory.reviewAccept');
  const other = { title: '3 references', command: '' };
  assert.equal(clientCommandFor(other), other);
  // Never a `pmem.` id: vscode-languageclient registers the server's commands under those.
  assert.ok(Object.values(LENS_COMMANDS).every((id) => id.startsWith('persistentMemory.')));
});

test('the pmem-history URI query names the root, the path and the entry', () => {
  // As the server writes it (history_commands.history_uri), after VS Code decoded the query.
  const query = JSON.stringify({ root: '/home/u/memory', path: 'notes/a b.md', entry: 'ab'.repeat(20) });
  assert.deepEqual(historyTextArgs(query), { root: '/home/u/memory', path: 'notes/a b.md', entry: 'ab'.repeat(20) });
  assert.equal(historyTextArgs('not json'), undefined);
  assert.equal(historyTextArgs('{"path": "notes/a.md"}'), undefined);
});

test('argumentObject: a lens passes one object, the palette none', () => {
  assert.deepEqual(argumentObject([{ path: 'notes/a.md' }]), { path: 'notes/a.md' });
  assert.deepEqual(argumentObject([]), {});
  assert.deepEqual(argumentObject([['x']]), {});
});
