// Sample threads for the harness page (screenshots, CSP check, scrolling by hand).
import type { ToolKind } from '../../src/lib/generated/ipc';
import type { Entry, SessionView, TerminalState, ToolEntry } from '../../src/lib/session-store';

export const FOLDER = '/home/dev/projects/acme';

export function emptyView(
  entries: Entry[] = [],
  terminals: Record<string, TerminalState> = {},
): SessionView {
  return {
    entries,
    status: 'ready',
    statusDetail: null,
    agent: { launchName: 'demo', title: 'Demo agent' } as SessionView['agent'],
    title: null,
    pending: [],
    turnRunning: false,
    plan: [],
    planTitle: null,
    usage: null,
    commands: [],
    modes: null,
    configOptions: [],
    tasks: [],
    terminals,
  };
}

const oldSrc = `import { readFile } from 'node:fs/promises';

export interface Config {
  name: string;
  retries: number;
}

export async function loadConfig(path: string): Promise<Config> {
  const text = await readFile(path, 'utf8');
  const raw = JSON.parse(text);
  return { name: raw.name, retries: raw.retries };
}

export function describe(c: Config): string {
  return c.name;
}

export function unused(): void {}

export const VERSION = 1;
export const LIMITS = {
  maxRetries: 10,
  maxTimeoutMs: 60_000,
  minTimeoutMs: 100,
};
export const NAMES = ['alpha', 'beta', 'gamma', 'delta'];
export const FLAGS = { verbose: false, dryRun: false };
export const A = 1;
export const B = 2;
export const C = 3;
export const D = 4;
export const E = 5;
export const F = 6;
export const G = 7;
`;
const newSrc = oldSrc
  .replace('  retries: number;\n', '  retries: number;\n  timeoutMs?: number;\n')
  .replace(
    '  return { name: raw.name, retries: raw.retries };',
    "  if (typeof raw.name !== 'string') throw new Error(`bad config: ${path}`);\n  return { name: raw.name, retries: raw.retries ?? 3, timeoutMs: raw.timeoutMs };",
  )
  .replace('export function unused(): void {}\n\n', '')
  .replace('export const G = 7;\n', 'export const G = 7;\nexport const H = 8;\n');

export const diffSample = { path: `${FOLDER}/src/config.ts`, oldText: oldSrc, newText: newSrc };

const agentText = `I'll fix the config loader. Here is the plan:

1. **Validate** the \`name\` field and fail with a clear message.
2. Default \`retries\` to 3 when it is missing.
3. Add an optional \`timeoutMs\`.

\`\`\`ts
export async function loadConfig(path: string): Promise<Config> {
  const raw = JSON.parse(await readFile(path, 'utf8'));
  if (typeof raw.name !== 'string') throw new Error(\`bad config: \${path}\`);
  return { name: raw.name, retries: raw.retries ?? 3 };
}
\`\`\`

| Field | Before | After |
|---|---|---|
| \`retries\` | required | defaults to 3 |
| \`timeoutMs\` | — | optional |

> Note: see the [schema docs](https://example.com/schema) for details.`;

let key = 1;
const k = () => key++;

function tool(
  kind: ToolKind,
  title: string,
  status: ToolEntry['status'],
  more: Partial<ToolEntry> = {},
): ToolEntry {
  return {
    type: 'tool',
    key: k(),
    toolCallId: `call-${kind}-${key}`,
    title,
    kind,
    status,
    content: [],
    locations: [],
    rawInput: undefined,
    rawOutput: undefined,
    rejected: false,
    files: [],
    ...more,
  };
}

const termText =
  '$ npm test\r\n\r\n> acme@1.0.0 test\r\n> vitest run\r\n\r\n' +
  ' \x1b[32m✓\x1b[0m src/config.test.ts \x1b[2m(4 tests)\x1b[0m 12ms\r\n' +
  ' \x1b[32m✓\x1b[0m src/server.test.ts \x1b[2m(9 tests)\x1b[0m 48ms\r\n' +
  ' \x1b[31m✗\x1b[0m src/retry.test.ts > retries 3 times\r\n' +
  '   \x1b[31mAssertionError: expected 2 to be 3\x1b[0m\r\n\r\n' +
  ' \x1b[1mTest Files\x1b[0m  \x1b[31m1 failed\x1b[0m | \x1b[32m2 passed\x1b[0m (3)\r\n' +
  ' \x1b[1m     Tests\x1b[0m  \x1b[31m1 failed\x1b[0m | \x1b[32m13 passed\x1b[0m (14)\r\n';

export const terminals: Record<string, TerminalState> = {
  'term-1': {
    text: termText,
    dropped: 0,
    exitStatus: { exitCode: 1 },
    truncated: false,
    limit: 1 << 20,
  },
  'term-2': {
    text:
      Array.from({ length: 60 }, (_, i) => `line ${i + 1}: compiling crate_${i}`).join('\n') + '\n',
    dropped: 0,
    exitStatus: null,
    truncated: false,
    limit: 1 << 20,
  },
};

/** One of everything the thread shows. */
export function everyEntry(): SessionView {
  key = 1;
  const entries: Entry[] = [
    {
      type: 'user',
      key: k(),
      text: 'The config loader crashes on a missing name. Fix it and add a timeout option.',
      attachments: [
        { kind: 'file', name: 'config.ts', uri: `file://${FOLDER}/src/config.ts` },
        { kind: 'image', name: 'screenshot.png', uri: null },
        { kind: 'resource', name: 'notes.md', uri: 'file:///tmp/notes.md' },
      ],
    },
    {
      type: 'thought',
      key: k(),
      text: 'The user wants validation of the name field first.\nThen a default for retries, and a new timeout option.',
      messageId: null,
    },
    { type: 'agent', key: k(), text: agentText, messageId: null },
    tool('read', 'Read src/config.ts', 'completed', {
      locations: [{ path: `${FOLDER}/src/config.ts`, line: 12 }],
    }),
    tool('edit', 'Edit src/config.ts', 'completed', {
      locations: [{ path: `${FOLDER}/src/config.ts` }],
      content: [{ type: 'diff', ...diffSample }],
    }),
    { type: 'settled', key: k(), text: 'Permission for “npm test”: you chose “Allow once”.' },
    tool('execute', 'npm test', 'failed', {
      rawInput: { command: 'npm test', cwd: FOLDER },
      content: [{ type: 'terminal', terminalId: 'term-1' }],
    }),
    { type: 'file', key: k(), path: `${FOLDER}/src/config.ts`, created: false },
    { type: 'file', key: k(), path: `${FOLDER}/src/timeout.ts`, created: true },
    {
      type: 'notice',
      key: k(),
      severity: 'warning',
      title: 'File watching degraded',
      description: 'The OS limit of watches was reached; changes in 3 folders are not seen.',
    },
    {
      type: 'notice',
      key: k(),
      severity: 'info',
      title: 'Mode changed to “Code”',
      description: null,
    },
    {
      type: 'error',
      key: k(),
      message: 'fs/write_text_file refused: src/config.ts changed since the agent read it.',
    },
    { type: 'turn-end', key: k(), reason: 'completed', stopReason: 'end_turn' },
    { type: 'user', key: k(), text: 'Stop, that is enough.', attachments: [] },
    { type: 'turn-end', key: k(), reason: 'cancelled', stopReason: 'cancelled' },
    { type: 'turn-end', key: k(), reason: 'completed', stopReason: 'max_tokens' },
    { type: 'turn-end', key: k(), reason: 'completed', stopReason: 'refusal' },
    { type: 'turn-end', key: k(), reason: 'error', stopReason: null },
    { type: 'turn-end', key: k(), reason: 'watchdog-timeout', stopReason: null },
    { type: 'turn-end', key: k(), reason: 'max_turns', stopReason: 'max_turn_requests' },
  ];
  return emptyView(entries, terminals);
}

const png1x1 =
  'iVBORw0KGgoAAAANSUhEUgAAABgAAAAQCAYAAAAMJL+VAAAB2UlEQVR4nBXNoW6YQAAA0H7W1EyrOrOEpIaqYZZcMkNVzzQhqWFqJ5FIJBKJ20kk8iQSidge4un38Pjl779vVNQ0BFoiHT2JgZGJmYWVzMZO4eDk4uHxq4CKmoZAS6SjJzEwMjGzsJLZ2CkcnFxf7+BJQEVNQ6Al0tGTGBiZmFlYyWzsFA5Orqc7eBZQUdMQaIl09CQGRiZmFlYyGzuFg5Pr+Q6+C6ioaQi0RDp6EgMjEzMLK5mNncLByfX9Dl4EVNQ0BFoiHT2JgZGJmYWVzMZO4eDkermDVwEVNQ2BlkhHT2JgZGJmYSWzsVM4OLle7+CHgIqahkBLpKMnMTAyMbOwktnYKRycXD/u4KeAipqGQEukoycxMDIxs7CS2dgpHJxcP+/gl4CKmoZAS6SjJzEwMjGzsJLZ2CkcnFy/7uBNQEVNQ6Al0tGTGBiZmFlYyWzsFA5Orrc7eBdQUdMQaIl09CQGRiZmFlYyGzuFg5Pr/Q4+BFTUNARaIh09iYGRiZmFlczGTuHg5Pq4g08BFTUNgZZIR09iYGRiZmEls7FTODi5Pu/gt4CKmoZAS6SjJzEwMjGzsJLZ2CkcnFy/7+CPgIqahkBLpKMnMTAyMbOwktnYKRycXPwHRUYzvdyHQXoAAAAASUVORK5CYII=';

/** A card of every tool kind and status. */
export function everyTool(): SessionView {
  key = 1;
  const entries: Entry[] = [
    tool('read', 'Read package.json', 'completed', {
      locations: [{ path: `${FOLDER}/package.json`, line: 1 }],
    }),
    tool('edit', 'Edit src/server.ts', 'in_progress', {
      locations: [{ path: `${FOLDER}/src/server.ts`, line: 88 }],
    }),
    tool('delete', 'Delete build/', 'pending', { locations: [{ path: `${FOLDER}/build` }] }),
    tool('move', 'Move old.ts → new.ts', 'completed', {
      locations: [{ path: `${FOLDER}/src/old.ts` }, { path: `${FOLDER}/src/new.ts` }],
    }),
    tool('search', 'grep -rn "loadConfig" src', 'completed', {
      content: [
        { type: 'content', content: { type: 'text', text: 'Found **3** matches in `src/`.' } },
      ],
    }),
    tool('execute', 'Run cargo build', 'completed', {
      rawInput: { command: ['bash', '-lc', 'cargo build --release'], cwd: `${FOLDER}/crates/core` },
      rawOutput: {
        stdout: '   Compiling core v0.1.0\n    Finished release [optimized] target(s) in 4.2s',
        exit_code: 0,
      },
    }),
    tool('think', 'Planning the refactor', 'completed', {
      content: [
        {
          type: 'content',
          content: { type: 'text', text: 'Split the loader from the validator.' },
        },
      ],
    }),
    tool('fetch', 'Fetch https://example.com/schema.json', 'failed', {
      rawInput: { url: 'https://example.com/schema.json' },
      rawOutput: 'HTTP 404 Not Found',
    }),
    tool('switch_mode', 'Switch to Architect mode', 'completed'),
    tool('other', 'mcp__github__create_issue', 'completed', {
      rawInput: { title: 'Config loader crashes', labels: ['bug'] },
      content: [
        {
          type: 'content',
          content: {
            type: 'resource_link',
            name: 'issue-42',
            uri: 'https://github.com/acme/acme/issues/42',
            title: 'acme#42',
          },
        },
        { type: 'content', content: { type: 'image', mimeType: 'image/png', data: png1x1 } },
      ],
    }),
    tool('execute', 'cargo build (streaming)', 'in_progress', {
      rawInput: { command: 'cargo build', cwd: FOLDER },
      content: [{ type: 'terminal', terminalId: 'term-2' }],
    }),
  ];
  return emptyView(entries, terminals);
}

/** A long session: `n` entries, every tenth a tool call. */
export function bigView(n: number): SessionView {
  key = 1;
  const entries: Entry[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 10 === 5)
      entries.push(
        tool('read', `Read src/file_${i}.ts`, 'completed', {
          locations: [{ path: `${FOLDER}/src/file_${i}.ts`, line: i }],
        }),
      );
    else if (i % 10 === 0)
      entries.push({ type: 'user', key: k(), text: `Question ${i}`, attachments: [] });
    else
      entries.push({
        type: 'agent',
        key: k(),
        text: `Answer ${i}: some **Markdown** with \`code\`.\n\n- a\n- b`,
        messageId: null,
      });
  }
  return emptyView(entries, {});
}
