// The stable hooks the tests look for, what a transcript should show, and screenshots.
//
// The conversation-UI rewrite adds `data-*` hooks (data-entry, data-tool-call-id, data-kind,
// data-permission, data-option-kind, ...). Until it lands, the helpers here also accept what the
// current UI renders (`.entry.<type>`, `.permission-dialog`, `button[data-kind]`): set
// PW_LEGACY_HOOKS=0 to accept the new hooks only. hooks.spec.ts always asks for the new ones.
import type { Locator, Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StreamEvent } from './mock-ipc.js';

export const repo = fileURLToPath(new URL('../..', import.meta.url));
export const legacy = process.env.PW_LEGACY_HOOKS !== '0';

export type EntryType =
  'user' | 'agent' | 'thought' | 'tool' | 'turn-end' | 'error' | 'notice' | 'settled' | 'file';

const or = (now: string, before: string): string => (legacy ? `${now}, ${before}` : now);

export const sel = {
  entry: (type: EntryType): string => or(`[data-entry="${type}"]`, `.thread .entry.${type}`),
  toolCard: (id: string): string => `[data-tool-call-id="${CSS_escape(id)}"]`,
  dialog: or('[role="dialog"][data-permission]', '[role="dialog"].permission-dialog'),
  option: or('[data-option-kind]', 'button[data-kind]:not([data-kind="cancelled"])'),
  optionOfKind: (kind: string): string =>
    or(`[data-option-kind="${kind}"]`, `button[data-kind="${kind}"]`),
  thread: or('[data-thread]', '.thread'),
  composer: '#composer',
  status: '.status[data-status]',
  sessionList: '[data-session-list]',
  plan: '[data-plan]',
  planEntry: '[data-plan] [data-plan-entry][data-status]',
  diff: '.diff-view',
  terminal: '[data-terminal-id]',
};

function CSS_escape(s: string): string {
  return s.replace(/["\\]/g, '\\$&');
}

/** What a transcript, fully replayed, should leave on screen. */
export interface Expected {
  users: number;
  agentText: string | null;
  /** Tool calls in order of first appearance, with their last status. */
  tools: { id: string; status: string; kind: string | null }[];
  turnEnds: number;
  errors: number;
  notices: number;
  files: number;
  /** agent-prompts never settled (and the session not dead): the dialog stays. */
  pending: { toolCallId: string; options: number }[];
  status: string | null;
  planEntries: number;
}

export function expected(events: StreamEvent[]): Expected {
  const tools = new Map<string, { id: string; status: string; kind: string | null }>();
  const pending = new Map<string, number>();
  let status: string | null = null;
  let agentText = '';
  let agentTextDone = false;
  let planEntries = 0;
  const count = (kind: string): number => events.filter((e) => e.kind === kind).length;
  for (const e of events) {
    // The first agent message only: the next message is a separate entry.
    if (e.kind !== 'text-delta' && agentText !== '') agentTextDone = true;
    switch (e.kind) {
      case 'text-delta':
        if (!agentTextDone) agentText += String(e.text ?? '');
        break;
      case 'tool-call': {
        const id = String(e.toolCallId);
        const was = tools.get(id);
        tools.set(id, {
          id,
          status: String(e.status ?? was?.status ?? 'pending'),
          kind: (e.toolKind as string | null | undefined) ?? was?.kind ?? null,
        });
        break;
      }
      case 'tool-result': {
        const was = tools.get(String(e.toolCallId));
        if (was && was.status !== 'failed') was.status = e.isError ? 'failed' : 'completed';
        break;
      }
      case 'agent-prompt':
        pending.set(String(e.toolCallId), (e.options as unknown[]).length);
        break;
      case 'agent-prompt-settled':
        pending.delete(String(e.toolCallId));
        break;
      case 'session-status':
        status = String(e.status);
        if (status === 'dead') pending.clear();
        break;
      case 'plan':
        planEntries = (e.entries as unknown[]).length;
        break;
    }
  }
  return {
    users: count('turn-start'),
    agentText: plainFragment(agentText),
    tools: [...tools.values()],
    turnEnds: count('turn-end'),
    errors: count('error'),
    notices: count('notice'),
    files: count('file-changed'),
    pending: [...pending].map(([toolCallId, options]) => ({ toolCallId, options })),
    status,
    planEntries,
  };
}

/** A piece of the agent's text that survives Markdown rendering (a run of plain words). */
function plainFragment(text: string): string | null {
  for (const line of text.split('\n')) {
    const m = /[A-Za-z][A-Za-z ,.']{19,}/.exec(line.replace(/^[#>*\-\d. ]+/, ''));
    if (m && !/[*_`[\]]/.test(line.slice(0, (m.index ?? 0) + m[0].length))) {
      return m[0].slice(0, 24);
    }
  }
  return null;
}

export const screenshotDir = process.env.PW_SCREENSHOTS
  ? join(process.env.PW_SCREENSHOTS)
  : join(repo, 'test-results', 'screenshots');

/** The whole window (or one element) as screenshots/<name>.png. */
export async function shot(target: Page | Locator, name: string): Promise<void> {
  const path = join(screenshotDir, `${name.replace(/[^\w.-]+/g, '_')}.png`);
  mkdirSync(dirname(path), { recursive: true });
  await target.screenshot({ path, animations: 'disabled' });
}

export function nameOf(path: string): string {
  return basename(path, '.jsonl');
}
