// The stable hooks the tests look for, what a transcript should show, how to read a virtualized
// thread, and screenshots.
//
// The thread (ui/src/components/Thread.svelte) is VIRTUALIZED (@tanstack/virtual-core): only the
// entries in or near the viewport are in the DOM, each in a `.item[data-index]` wrapper inside
// the scrolling `.thread-view > .scroller`. Counting `[data-entry]` over the page therefore says
// nothing about the thread: `collectEntries` scrolls the thread from top to bottom and notes
// every entry it sees (by its index), and `revealEntry` scrolls one into the DOM.
import { expect, type Locator, type Page, type TestType } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StreamEvent } from './mock-ipc.js';

export const repo = fileURLToPath(new URL('../..', import.meta.url));

export type EntryType =
  | 'user'
  | 'agent'
  | 'thought'
  | 'tool'
  | 'turn-end'
  | 'error'
  | 'notice'
  | 'settled'
  | 'file'
  | 'autonomous';

export const sel = {
  entry: (type: EntryType): string => `[data-entry="${type}"]`,
  toolCard: (id: string): string => `[data-tool-call-id="${cssString(id)}"]`,
  dialog: '[role="dialog"][data-permission]',
  option: '[data-option-kind]',
  optionOfKind: (kind: string): string => `[data-option-kind="${cssString(kind)}"]`,
  /** The thread's scrolling element (the virtualizer's scroll element). */
  thread: '.thread-view > .scroller',
  /** One virtualized row; `data-index` is the entry's index in the thread. */
  item: '.thread-view > .scroller .item[data-index]',
  composer: '#composer',
  /** The header's status badge (each sidebar item has a compact one too). */
  status: '.session-header .status[data-status]',
  sessionList: '[data-session-list]',
  plan: '[data-plan]',
  planEntry: '[data-plan] [data-plan-entry][data-status]',
  diff: '.diff-view',
  terminal: '[data-terminal-id]',
};

function cssString(s: string): string {
  return s.replace(/["\\]/g, '\\$&');
}

/** One thread entry as `collectEntries` saw it. */
export interface SeenEntry {
  index: number;
  /** `data-entry` of the row's entry element. */
  entry: string;
  toolCallId: string | null;
  status: string | null;
  kind: string | null;
  /** `data-reason` of a turn end. */
  reason: string | null;
  /** The row's text, whitespace collapsed. */
  text: string;
  /** What of it is rendered to be read (`innerText`: no hidden elements), whitespace collapsed. */
  visibleText: string;
}

/**
 * Every entry of the thread, in order: scrolls the thread's scroller from the top to the bottom
 * (half a screen at a time, two animation frames per step for the virtualizer to render) and
 * notes each row's hooks. Afterwards the scroller goes back to where it was (to the bottom if it
 * was there, so the thread keeps following the stream). A pass that skipped a row is done
 * again (up to five); throws if every pass did.
 */
export async function collectEntries(page: Page): Promise<SeenEntry[]> {
  return page.evaluate(
    async (s) => {
      const sc = document.querySelector<HTMLElement>(s.thread);
      if (!sc) return [];
      const frames = () =>
        new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
      const wasAtBottom = sc.scrollHeight - sc.scrollTop - sc.clientHeight <= 48;
      const startTop = sc.scrollTop;
      const seen = new Map<number, SeenEntry>();
      const grab = () => {
        for (const item of sc.querySelectorAll<HTMLElement>('.item[data-index]')) {
          const el = item.querySelector<HTMLElement>('[data-entry]');
          if (!el) continue;
          seen.set(Number(item.dataset.index), {
            index: Number(item.dataset.index),
            entry: el.dataset.entry ?? '',
            toolCallId: el.getAttribute('data-tool-call-id'),
            status: el.getAttribute('data-status'),
            kind: el.getAttribute('data-kind'),
            reason: el.getAttribute('data-reason'),
            text: (item.textContent ?? '').replace(/\s+/g, ' ').trim(),
            visibleText: item.innerText.replace(/\s+/g, ' ').trim(),
          });
        }
      };
      // One pass from the top to the end; false if a row was skipped (the thread followed the
      // stream to its end in the middle of the pass, before it noticed the reader's scroll).
      const pass = async (): Promise<boolean> => {
        seen.clear();
        sc.scrollTop = 0;
        await frames();
        for (let step = 0; step < 10_000; step++) {
          grab();
          const before = sc.scrollTop;
          sc.scrollTop = before + Math.max(40, Math.floor(sc.clientHeight / 2));
          await frames();
          if (sc.scrollTop <= before) {
            grab();
            break;
          }
        }
        return [...seen.keys()].sort((a, b) => a - b).every((index, i) => index === i);
      };
      let whole = false;
      for (let attempt = 0; attempt < 5 && !whole; attempt++) whole = await pass();
      sc.scrollTop = wasAtBottom ? sc.scrollHeight : startTop;
      await frames();
      if (wasAtBottom) sc.scrollTop = sc.scrollHeight;
      const list = [...seen.values()].sort((a, b) => a.index - b.index);
      list.forEach((e, i) => {
        if (e.index !== i) throw new Error(`collectEntries: row ${i} was never rendered`);
      });
      return list;
    },
    { thread: sel.thread },
  );
}

/** How many entries of each kind, and the tool cards in order. */
export interface Tally {
  counts: Record<string, number>;
  tools: { id: string | null; status: string | null; kind: string | null }[];
}

export function tally(entries: SeenEntry[]): Tally {
  const counts: Record<string, number> = {};
  for (const e of entries) counts[e.entry] = (counts[e.entry] ?? 0) + 1;
  return {
    counts,
    tools: entries
      .filter((e) => e.entry === 'tool')
      .map((e) => ({ id: e.toolCallId, status: e.status, kind: e.kind })),
  };
}

/** The number of thread entries of one kind (the whole thread, not just what is rendered). */
export async function countEntries(page: Page, type: EntryType): Promise<number> {
  return (await collectEntries(page)).filter((e) => e.entry === type).length;
}

/**
 * Scrolls the thread until an element matching `selector` (inside the thread) is rendered, then
 * scrolls it into view; the locator for it. A pass from the top that ends without it is done
 * again (up to three: the thread may have followed the stream back to its end before it noticed
 * the scroll); throws, saying where the scroller stood, if every pass did.
 */
export async function revealEntry(page: Page, selector: string): Promise<Locator> {
  const found = await page.evaluate(
    async ({ thread, selector }) => {
      const sc = document.querySelector<HTMLElement>(thread);
      if (!sc) return 'no thread';
      const frames = () =>
        new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
      const find = () => sc.querySelector<HTMLElement>(selector);
      for (let attempt = 0; attempt < 3 && !find(); attempt++) {
        sc.scrollTop = 0;
        await frames();
        for (let step = 0; step < 10_000 && !find(); step++) {
          const before = sc.scrollTop;
          sc.scrollTop = before + Math.max(40, Math.floor(sc.clientHeight / 2));
          await frames();
          if (sc.scrollTop <= before) break;
        }
      }
      const el = find();
      if (!el) {
        const rows = sc.querySelectorAll('.item[data-index]').length;
        return `scrollTop ${sc.scrollTop} of ${sc.scrollHeight - sc.clientHeight}, ${rows} rows rendered`;
      }
      el.scrollIntoView({ block: el.offsetHeight > sc.clientHeight ? 'start' : 'center' });
      await frames();
      return 'found';
    },
    { thread: sel.thread, selector },
  );
  if (found !== 'found')
    throw new Error(`revealEntry: nothing in the thread matches ${selector} (${found})`);
  return page.locator(sel.thread).locator(selector).first();
}

/** Scrolls the thread to its end (where it follows the stream). */
export async function threadToBottom(page: Page): Promise<void> {
  await page.evaluate(async (thread) => {
    const sc = document.querySelector<HTMLElement>(thread);
    if (!sc) return;
    for (let i = 0; i < 3; i++) {
      sc.scrollTop = sc.scrollHeight;
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    }
  }, sel.thread);
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

/**
 * What the window should show after `events`, read off the raw events by a model far simpler
 * than the UI's store (and independent of it): counts per kind, each tool call in order of first
 * appearance with the last status and kind its `tool-call` events carried, the requests never
 * settled, the last status and plan. It merges no content, so it
 * cannot share a merge bug with the store; the store's merge is held to the engine's in vitest.
 */
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
    // A change the engine names a call for shows under that call's card, not as an entry.
    files: events.filter(
      (e) =>
        e.kind === 'file-changed' && !(typeof e.toolCallId === 'string' && tools.has(e.toolCallId)),
    ).length,
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

/**
 * The header's `data-status` after the replay (lib/status.ts): `dead`; `waiting` while a
 * permission request is open; `working` while a turn runs; else the engine's status.
 */
export function headerStatus(want: Expected): string | null {
  if (!want.status) return null;
  if (want.status === 'dead') return 'dead';
  if (want.pending.length > 0) return 'waiting';
  if (want.status === 'prompting' || want.users > want.turnEnds) return 'working';
  return want.status;
}

export const screenshotDir = process.env.PW_SCREENSHOTS
  ? join(process.env.PW_SCREENSHOTS)
  : join(repo, 'test-results', 'screenshots');

/** The whole window (or one element) as screenshots/<name>.png. */
export async function shot(target: Page | Locator, name: string): Promise<string> {
  const path = join(screenshotDir, `${name.replace(/[^\w.-]+/g, '_')}.png`);
  mkdirSync(dirname(path), { recursive: true });
  await target.screenshot({ path, animations: 'disabled' });
  return path;
}

export function nameOf(path: string): string {
  return basename(path, '.jsonl');
}

/** Makes every test of the file fail when the page threw (a `pageerror`), whatever it checked. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function failOnPageErrors(test: TestType<any, any>): void {
  const pageErrors = new WeakMap<Page, Error[]>();
  test.beforeEach(({ page }: { page: Page }) => {
    const errors: Error[] = [];
    pageErrors.set(page, errors);
    page.on('pageerror', (e) => errors.push(e));
  });
  test.afterEach(({ page }: { page: Page }) => {
    expect(pageErrors.get(page)?.map((e) => e.message) ?? []).toEqual([]);
  });
}

/** Pushes more events into the mocked session (`window.__acpMock.frame`). */
export async function frame(page: Page, events: StreamEvent[]): Promise<void> {
  await page.evaluate(
    (evs) =>
      (window as unknown as { __acpMock: { frame(e: unknown[]): void } }).__acpMock.frame(evs),
    events,
  );
}

/** A demo agent session's start, as the engine reports it: starting, then ready. */
export function demoStart(sessionId: string): StreamEvent[] {
  return [
    { kind: 'session-status', sessionId, status: 'starting', agent: { launchName: 'demo' } },
    {
      kind: 'session-status',
      sessionId,
      status: 'ready',
      agent: {
        launchName: 'demo',
        name: 'acp-desk-demo-agent',
        title: 'ACP Desk demo agent',
        version: '0.1.0',
        acpSessionId: 'demo-session-1',
      },
    },
  ];
}
