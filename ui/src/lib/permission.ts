// What the permission dialog shows: the command and its folder, the arguments, the options in a
// fixed order with their keys. Plain functions so tests check them without a DOM.
import type {
  AgentPromptEvent,
  PermissionOption,
  PermissionOptionKind,
  ToolCallContent,
} from './generated/ipc';
import { countLines, sameLeadingLines } from './diff';

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

/**
 * What an option is called: on its button, and in the thread once it was chosen, so the log says
 * the words the user clicked. Our label for its kind comes first (options are chosen by kind,
 * rule 6); the agent's own name is added when it says more. A name that only restates the label
 * ("Allow" on Allow once) is dropped; one that starts with it ("Always allow edits") replaces it,
 * so the button does not say "Always allow" twice.
 */
export function optionWords(o: Pick<PermissionOption, 'kind' | 'name'>): {
  label: string;
  own: string | null;
} {
  const label = KIND_LABEL[o.kind] ?? o.name;
  const name = o.name.trim();
  const n = name.toLowerCase();
  const l = label.toLowerCase();
  if (n === '' || l.startsWith(n)) return { label, own: null };
  if (n.startsWith(l)) return { label: n.length > l.length + 2 ? name : label, own: null };
  return { label, own: name };
}

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

/**
 * Whether a title only restates the command it runs ("Run `cargo test`", claude-code-acp's
 * "`cargo test`", the demo's "cargo fmt --check"): then the command is said once, in full.
 */
export function restatesCommand(title: string, command: string): boolean {
  const plain = (s: string) => s.replace(/`/g, '').replace(/\s+/g, ' ').trim();
  const t = plain(title).replace(/^run:?\s+/i, '');
  return t !== '' && t === plain(command);
}

/** Raw-input keys that hold a timeout in milliseconds (claude-code-acp's Bash: `timeout`). */
const MS_KEYS = new Set(['timeout', 'timeout_ms', 'timeoutMs']);

/** A duration in words: 500 ms, 60 s, 2 min 30 s. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 100) / 10;
  if (s < 120) return `${s} s`;
  const whole = Math.round(s);
  const min = Math.floor(whole / 60);
  const rest = whole % 60;
  return rest === 0 ? `${min} min` : `${min} min ${rest} s`;
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
    if (MS_KEYS.has(key) && typeof v === 'number' && Number.isFinite(v) && v >= 0)
      return { key, value: durationText(v), multiline: false };
    const value = typeof v === 'string' ? v : (JSON.stringify(v, null, 2) ?? String(v));
    return { key, value, multiline: value.includes('\n') };
  });
}

export function rawJson(rawInput: unknown): string | null {
  if (rawInput === undefined || rawInput === null) return null;
  return JSON.stringify(rawInput, null, 2) ?? null;
}

export type DiffItem = Extract<ToolCallContent, { type: 'diff' }>;

/**
 * What numbering a diff needs from the call it belongs to: a permission request, or the
 * thread's card for the same call (both number a diff by the same rule, so they agree).
 */
export type DiffContext = Pick<AgentPromptEvent, 'rawInput' | 'locations'>;

export function diffsOf(req: AgentPromptEvent): DiffItem[] {
  return (req.content ?? []).filter((c): c is DiffItem => c.type === 'diff');
}

/** The lines (1-based, as the dialog shows them) the request's locations give for a file. */
function linesFor(req: DiffContext, path: string): number[] {
  const out = new Set<number>();
  for (const l of req.locations ?? []) {
    // 0 or none: no position (claude-code-acp sends `line: 0` for a Read without an offset).
    if (l.path === path && typeof l.line === 'number' && Number.isInteger(l.line) && l.line >= 1)
      out.add(l.line);
  }
  return [...out];
}

/**
 * The file line a request's diff starts at, for its line numbers: 1 when the diff is the whole
 * file, a fragment's place when the request gives it, null when it does not (the dialog then
 * shows no numbers: numbers that may be wrong are worse than none).
 *
 * ACP calls `oldText` the original content, yet agents send fragments: claude-code-acp puts
 * its Edit's `old_string`/`new_string` there, with a location that has no line; the demo
 * agent's showcase sends one changed line with the location `line: 3` and no raw input. So
 * the rule reads what the request says, in this order:
 * 1. no `oldText`: a new file, whole by definition -> 1;
 * 2. the raw input has `old_string` and `oldText` is it (an Edit): a fragment -> see below;
 * 3. the raw input has `content` and `newText` is it (a Write): the whole file -> 1;
 * 4. nothing says: the whole file, as ACP has it -> 1, unless a location's line rules that
 *    out: one line past the end of both texts cannot be in them, so the diff is a fragment
 *    (below); one line inside them that is neither 1 nor the diff's first change could mean
 *    either -> null; several lines -> null.
 * A fragment starts at its file's one location line, when there is exactly one. The line
 * could name the fragment's first line or its first changed line; they are the same line
 * only when the fragment opens with a change, so otherwise -> null. `replace_all` puts the
 * fragment in several places -> null.
 */
export function diffFirstLine(req: DiffContext, d: DiffItem): number | null {
  const oldText = d.oldText;
  if (oldText === null || oldText === undefined) return 1;
  const input = record(req.rawInput);
  const lines = linesFor(req, d.path);
  const fragment = (): number | null => {
    if (input?.['replace_all'] === true || lines.length !== 1) return null;
    return sameLeadingLines(oldText, d.newText) === 0 ? (lines[0] ?? null) : null;
  };
  if (typeof input?.['old_string'] === 'string' && input['old_string'] === oldText)
    return fragment();
  if (typeof input?.['content'] === 'string' && input['content'] === d.newText) return 1;
  if (lines.length === 0) return 1;
  const [line] = lines;
  if (lines.length > 1 || line === undefined) return null;
  if (line > Math.max(countLines(oldText), countLines(d.newText))) return fragment();
  return line === 1 || line === sameLeadingLines(oldText, d.newText) + 1 ? 1 : null;
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
