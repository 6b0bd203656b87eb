// A dead session's card and the buttons that come with an error's kind, in the built UI: the
// recorded crash of the demo agent says why (exit code 3, its stderr lines, folded) and offers
// Reconnect, which continues the same session (the thread kept, the composer usable again); a
// rate limit offers Retry with the same prompt. Screenshots at 800x600:
// screenshots/errors-dead-800x600.png, errors-retry-800x600.png.
import { expect, test } from '@playwright/test';
import { join } from 'node:path';
import { repo, sel, shot } from './hooks';
import { calls, readTranscript, replay, replayed, type StreamEvent } from './mock-ipc.js';

const crash = join(repo, 'tests/transcripts/demo/crash.jsonl');

const agent = {
  launchName: 'demo',
  name: 'acp-desk-demo-agent',
  title: 'ACP Desk demo agent',
  acpSessionId: 'demo-session-1',
};
const status = (s: string): StreamEvent => ({ kind: 'session-status', status: s, agent });

test.use({ viewport: { width: 800, height: 600 } });

test('a crashed agent: why, its stderr, and Reconnect in place', async ({ page }) => {
  await replay(page, crash, {
    reconnect: [
      { kind: 'session-status', status: 'starting', agent: { launchName: 'demo' } },
      {
        kind: 'session-continued',
        mode: 'continue',
        outcome: 'new',
        acpSessionId: 'demo-session-2',
        detail: 'the agent offers neither session/resume nor session/load',
      },
      status('ready'),
    ],
  });
  await page.goto('/');
  await expect.poll(() => replayed(page)).toBe(true);
  const card = page.locator('[data-dead]');
  await expect(card).toHaveAttribute('data-kind', 'agent-exited');
  await expect(card.locator('strong')).toHaveText('The agent exited.');
  await expect(card).toContainText('The agent exited with code 3 during the turn.');
  await expect(card).toHaveAttribute('data-exit-code', '3');
  const stderr = card.locator('details[data-stderr]');
  await expect(stderr).not.toHaveAttribute('open', '');
  await expect(stderr.locator('summary')).toHaveText(/^Its last \d+ lines of error output$/);
  await expect(stderr.locator('pre')).toBeHidden();
  await stderr.locator('summary').click();
  await expect(stderr.locator('pre')).toBeVisible();
  const recorded = readTranscript(crash).find((e) => e.kind === 'error') as unknown as {
    error: { exit: { stderrTail: string[] } };
  };
  await expect(stderr.locator('pre')).toHaveText(recorded.error.exit.stderrTail.join('\n'));
  await expect(page.locator(sel.composer)).toBeDisabled();
  await shot(page, 'errors-dead-800x600');

  await card.getByRole('button', { name: 'Reconnect' }).click();
  await expect
    .poll(async () => (await calls(page)).filter((c) => c.cmd === 'reconnect_session'))
    .toHaveLength(1);
  expect((await calls(page)).filter((c) => c.cmd === 'open_session')).toHaveLength(1);
  await expect(card).toHaveCount(0);
  await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'ready');
  await expect(page.locator(sel.composer)).toBeEnabled();
  // The thread is the same one: the crash's words are still there.
  await expect(page.getByText("I'm going to crash now", { exact: false })).toBeVisible();
  await shot(page, 'errors-reconnected-800x600');
});

test('a rate limit offers Retry, which sends the same prompt again', async ({ page }) => {
  const events: StreamEvent[] = [
    status('ready'),
    { kind: 'turn-start', prompt: [{ type: 'text', text: 'fix the failing test in ledger.rs' }] },
    status('prompting'),
    {
      kind: 'error',
      error: {
        code: -32603,
        message: 'Internal error: API Error: Rate limit reached',
        kind: 'rate-limit',
      },
    },
    { kind: 'turn-end', reason: 'error' },
    status('ready'),
  ];
  await replay(page, events);
  await page.goto('/');
  await expect.poll(() => replayed(page)).toBe(true);
  const entry = page.locator('[data-entry="error"][data-kind="rate-limit"]');
  await expect(entry).toContainText('Rate limit reached');
  const retry = entry.getByRole('button', { name: 'Retry' });
  await expect(retry).toBeVisible();
  await shot(page, 'errors-retry-800x600');
  await retry.click();
  await expect
    .poll(async () => (await calls(page)).find((c) => c.cmd === 'prompt')?.args.parts)
    .toEqual([{ type: 'text', text: 'fix the failing test in ledger.rs' }]);
});
