// The stable hooks of the conversation UI (being added by the component rewrite), asked for
// strictly, without the fallbacks of hooks.ts. Against the UI before the rewrite most of these
// fail: that is expected until the rewrite merges (docs/PERFORMANCE.md and the handover list them).
import { expect, test, type Page } from '@playwright/test';
import { join } from 'node:path';
import { expected, repo, shot } from './hooks';
import { calls, replay, replayed, type StreamEvent } from './mock-ipc.js';

const demo = (name: string): string => join(repo, 'tests/transcripts/demo', `${name}.jsonl`);

async function open(page: Page, transcript: string | StreamEvent[]): Promise<StreamEvent[]> {
  const events = await replay(page, transcript);
  await page.goto('/');
  await expect.poll(() => replayed(page)).toBe(true);
  return events;
}

test('@hooks thread entries carry data-entry', async ({ page }) => {
  const events = await open(page, demo('multi-turn'));
  const want = expected(events);
  await expect(page.locator('[data-entry="user"]')).toHaveCount(want.users);
  await expect(page.locator('[data-entry="turn-end"]')).toHaveCount(want.turnEnds);
  await expect(page.locator('[data-entry="agent"]').first()).toBeVisible();
  await expect(page.locator('[data-entry="thought"]').first()).toBeAttached();
  await expect(page.locator('[data-entry="settled"]')).toHaveCount(1);
  await expect(page.locator('[data-entry="tool"]')).toHaveCount(want.tools.length);
});

test('@hooks tool cards: data-tool-call-id, data-status, data-kind; an edit shows a .diff-view', async ({
  page,
}) => {
  const want = expected(await open(page, demo('edit')));
  for (const tool of want.tools) {
    const card = page.locator(`[data-tool-call-id="${tool.id}"]`);
    await expect(card).toHaveCount(1);
    await expect(card).toHaveAttribute('data-status', tool.status);
    if (tool.kind) await expect(card).toHaveAttribute('data-kind', tool.kind);
  }
  const edit = want.tools.find((t) => t.kind === 'edit');
  const diff = page.locator(`[data-tool-call-id="${edit?.id}"] .diff-view`);
  await expect(diff).toBeVisible();
  await shot(diff, 'hooks-diff-view');
});

test('@hooks a terminal tool call shows [data-terminal-id] with its output', async ({ page }) => {
  const events = await open(page, demo('terminal'));
  const ids = new Set(
    events.filter((e) => e.kind === 'terminal-output').map((e) => String(e.terminalId)),
  );
  const terminals = page.locator('[data-terminal-id]');
  await expect(terminals).toHaveCount(ids.size);
  await shot(terminals.first(), 'hooks-terminal');
});

test('@hooks the plan panel: [data-plan] with [data-plan-entry][data-status]', async ({ page }) => {
  const events = await open(page, demo('plan'));
  const last = [...events].reverse().find((e) => e.kind === 'plan');
  const entries = (last?.entries ?? []) as { status: string }[];
  const shown = page.locator('[data-plan] [data-plan-entry][data-status]');
  await expect(shown).toHaveCount(entries.length);
  for (const [i, e] of entries.entries()) {
    await expect(shown.nth(i)).toHaveAttribute('data-status', e.status);
  }
  await shot(page.locator('[data-plan]'), 'hooks-plan');
});

test('@hooks the permission dialog: [role=dialog][data-permission] with [data-option-kind]', async ({
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

test('@hooks the window: #composer textarea, .status[data-status], [data-session-list]', async ({
  page,
}) => {
  await open(page, demo('tour'));
  await expect(page.locator('textarea#composer')).toBeVisible();
  await expect(page.locator('.status[data-status]')).toHaveAttribute('data-status', 'ready');
  await expect(page.locator('[data-session-list]')).toBeVisible();
});

test('@hooks a web link in agent Markdown opens through open_url, never in the window', async ({
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
