// The stable hooks of the conversation UI that the other specs, the bench and the e2e tests rely
// on, asked for by their literal selectors (not through hooks.ts's `sel`), so that a renamed hook
// fails here by name. The thread is virtualized: entries are counted by scrolling it through.
import { expect, test, type Page } from '@playwright/test';
import { join } from 'node:path';
import { collectEntries, expected, repo, revealEntry, shot } from './hooks';
import { calls, replay, replayed, type StreamEvent } from './mock-ipc.js';

const demo = (name: string): string => join(repo, 'tests/transcripts/demo', `${name}.jsonl`);

async function open(page: Page, transcript: string | StreamEvent[]): Promise<StreamEvent[]> {
  const events = await replay(page, transcript);
  await page.goto('/');
  await expect.poll(() => replayed(page)).toBe(true);
  return events;
}

test('hooks: thread entries carry data-entry', async ({ page }) => {
  const events = await open(page, demo('multi-turn'));
  const want = expected(events);
  const seen = await collectEntries(page);
  const count = (k: string) => seen.filter((e) => e.entry === k).length;
  expect(count('user')).toBe(want.users);
  expect(count('turn-end')).toBe(want.turnEnds);
  expect(count('agent')).toBeGreaterThan(0);
  expect(count('thought')).toBeGreaterThan(0);
  expect(count('settled')).toBe(1);
  expect(count('tool')).toBe(want.tools.length);
  // Every rendered row carries one.
  const rows = page.locator('.thread-view .item[data-index]');
  await expect(rows.first()).toBeVisible();
  for (const row of await rows.all()) await expect(row.locator('[data-entry]')).toHaveCount(1);
  await expect(await revealEntry(page, '[data-entry="agent"]')).toBeVisible();
  await revealEntry(page, '[data-entry="thought"]');
});

test('hooks: tool cards: data-tool-call-id, data-status, data-kind; an edit shows a .diff-view', async ({
  page,
}) => {
  const want = expected(await open(page, demo('edit')));
  const seen = await collectEntries(page);
  expect(seen.filter((e) => e.entry === 'tool').map((e) => e.toolCallId)).toEqual(
    want.tools.map((t) => t.id),
  );
  for (const tool of want.tools) {
    const card = await revealEntry(page, `[data-tool-call-id="${tool.id}"]`);
    await expect(page.locator(`[data-tool-call-id="${tool.id}"]`)).toHaveCount(1);
    await expect(card).toHaveAttribute('data-status', tool.status);
    if (tool.kind) await expect(card).toHaveAttribute('data-kind', tool.kind);
  }
  const edit = want.tools.find((t) => t.kind === 'edit');
  await revealEntry(page, `[data-tool-call-id="${edit?.id}"]`);
  const diff = page.locator(`[data-tool-call-id="${edit?.id}"] .diff-view`);
  await expect(diff).toBeVisible();
  await shot(diff, 'hooks-diff-view');
});

test('hooks: a terminal tool call shows [data-terminal-id] with its output', async ({ page }) => {
  const events = await open(page, demo('terminal'));
  const ids = new Set(
    events.filter((e) => e.kind === 'terminal-output').map((e) => String(e.terminalId)),
  );
  // Each terminal, scrolled into the DOM, with its output.
  for (const id of ids) {
    const terminal = await revealEntry(page, `[data-terminal-id="${id}"]`);
    await expect(terminal).toHaveCount(1);
    const out = events
      .filter((e) => e.kind === 'terminal-output' && e.terminalId === id)
      .map((e) => String(e.data ?? ''))
      .join('');
    // Its last line at least (xterm shows the end of the output).
    const line = out
      .split(/\r?\n/)
      .filter((l) => /\w{3}/.test(l))
      .at(-1);
    if (line) await expect(terminal).toContainText(line.trim());
    await shot(terminal, `hooks-terminal-${id}`);
  }
});

test('hooks: the plan panel: [data-plan] with [data-plan-entry][data-status]', async ({ page }) => {
  const events = await open(page, demo('plan'));
  const last = [...events].reverse().find((e) => e.kind === 'plan');
  const entries = (last?.entries ?? []) as { status: string; priority: string }[];
  // The turn is over: the panel is folded to its summary until opened.
  const plan = page.locator('[data-plan]');
  await expect(plan).toHaveAttribute('data-expanded', 'false');
  await plan.getByRole('button', { expanded: false }).click();
  await expect(plan).toHaveAttribute('data-expanded', 'true');
  const shown = page.locator('[data-plan] [data-plan-entry][data-status]');
  await expect(shown).toHaveCount(entries.length);
  for (const [i, e] of entries.entries()) {
    await expect(shown.nth(i)).toHaveAttribute('data-status', e.status);
    await expect(shown.nth(i)).toHaveAttribute('data-priority', e.priority);
  }
  await shot(page.locator('[data-plan]'), 'hooks-plan');
});

test('hooks: the permission dialog: [role=dialog][data-permission] with [data-option-kind]', async ({
  page,
}) => {
  const events = await open(page, demo('permission-pending'));
  const ask = events.find((e) => e.kind === 'agent-prompt');
  const dialog = page.locator('[role="dialog"][data-permission]');
  await expect(dialog).toBeVisible();
  const kinds = (ask?.options as { kind: string }[]).map((o) => o.kind);
  await expect(dialog.locator('[data-option-kind]')).toHaveCount(kinds.length);
  for (const kind of kinds)
    await expect(dialog.locator(`[data-option-kind="${kind}"]`)).toHaveCount(1);
});

test('hooks: the window: #composer textarea, .status[data-status], [data-session-list]', async ({
  page,
}) => {
  await open(page, demo('tour'));
  await expect(page.locator('textarea#composer')).toBeVisible();
  await expect(page.locator('.session-header .status[data-status]')).toHaveAttribute(
    'data-status',
    'ready',
  );
  // The session list's entry has its own (compact) badge.
  await expect(page.locator('[data-session-list] .status[data-status]')).toHaveAttribute(
    'data-status',
    'ready',
  );
  await expect(page.locator('[data-session-list]')).toBeVisible();
});

test('hooks: a web link in agent Markdown opens through open_url, never in the window', async ({
  page,
}) => {
  const sid = 'links';
  await open(page, [
    { kind: 'session-status', sessionId: sid, status: 'ready' },
    { kind: 'turn-start', sessionId: sid, prompt: [{ type: 'text', text: 'links' }] },
    { kind: 'text-delta', sessionId: sid, text: 'See [the docs](https://example.com/a).' },
    { kind: 'turn-end', sessionId: sid, reason: 'completed', stopReason: 'end_turn' },
  ]);
  const start = page.url();
  await page.getByRole('link', { name: 'the docs' }).click();
  await expect
    .poll(async () => (await calls(page)).find((c) => c.cmd === 'open_url')?.args)
    .toEqual({ url: 'https://example.com/a' });
  expect(page.url()).toBe(start);
});

test('hooks: the thread is virtualized, and collectEntries still sees every entry', async ({
  page,
}) => {
  const sid = 'long';
  const events: StreamEvent[] = [{ kind: 'session-status', sessionId: sid, status: 'ready' }];
  for (let t = 0; t < 100; t++) {
    events.push(
      { kind: 'turn-start', sessionId: sid, prompt: [{ type: 'text', text: `question ${t}` }] },
      { kind: 'text-delta', sessionId: sid, text: `Answer number ${t}.\n\nA second paragraph.` },
      { kind: 'turn-end', sessionId: sid, reason: 'completed', stopReason: 'end_turn' },
    );
  }
  await open(page, events);
  // Far fewer rows in the DOM than entries in the thread...
  const rows = await page.locator('.thread-view .item[data-index]').count();
  expect(rows).toBeGreaterThan(0);
  expect(rows).toBeLessThan(100);
  // ...and the thread opens at its end.
  await expect(page.getByText('Answer number 99.')).toBeVisible();
  const seen = await collectEntries(page);
  expect(seen).toHaveLength(300);
  expect(seen.filter((e) => e.entry === 'user').map((e) => e.text)).toEqual(
    Array.from({ length: 100 }, (_, t) => `question ${t}`),
  );
  // Back at the end afterwards, still following.
  await expect(page.getByText('Answer number 99.')).toBeVisible();
});
