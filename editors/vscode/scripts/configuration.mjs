// Generates `contributes.configuration` in package.json from schemas/settings.schema.json.
//
//   node scripts/configuration.mjs           rewrite package.json
//   node scripts/configuration.mjs --check   exit 1 if package.json is stale (run by `npm run build`)
//
// Server settings become flat VS Code keys (`pmem.core.maxBytes`); the extension's own settings
// (`pmem.server.*`, `pmem.trace.server`) are added here and never sent to the server.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
export const PACKAGE_JSON = join(HERE, '..', 'package.json');
export const SCHEMA = join(HERE, '..', '..', '..', 'schemas', 'settings.schema.json');

/**
 * Settings of the extension itself, not of the server. The server paths have the `window` scope:
 * shown and honoured in User settings everywhere (a `machine` or `machine-overridable` setting
 * appears only under "Remote" in code-server and remote windows). A workspace value of them is
 * ignored in Restricted Mode (package.json `capabilities.untrustedWorkspaces`).
 * A link to another setting is written `` `#pmem.server.python#` ``: the Settings editor renders
 * a code span holding exactly `#id#` as a link, and anything else (`` `#id# -m x` ``, a bare #id#)
 * literally.
 */
export const CLIENT_SETTINGS = {
  'pmem.server.path': {
    type: 'string',
    default: '',
    scope: 'window',
    markdownDescription:
      'Path of the `pmem-lsp` executable, e.g. `~/src/pmem-lsp/.venv/bin/pmem-lsp`. Empty: `pmem-lsp` on `PATH`, else the Python of `#pmem.server.python#` with `-m pmem_lsp`. Ignored from workspace settings in Restricted Mode.',
  },
  'pmem.server.python': {
    type: 'string',
    default: '',
    scope: 'window',
    markdownDescription:
      'Python interpreter that has `pmem-lsp` installed, used as `python -m pmem_lsp` when `#pmem.server.path#` is empty and `pmem-lsp` is not on `PATH`. Empty: `python.defaultInterpreterPath`, else `python3`. Ignored from workspace settings in Restricted Mode.',
  },
  'pmem.trace.server': {
    type: 'string',
    enum: ['off', 'messages', 'verbose'],
    default: 'off',
    scope: 'window',
    markdownDescription:
      'Log the messages between VS Code and pmem-lsp in the "Persistent Memory" output (`messages`: one line each; `verbose`: with their content). With `off`, setting that output\'s log level to Trace also traces them.',
  },
};

/** Prefixes of the keys that stay in the extension. */
export const CLIENT_PREFIXES = ['server', 'trace'];

function resolveRef(schema, node) {
  if (node && typeof node.$ref === 'string') {
    const name = node.$ref.replace('#/$defs/', '');
    return schema.$defs[name];
  }
  return node;
}

/** One VS Code setting from one JSON-schema leaf. */
function setting(schema, node) {
  const out = {};
  if (node.anyOf) {
    out.type = node.anyOf.map((n) => n.type);
  } else {
    out.type = node.type;
  }
  if (node.enum) out.enum = node.enum;
  if ('default' in node) out.default = node.default;
  else if (node.type === 'array') out.default = [];
  else if (node.type === 'object') out.default = {};
  if (node.items) out.items = resolveRef(schema, node.items);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    out.additionalProperties = resolveRef(schema, node.additionalProperties);
  }
  for (const key of ['minimum', 'maximum']) if (key in node) out[key] = node[key];
  if (node.description) out.markdownDescription = node.description;
  out.scope = 'resource';
  return out;
}

/** `contributes.configuration` for the given settings schema. */
export function configurationFromSchema(schema) {
  const properties = {};
  for (const [name, raw] of Object.entries(schema.properties).sort(([a], [b]) => a.localeCompare(b))) {
    const node = resolveRef(schema, raw);
    if (node !== raw && node.type === 'object' && node.properties) {
      for (const [sub, leaf] of Object.entries(node.properties).sort(([a], [b]) => a.localeCompare(b))) {
        properties[`pmem.${name}.${sub}`] = setting(schema, leaf);
      }
    } else {
      properties[`pmem.${name}`] = setting(schema, node);
    }
  }
  for (const [key, value] of Object.entries(CLIENT_SETTINGS)) properties[key] = value;
  return { title: 'Persistent Memory', properties };
}

export function packageWithConfiguration(pkg, schema) {
  return { ...pkg, contributes: { ...pkg.contributes, configuration: configurationFromSchema(schema) } };
}

export function render(pkg) {
  return JSON.stringify(pkg, null, 2) + '\n';
}

function main(argv) {
  const current = readFileSync(PACKAGE_JSON, 'utf8');
  const schema = JSON.parse(readFileSync(SCHEMA, 'utf8'));
  const wanted = render(packageWithConfiguration(JSON.parse(current), schema));
  if (argv.includes('--check')) {
    if (current !== wanted) {
      console.error('package.json: contributes.configuration is stale; run `make schemas` or `npm run configuration`');
      return 1;
    }
    return 0;
  }
  if (current !== wanted) writeFileSync(PACKAGE_JSON, wanted);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = main(process.argv.slice(2));
}
