// Bundles the extension into dist/extension.js (vscode-languageclient included, `vscode` left
// to VS Code). `--tests` bundles test/*.test.ts into out/test/ for `node --test`.
import * as esbuild from 'esbuild';
import { readdirSync } from 'node:fs';

const production = process.argv.includes('--production');
const common = { bundle: true, platform: 'node', format: 'cjs', target: 'node18', external: ['vscode'], logLevel: 'warning' };

if (process.argv.includes('--tests')) {
  const tests = readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
  await esbuild.build({ ...common, entryPoints: tests, outdir: 'out/test' });
} else {
  await esbuild.build({
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    minify: production,
    sourcemap: !production,
  });
}
