import assert from 'node:assert/strict';
import { test } from 'node:test';
import { locate, looksLikeRoot, markdownPattern, memoryRoots } from '../src/roots';

function fakeFs(files: string[], dirs: string[]) {
  return { isFile: (p: string) => files.includes(p), isDirectory: (p: string) => dirs.includes(p) };
}

test('a folder is a root when it has _index.md, _core/ or _archive/', () => {
  const fs = fakeFs(['/a/_index.md', '/d/_core'], ['/b/_core', '/c/_archive']);
  assert.ok(looksLikeRoot('/a', fs) && looksLikeRoot('/b', fs) && looksLikeRoot('/c', fs));
  assert.ok(!looksLikeRoot('/d', fs)); // a file called _core is not the folder
});

test('roots: matching workspace folders plus pmem.root; else $PMEM_ROOT or ~/.persistent-memory if it exists', () => {
  const fs = fakeFs(['/w/mem/_index.md'], ['/home/u/.persistent-memory', '/srv/pm']);
  const env = { HOME: '/home/u' };
  assert.deepEqual(memoryRoots(['/w/code', '/w/mem'], undefined, env, fs), ['/w/mem']);
  assert.deepEqual(memoryRoots(['/w/mem'], '~/notes-root', env, fs), ['/w/mem', '/home/u/notes-root']);
  assert.deepEqual(memoryRoots(['/w/code'], null, env, fs), ['/home/u/.persistent-memory']);
  assert.deepEqual(memoryRoots([], undefined, { ...env, PMEM_ROOT: '/srv/pm' }, fs), ['/srv/pm']);
  assert.deepEqual(memoryRoots([], undefined, { HOME: '/nobody' }, fs), []);
  assert.deepEqual(memoryRoots(['/w/mem'], '/w/mem/', env, fs), ['/w/mem']);
});

test('locate: the innermost root and a / separated relative path', () => {
  const roots = ['/home/u/.persistent-memory', '/home/u/.persistent-memory/nested'];
  assert.deepEqual(locate(roots, '/home/u/.persistent-memory/projects/a.md'), { root: roots[0], relative: 'projects/a.md' });
  assert.deepEqual(locate(roots, '/home/u/.persistent-memory/nested/x.md'), { root: roots[1], relative: 'x.md' });
  assert.equal(locate(roots, '/home/u/.persistent-memory-old/a.md'), undefined);
  assert.equal(locate(roots, '/home/u/.persistent-memory'), undefined);
});

test('document selector pattern', () => {
  assert.equal(markdownPattern('/home/u/.persistent-memory'), '/home/u/.persistent-memory/**/*.md');
});
