// The `pmem` settings object sent to the server. No `vscode` import: unit-tested.
//
// Only values the user set are sent: VS Code's defaults would otherwise override a root's
// `.pmem.toml` key by key. The extension's own keys (`pmem.server.*`, `pmem.trace.*`) stay here.

export const CLIENT_PREFIXES = ['server.', 'trace.'];

export interface Inspected<T = unknown> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
  defaultValue?: T;
}

/** The most specific value the user set, or undefined. */
export function explicitValue<T>(inspected: Inspected<T> | undefined): T | undefined {
  if (!inspected) return undefined;
  return inspected.workspaceFolderValue ?? inspected.workspaceValue ?? inspected.globalValue;
}

/**
 * `keys` are the contributed setting names without `pmem.` (`core.maxBytes`, `select`, …);
 * `inspect` returns VS Code's `inspect()` for one of them. Dotted keys become nested objects.
 */
export function serverSettings(
  keys: string[],
  inspect: (key: string) => Inspected | undefined,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key of keys) {
    if (CLIENT_PREFIXES.some((p) => key.startsWith(p))) continue;
    const value = explicitValue(inspect(key));
    if (value === undefined || value === null) continue;
    const parts = key.split('.');
    let node = result;
    for (const part of parts.slice(0, -1)) {
      if (typeof node[part] !== 'object' || node[part] === null) node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    node[parts[parts.length - 1]] = value;
  }
  return result;
}

/** Setting names (without `pmem.`) contributed in package.json. */
export function contributedKeys(packageJson: { contributes?: { configuration?: { properties?: object } } }): string[] {
  const props = packageJson.contributes?.configuration?.properties ?? {};
  return Object.keys(props)
    .filter((k) => k.startsWith('pmem.'))
    .map((k) => k.slice('pmem.'.length));
}
