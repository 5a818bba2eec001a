// History in VS Code (docs/design.md §11): the server's history lenses run the extension's own
// commands (the server's `pmem.diff` and `pmem.history` answer with data that only the extension
// can show), and the text before a change is served as a read-only `pmem-history:` document for
// VS Code's own diff editor. No `vscode` import: unit-tested.

export const HISTORY_SCHEME = 'pmem-history';

/** Server command of a history lens → the extension command that shows its answer. */
export const LENS_COMMANDS: Record<string, string> = {
  'pmem.history': 'persistentMemory.history',
  'pmem.diff': 'persistentMemory.diff',
  'pmem.undo': 'persistentMemory.undo',
  'pmem.review.accept': 'persistentMemory.reviewAccept',
};

export interface LensCommand {
  title: string;
  command: string;
  arguments?: unknown[];
}

/** The lens's command as the extension runs it (others are left as the server sent them). */
export function clientCommandFor<T extends LensCommand>(command: T): T {
  const mine = LENS_COMMANDS[command.command];
  return mine ? { ...command, command: mine } : command;
}

export interface HistoryTextArgs {
  path: string;
  entry: string;
  root?: string;
}

/** What a `pmem-history:` URI names, from its (decoded) query: the JSON object the server wrote
 * (`history_commands.history_uri`). Undefined when it is not one. */
export function historyTextArgs(query: string): HistoryTextArgs | undefined {
  try {
    const parsed = JSON.parse(query) as Record<string, unknown>;
    if (typeof parsed.path !== 'string' || typeof parsed.entry !== 'string') return undefined;
    return { path: parsed.path, entry: parsed.entry, ...(typeof parsed.root === 'string' ? { root: parsed.root } : {}) };
  } catch {
    return undefined;
  }
}

/** The first argument object of a command run from a lens or the palette (none: `{}`). */
export function argumentObject(args: unknown[]): Record<string, unknown> {
  const first = args[0];
  return first && typeof first === 'object' && !Array.isArray(first) ? { ...(first as Record<string, unknown>) } : {};
}
