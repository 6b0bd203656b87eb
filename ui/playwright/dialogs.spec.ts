// The window's states and dialogs, driven through the mock: empty state, an error banner, the
// permission dialog (answered, rejected with feedback, dismissed, with more requests queued), a
// prompt typed in the composer, Stop, and a dead session. Each state is a screenshot.
import { expect, test } from '@playwright/test';
import { join } from 'node:path';
import { collectEntries, countEntries, repo, sel, shot } from './hooks';
import { calls, readTranscript, replay, replayed } from './mock-ipc.js';

const demo = (name: string): string => join(repo, 'tests/transcripts/demo', `${name}.jsonl`);

test('empty state: no folder yet', async ({ page }) => {
  await replay(page, [], { folder: null });
  await page.goto('/');
  await expect(page.getByRole('heading', { name: /Drop a folder here/ })).toBeVisible();
  await expect(page.locator('#agent-select')).toHaveValue('demo');
  await shot(page, 'state-empty--window');
  await page.getByRole('button', { name: 'Open Folder…' }).first().click();
  await expect.poll(async () => (await calls(page)).map((c) => c.cmd)).toContain('pick_folder');
  // The menu's choice arrives as an event and opens the folder.
  await page.evaluate(() =>
    (window as unknown as { __acpMock: { emit(n: string, p: unknown): void } }).__acpMock.emit(
      'folder-chosen',
      { path: '/home/demo/other' },
    ),
  );
  await expect
    .poll(async () => (await calls(page)).find((c) => c.cmd === 'open_session')?.args)
    .toEqual({ folder: '/home/demo/other', agent: 'demo' });
});

test('error banner: the agent cannot start', async ({ page }) => {
  await replay(page, [], {
    errors: { open_session: { code: 'agent-unavailable', message: 'gemini is not installed.' } },
  });
  await page.goto('/');
  const banner = page.locator('[role="alert"][data-code="agent-unavailable"]');
  await expect(banner).toContainText('gemini is not installed.');
  await shot(page, 'state-error-banner--window');
  await banner.getByRole('button', { name: 'Dismiss' }).click();
  await expect(banner).toHaveCount(0);
});

test('permission dialog: allow once', async ({ page }) => {
  const events = await replay(page, demo('permission-pending'));
  const ask = events.find((e) => e.kind === 'agent-prompt');
  await page.goto('/');
  const dialog = page.locator(sel.dialog);
  await expect(dialog).toBeVisible();
  await expect(dialog).toBeFocused();
  await shot(dialog, 'dialog-permission--open');
  await dialog.locator(sel.optionOfKind('allow_once')).click();
  await expect(dialog).toHaveCount(0);
  const answer = (await calls(page)).find((c) => c.cmd === 'respond_permission');
  const allow = (ask?.options as { optionId: string; kind: string }[]).find(
    (o) => o.kind === 'allow_once',
  );
  expect(answer?.args).toMatchObject({
    requestId: ask?.toolCallId,
    resolution: { optionId: allow?.optionId },
  });
  await expect.poll(() => countEntries(page, 'settled')).toBe(1);
  await expect(page.locator(sel.composer)).toBeFocused();
  await shot(page, 'dialog-permission--answered-window');
});

test('permission dialog: the recorded turn goes on once the user allows it', async ({ page }) => {
  const events = await replay(page, demo('permission'), { answer: 'user', pace: 2, batch: 3 });
  const tools = new Set(events.filter((e) => e.kind === 'tool-call').map((e) => e.toolCallId));
  await page.goto('/');
  const dialog = page.locator(sel.dialog);
  await expect(dialog).toBeVisible();
  // Held until answered: the turn does not end by itself.
  await page.waitForTimeout(300);
  expect(await countEntries(page, 'turn-end')).toBe(0);
  await dialog.locator(sel.optionOfKind('allow_once')).click();
  await expect.poll(() => replayed(page)).toBe(true);
  const kinds = async () => {
    const seen = await collectEntries(page);
    const of = (k: string) => seen.filter((e) => e.entry === k);
    return {
      turnEnds: of('turn-end').length,
      settled: of('settled').length,
      tools: of('tool').length,
      lastTool: of('tool').at(-1)?.status,
    };
  };
  await expect
    .poll(kinds)
    .toEqual({ turnEnds: 1, settled: 1, tools: tools.size, lastTool: 'completed' });
  await shot(page, 'dialog-permission--allowed-turn-done-window');
});

test('permission dialog: reject with feedback', async ({ page }) => {
  await replay(page, demo('permission-pending'));
  await page.goto('/');
  const dialog = page.locator(sel.dialog);
  await dialog.locator('textarea').fill('use cargo check instead');
  await shot(dialog, 'dialog-permission--feedback');
  await dialog.locator(sel.optionOfKind('reject_once')).click();
  await expect(dialog).toHaveCount(0);
  const answer = (await calls(page)).find((c) => c.cmd === 'respond_permission');
  expect(answer?.args.resolution).toMatchObject({ feedback: 'use cargo check instead' });
});

test('permission dialog: dismissed', async ({ page }) => {
  await replay(page, demo('permission-pending'));
  await page.goto('/');
  await page.locator(sel.dialog).getByRole('button', { name: 'Dismiss' }).click();
  const answer = (await calls(page)).find((c) => c.cmd === 'respond_permission');
  expect(answer?.args.resolution).toEqual({ cancelled: true });
});

test('permission dialog: more requests queued', async ({ page }) => {
  const events = readTranscript(demo('permission-pending'));
  const ask = events.find((e) => e.kind === 'agent-prompt');
  if (!ask) throw new Error('permission-pending.jsonl has no agent-prompt');
  // Hand-made: the same request twice more under other ids.
  const more = ['queued-1', 'queued-2'].map((id) => ({ ...ask, toolCallId: id }));
  await replay(page, [...events, ...more]);
  await page.goto('/');
  const dialog = page.locator(sel.dialog);
  // The first of three, the queue listed; answering it shows the next one.
  await expect(dialog.locator('[data-queue-position]')).toHaveText('1 of 3');
  await expect(dialog.getByRole('list', { name: 'Requests waiting' }).locator('li')).toHaveCount(3);
  await shot(dialog, 'dialog-permission--queued');
  await dialog.locator(sel.optionOfKind('allow_once')).click();
  await expect(dialog.locator('[data-queue-position]')).toHaveText('1 of 2');
  await expect(dialog.getByRole('list', { name: 'Requests waiting' }).locator('li')).toHaveCount(2);
});

test('composer: a prompt replays the next recorded turn', async ({ page }) => {
  await replay(page, demo('multi-turn'), { at: 'prompt', pace: 60, batch: 2 });
  await page.goto('/');
  await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'ready');
  await shot(page, 'state-ready--window');
  const composer = page.locator(sel.composer);
  await composer.fill('plan');
  await composer.press('Enter');
  await expect(page.locator('#stop')).toBeVisible();
  await shot(page, 'state-working--window');
  await expect.poll(() => countEntries(page, 'turn-end')).toBe(1);
  await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'ready');
  const prompt = (await calls(page)).find((c) => c.cmd === 'prompt');
  expect(JSON.stringify(prompt?.args)).toContain('plan');
  // Shift+Enter adds a line instead of sending.
  await composer.fill('edit');
  await composer.press('Shift+Enter');
  expect((await calls(page)).filter((c) => c.cmd === 'prompt')).toHaveLength(1);
  await composer.press('Enter');
  await expect.poll(() => countEntries(page, 'turn-end')).toBe(2);
  expect(await countEntries(page, 'tool')).toBeGreaterThan(0);
});

test('stop: a turn waiting on a permission is cancelled', async ({ page }) => {
  await replay(page, demo('permission-pending'), { at: 'prompt' });
  await page.goto('/');
  await page.locator(sel.composer).fill('permission');
  await page.locator(sel.composer).press('Enter');
  const dialog = page.locator(sel.dialog);
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Dismiss' }).click();
  await page.locator('#stop').click();
  await expect
    .poll(async () =>
      (await collectEntries(page)).filter((e) => e.entry === 'turn-end').map((e) => e.reason),
    )
    .toEqual(['cancelled']);
  expect((await calls(page)).map((c) => c.cmd)).toContain('cancel');
  await shot(page, 'state-cancelled--window');
});

test('a crashed agent: the session has ended', async ({ page }) => {
  await replay(page, demo('crash'));
  await page.goto('/');
  await expect.poll(() => replayed(page)).toBe(true);
  await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'dead');
  await expect(page.getByRole('button', { name: 'Start a new session' })).toBeVisible();
  await expect(page.locator(sel.composer)).toBeDisabled();
  await shot(page, 'state-dead--window');
});
