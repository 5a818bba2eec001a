// contributes.configuration in package.json is exactly what scripts/configuration.mjs makes of
// schemas/settings.schema.json, and it carries every setting with its default and description.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CLIENT_SETTINGS, PACKAGE_JSON, SCHEMA, configurationFromSchema, packageWithConfiguration, render } from '../scripts/configuration.mjs';

const schema = JSON.parse(readFileSync(SCHEMA, 'utf8'));
const text = readFileSync(PACKAGE_JSON, 'utf8');
const pkg = JSON.parse(text);

test('package.json is up to date with the settings schema', () => {
  assert.equal(text, render(packageWithConfiguration(pkg, schema)), 'run `npm run configuration`');
});

test('one VS Code setting per schema leaf, with default and description', () => {
  const props = pkg.contributes.configuration.properties;
  const leaves = [];
  for (const [name, node] of Object.entries(schema.properties)) {
    const def = node.$ref ? schema.$defs[node.$ref.split('/').pop()] : undefined;
    if (def?.properties) for (const [sub, leaf] of Object.entries(def.properties)) leaves.push([`pmem.${name}.${sub}`, leaf]);
    else leaves.push([`pmem.${name}`, node]);
  }
  const serverKeys = Object.keys(props).filter((k) => !(k in CLIENT_SETTINGS));
  assert.deepEqual(serverKeys.sort(), leaves.map(([k]) => k).sort());
  for (const [key, leaf] of leaves) {
    assert.ok(props[key].markdownDescription, key);
    assert.ok('default' in props[key], key);
    if ('default' in leaf) assert.deepEqual(props[key].default, leaf.default, key);
    if (leaf.type) assert.equal(props[key].type, leaf.type, key);
  }
  assert.deepEqual(props['pmem.root'].type, ['string', 'null']);
  assert.deepEqual(props['pmem.severity'].additionalProperties.enum, ['error', 'warning', 'information', 'hint']);
  assert.equal(props['pmem.core.maxBytes'].default, 8192);
  assert.equal(props['pmem.core.maxBytes'].minimum, 0);
});

test('a schema change shows up in the generated configuration', () => {
  const changed = structuredClone(schema);
  changed.$defs.CoreSettings.properties.maxBytes.default = 1234;
  changed.properties.newThing = { type: 'boolean', default: true, description: 'New.' };
  const props = configurationFromSchema(changed).properties;
  assert.equal(props['pmem.core.maxBytes'].default, 1234);
  assert.deepEqual(props['pmem.newThing'], { type: 'boolean', default: true, markdownDescription: 'New.', scope: 'resource' });
});

test('the extension\'s own settings: shown in User settings everywhere, links that render', () => {
  const props = pkg.contributes.configuration.properties;
  for (const key of Object.keys(CLIENT_SETTINGS)) {
    // machine / machine-overridable settings appear only under "Remote" in code-server and remote windows
    assert.equal(props[key].scope, 'window', key);
  }
  for (const [key, prop] of Object.entries(props)) {
    const text = prop.markdownDescription ?? '';
    // A `#setting#` link inside backticks renders literally in the Settings editor.
    // The Settings editor turns a code span holding exactly `#id#` into a link; `#id# and more`
    // in backticks, or a bare #id#, it shows literally.
    const code = text.split('`').filter((_, i) => i % 2 === 1);
    const prose = text.split('`').filter((_, i) => i % 2 === 0);
    assert.ok(!code.some((c) => /#[\w.]+#/.test(c) && !/^#[\w.]+#$/.test(c)), `${key}: ${text}`);
    assert.ok(!prose.some((p) => /#[\w.]+#/.test(p)), `${key}: ${text}`);
    for (const c of code.filter((c) => /^#[\w.]+#$/.test(c))) assert.ok(c.slice(1, -1) in props, `${key} links to ${c}`);
  }
});

test('Restricted Mode: limited support, the server paths never taken from an untrusted workspace', () => {
  const trust = pkg.capabilities?.untrustedWorkspaces;
  assert.equal(trust?.supported, 'limited');
  assert.ok(trust.description);
  assert.deepEqual([...trust.restrictedConfigurations].sort(), ['pmem.server.path', 'pmem.server.python']);
});
