import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerFor, dialogFor, noticeFor, splitMessage, stderrLine, traceEnabled } from '../src/messages';

// What pmem-lsp sends for an archive (lifecycle_commands.py): the preview, Archive and Cancel.
const PREVIEW = [
  'Archive projects/recipe-search.md',
  '  move: projects/recipe-search.md → _archive/projects/recipe-search.md',
  '  _index.md: remove the route',
  '    - [Recipe search](projects/recipe-search.md) — static search',
  '  To undo: recover projects/recipe-search.md',
].join('\n');
const REQUEST = { type: 3, message: PREVIEW, actions: [{ title: 'Archive' }, { title: 'Cancel' }] };

test('a confirmation is a modal dialog: the first line as its message, the rest as its detail, line breaks kept', () => {
  const dialog = dialogFor(REQUEST);
  assert.equal(dialog.severity, 'info');
  assert.equal(dialog.message, 'Archive projects/recipe-search.md');
  assert.equal(dialog.detail.split('\n').length, 4);
  assert.ok(dialog.detail.startsWith('  move: projects/recipe-search.md'));
  assert.deepEqual(dialog.items.map((i) => [i.title, i.isCloseAffordance]), [['Archive', false], ['Cancel', true]]);
  assert.equal(dialogFor({ ...REQUEST, type: 2 }).severity, 'warning'); // purge
});

test('the answer: the chosen action; Escape is the server\'s Cancel, or null when it offered none', () => {
  const dialog = dialogFor(REQUEST);
  assert.deepEqual(answerFor(dialog, { title: 'Archive' }), { title: 'Archive' });
  assert.deepEqual(answerFor(dialog, { title: 'Cancel' }), { title: 'Cancel' });
  assert.deepEqual(answerFor(dialog, undefined), { title: 'Cancel' });
  assert.equal(answerFor(dialogFor({ type: 3, message: 'x', actions: [{ title: 'Upgrade' }] }), undefined), null);
  assert.equal(answerFor(dialogFor({ type: 3, message: 'x' }), { title: 'Other' }), null);
});

test('splitMessage and the one-line notice', () => {
  assert.deepEqual(splitMessage('\n\nMemory root: /m\nCore: 2 files\r\n\n'), { first: 'Memory root: /m', rest: 'Core: 2 files' });
  assert.deepEqual(splitMessage('one line'), { first: 'one line', rest: '' });
  assert.equal(noticeFor('one line', '(more)'), 'one line');
  assert.equal(noticeFor('Memory health: /m\nNo candidates.', '(more)'), 'Memory health: /m (more)');
});

test('stderr: each line at the level Python logged it; a traceback keeps its level; a crash is an error', () => {
  assert.deepEqual(stderrLine('INFO pmem_lsp.server.roots: memory roots: /m', undefined),
    { level: 'info', text: 'pmem_lsp.server.roots: memory roots: /m' });
  assert.equal(stderrLine('WARNING pygls: slow', 'info').level, 'warn');
  assert.equal(stderrLine('ERROR pmem_lsp: background task failed', 'info').level, 'error');
  assert.equal(stderrLine('CRITICAL x: y', undefined).level, 'error');
  assert.equal(stderrLine('Traceback (most recent call last):', 'error').level, 'error');
  assert.equal(stderrLine('  continued', 'info').level, 'info');
  assert.equal(stderrLine('/usr/bin/python3: No module named pmem_lsp', undefined).level, 'error');
});

test('pmem.trace.server turns tracing on without touching the channel\'s log level', () => {
  assert.equal(traceEnabled('off', false), false);
  assert.equal(traceEnabled(undefined, false), false);
  assert.equal(traceEnabled('messages', false), true);
  assert.equal(traceEnabled('verbose', false), true);
  assert.equal(traceEnabled('off', true), true); // the channel at Trace, as vscode-languageclient does
});
