// Issue 13, "Words that match what happened", in the built UI: an old plan is not pinned over
// a later turn, sending always brings the thread to the bottom, tooltips go with their button,
// and the kind badge stays on one line beside a long command.
import { expect, test, type Page } from '@playwright/test';
import { join } from 'node:path';
import { countEntries, repo, sel, shot } from './hooks';
import { readTranscript, replay } from './mock-ipc.js';

const demo = (name: string): string => join(repo, 'tests/transcripts/demo', `${name}.jsonl`);

async function send(page: Page, text: string): Promise<void> {
  const composer = page.locator(sel.composer);
  await composer.fill(text);
  await composer.press('Enter');
}

/** How far the thread's scroller is above its bottom, in pixels. */
function aboveBottom(page: Page): Promise<number> {
  return page.evaluate((thread) => {
    const sc = document.querySelector<HTMLElement>(thread);
    return sc ? sc.scrollHeight - sc.scrollTop - sc.clientHeight : -1;
  }, sel.thread);
}

test('a plan from an earlier turn is not pinned over a later one; sending scrolls to it', async ({
  page,
}) => {
  // Three recorded turns: plan, edit, permission (which waits for the user: the turn runs).
  await replay(page, demo('multi-turn'), { at: 'prompt', answer: 'user' });
  await page.goto('/');
  await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'ready');
  await send(page, 'plan');
  await expect.poll(() => countEntries(page, 'turn-end')).toBe(1);
  await expect(page.locator(sel.plan)).toBeVisible();
  await send(page, 'edit');
  await expect.poll(() => countEntries(page, 'turn-end')).toBe(2);
  // The reader scrolls up, then the window is resized: the thread no longer follows.
  await page.locator(sel.thread).evaluate((sc) => (sc.scrollTop = 0));
  await page.setViewportSize({ width: 800, height: 600 });
  await expect.poll(() => aboveBottom(page)).toBeGreaterThan(100);
  await send(page, 'permission');
  await expect(page.locator(sel.dialog)).toBeVisible();
  // Sending brought the thread to the new prompt and it follows again.
  await expect.poll(() => aboveBottom(page)).toBeLessThan(4);
  await expect(page.getByRole('button', { name: 'Jump to latest' })).toHaveCount(0);
  // The turn runs (the request waits) and made no plan: turn 1's plan is not shown.
  await expect(page.locator('#stop')).toBeVisible();
  await expect(page.locator(sel.plan)).toHaveCount(0);
  await shot(page, 'words-no-stale-plan--window');
});

test('a prompt sent while following stays at the bottom to the end of its turn, through a resize', async ({
  page,
}) => {
  await page.setViewportSize({ width: 800, height: 600 });
  await replay(page, demo('multi-turn'), { at: 'prompt', answer: 'user' });
  await page.goto('/');
  await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'ready');
  await send(page, 'plan');
  await expect.poll(() => countEntries(page, 'turn-end')).toBe(1);
  await send(page, 'edit');
  await expect.poll(() => countEntries(page, 'turn-end')).toBe(2);
  await send(page, 'permission');
  const dialog = page.locator(sel.dialog);
  await expect(dialog).toBeVisible();
  await expect.poll(() => aboveBottom(page)).toBeLessThan(4);
  // Taller: the browser may lower scrollTop to the new end; that is no reader scrolling up.
  await page.setViewportSize({ width: 1100, height: 900 });
  await dialog.locator(sel.optionOfKind('allow_once')).click();
  // The rest of the turn arrives after the resize, and the thread follows it.
  await expect.poll(() => countEntries(page, 'turn-end')).toBe(3);
  await expect.poll(() => aboveBottom(page)).toBeLessThan(4);
  await expect(page.getByRole('button', { name: 'Jump to latest' })).toHaveCount(0);
});

test('a tooltip goes with its button', async ({ page }) => {
  await replay(page, demo('permission-pending'), { at: 'prompt' });
  await page.goto('/');
  const toggle = page.locator('.session-header .sidebar-toggle');
  await toggle.hover();
  const tooltip = page.locator('[role="tooltip"]');
  await expect(tooltip).toHaveText('Hide sessions');
  // Below the button, not over it.
  const [t, b] = [await tooltip.boundingBox(), await toggle.boundingBox()];
  expect(t && b && t.y >= b.y + b.height).toBe(true);
  await toggle.click();
  await expect(tooltip).toHaveCount(0);
  // The dialog closes under the pointer: nothing of it is left over the transcript.
  await send(page, 'permission');
  const dialog = page.locator(sel.dialog);
  const allow = dialog.locator(sel.optionOfKind('allow_once'));
  await allow.hover();
  await allow.click();
  await expect(dialog).toHaveCount(0);
  await expect(tooltip).toHaveCount(0);
});

test('the kind badge stays on one line beside a long command', async ({ page }) => {
  const ask = readTranscript(demo('permission-pending')).find((e) => e.kind === 'agent-prompt');
  if (!ask) throw new Error('no recorded agent-prompt');
  const command = `cargo test --workspace --all-features -- --nocapture ${'some_long_test_filter '.repeat(8)}`;
  const long = { ...ask, toolName: `Run \`${command}\``, rawInput: { command } };
  const events = readTranscript(demo('permission-pending')).map((e) =>
    e.kind === 'agent-prompt' ? long : e,
  );
  await page.setViewportSize({ width: 800, height: 600 });
  await replay(page, events);
  await page.goto('/');
  const badge = page.locator(`${sel.dialog} .tool-kind`);
  await expect(badge).toHaveText(/execute/i);
  const box = await badge.boundingBox();
  const lineHeight = await badge.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight));
  expect(box && box.height).toBeLessThan(lineHeight * 1.6);
  await shot(page.locator(sel.dialog), 'words-long-command--dialog');
});
