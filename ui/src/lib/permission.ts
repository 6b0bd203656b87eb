// What the permission dialog shows: the command and its folder, the arguments, the options in a
// fixed order with their keys. Plain functions so tests check them without a DOM.
import type {
  AgentPromptEvent,
  PermissionOption,
  PermissionOptionKind,
  ToolCallContent,
} from './generated/ipc';

const ORDER: Record<PermissionOptionKind, number> = {
  allow_once: 0,
  allow_always: 1,
  reject_once: 2,
  reject_always: 3,
};

export const KIND_LABEL: Record<PermissionOptionKind, string> = {
  allow_once: 'Allow once',
  allow_always: 'Always allow',
  reject_once: 'Reject',
  reject_always: 'Always reject',
};

/** The key that chooses each kind (shown on the button). */
export const KIND_KEY: Record<
  PermissionOptionKind,
  { key: string; shift: boolean; label: string }
> = {
  allow_once: { key: 'y', shift: false, label: 'Y' },
  // Remembered for good: never a single plain key.
  allow_always: { key: 'a', shift: true, label: 'Shift+A' },
  reject_once: { key: 'n', shift: false, label: 'N' },
  reject_always: { key: 'n', shift: true, label: 'Shift+N' },
};

/** Allow once, always allow, reject, always reject: whatever order the agent sent. */
export function orderedOptions(options: readonly PermissionOption[]): PermissionOption[] {
  return [...options].sort((a, b) => (ORDER[a.kind] ?? 9) - (ORDER[b.kind] ?? 9));
}

/** The option a key press chooses, if any (the first of that kind). */
export function optionForKey(
  options: readonly PermissionOption[],
  e: { key: string; shiftKey: boolean; ctrlKey: boolean; metaKey: boolean; altKey: boolean },
): PermissionOption | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  const key = e.key.toLowerCase();
  for (const o of orderedOptions(options)) {
    const k = KIND_KEY[o.kind];
    if (k && k.key === key && k.shift === e.shiftKey) return o;
  }
  return null;
}

function record(v: unknown): Record<string, unknown> | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : null;
}

/** Quotes one argument the way a POSIX shell would need it. */
function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

export interface CommandView {
  /** The command as one line of shell (an argv joined and quoted). */
  command: string;
  /** `bash -lc` and the like: the shell that runs `command`. */
  shell: string | null;
  cwd: string | null;
}

/**
 * The command an execute request runs, from its raw input: `command` (Claude: a string; Codex:
 * an argv) or `cmd`, and `cwd` or `workdir`. Null when there is none.
 */
export function commandOf(rawInput: unknown): CommandView | null {
  const r = record(rawInput);
  if (!r) return null;
  const raw = r['command'] ?? r['cmd'];
  const cwdRaw = r['cwd'] ?? r['workdir'] ?? r['working_directory'];
  const cwd = typeof cwdRaw === 'string' && cwdRaw !== '' ? cwdRaw : null;
  if (typeof raw === 'string' && raw !== '') return { command: raw, shell: null, cwd };
  if (Array.isArray(raw) && raw.length > 0 && raw.every((a) => typeof a === 'string')) {
    const argv = raw as string[];
    const [prog, flag, script] = argv;
    if (
      argv.length === 3 &&
      prog !== undefined &&
      /(^|\/)(ba|z|da)?sh$/.test(prog) &&
      (flag === '-c' || flag === '-lc')
    ) {
      return { command: script ?? '', shell: `${prog} ${flag}`, cwd };
    }
    return { command: argv.map(shellQuote).join(' '), shell: null, cwd };
  }
  return null;
}

export interface ArgRow {
  key: string;
  /** Strings as they are; anything else as indented JSON. */
  value: string;
  multiline: boolean;
}

/** The raw input as rows for a key/value table (null when it is not an object). */
export function argRows(rawInput: unknown): ArgRow[] | null {
  const r = record(rawInput);
  if (!r) return null;
  return Object.entries(r).map(([key, v]) => {
    const value = typeof v === 'string' ? v : (JSON.stringify(v, null, 2) ?? String(v));
    return { key, value, multiline: value.includes('\n') };
  });
}

export function rawJson(rawInput: unknown): string | null {
  if (rawInput === undefined || rawInput === null) return null;
  return JSON.stringify(rawInput, null, 2) ?? null;
}

export type DiffItem = Extract<ToolCallContent, { type: 'diff' }>;

export function diffsOf(req: AgentPromptEvent): DiffItem[] {
  return (req.content ?? []).filter((c): c is DiffItem => c.type === 'diff');
}

/** Text the agent put in the request's content (besides diffs). */
export function textsOf(req: AgentPromptEvent): string[] {
  const out: string[] = [];
  for (const c of req.content ?? []) {
    if (c.type === 'content' && c.content.type === 'text') out.push(c.content.text);
  }
  return out;
}

export function requestTitle(req: AgentPromptEvent): string {
  return req.toolName || req.text || 'A tool call';
}
