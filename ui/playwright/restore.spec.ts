// The sidebar restored at the app's start, through the mock: each restored session shows its
// stored transcript before any agent starts, and its agent starts when the user returns to it
// (types in it, or shows it), its transcript kept above the new session's.
import { expect, test } from '@playwright/test';
import { join } from 'node:path';
import { repo, shot } from './hooks';
import { calls, readTranscript, replay, withoutClose } from './mock-ipc.js';

const stored = withoutClose(readTranscript(join(repo, 'tests/transcripts/demo/direct.jsonl')));
// What the new session's agent says when it starts: only that it is ready.
const live = stored.filter((e) => e.kind === 'session-status');

const restored = {
  sessions: [
    {
      sessionId: 's-demo-direct',
      folder: '/home/demo/ledger',
      agent: 'demo',
      draft: '',
      events: stored,
    },
    {
      sessionId: 's-never-sent',
      folder: '/home/demo/notes',
      agent: 'demo',
      draft: 'half a thought',
      events: [],
    },
  ],
  shown: 0,
  startAtOnce: false,
};

/** The agents started: sessions opened new or continued. */
const opened = async (page: import('@playwright/test').Page) =>
  (await calls(page)).filter((c) => c.cmd === 'open_session' || c.cmd === 'continue_session');

test('restored sessions show their transcript before any agent starts', async ({ page }) => {
  await replay(page, live, { folder: null, sessionId: 'eng-new', registryId: 's1', restored });
  await page.goto('/');
  const items = page.locator('[data-session-list] li');
  await expect(items).toHaveCount(2);
  await expect(items.nth(0)).toHaveAttribute('data-status', 'stored');
  await expect(items.nth(0)).toHaveClass(/active/);
  await expect(page.locator('.session-header .status')).toHaveAttribute('data-status', 'stored');
  // The stored turn, from the history: the user's prompt and the agent's answer.
  await expect(page.locator('[data-entry="user"]').first()).toBeVisible();
  await expect(page.locator('[data-entry="agent"]').first()).toBeVisible();
  await expect(page.locator('[data-entry="turn-end"]').first()).toBeVisible();
  await shot(page, 'restored-before-return--window');
  // Shown, not started: no agent was asked for.
  expect(await opened(page)).toEqual([]);
  // The second one's draft is back in its composer when it is shown, which starts its agent.
  await items.nth(1).locator('.session-select').click();
  await expect(page.locator('#composer')).toHaveValue('half a thought');
  await expect
    .poll(async () => (await opened(page)).map((c) => [c.cmd, c.args]))
    .toEqual([['continue_session', { sessionId: 's-never-sent' }]]);
});

test('typing in a restored session continues it, the stored transcript kept', async ({ page }) => {
  // Continued: the engine's events carry the stored id.
  await replay(page, live, {
    folder: null,
    sessionId: 's-demo-direct',
    registryId: 's1',
    restored,
  });
  await page.goto('/');
  await expect(page.locator('[data-entry="agent"]').first()).toBeVisible();
  const agentText = await page.locator('[data-entry="agent"]').first().textContent();
  expect(await opened(page)).toEqual([]);
  await page.locator('#composer').pressSequentially('and now');
  await expect
    .poll(async () => (await opened(page)).map((c) => [c.cmd, c.args]))
    .toEqual([['continue_session', { sessionId: 's-demo-direct' }]]);
  await expect(page.locator('.session-header .status')).toHaveAttribute('data-status', 'ready');
  // The stored answer stays above what comes next.
  await expect(page.locator('[data-entry="agent"]').first()).toHaveText(agentText ?? '');
  await expect(page.locator('#composer')).toHaveValue('and now');
  // The sidebar is saved with the new session in the restored one's place.
  await expect
    .poll(async () => (await calls(page)).filter((c) => c.cmd === 'set_open_sessions').at(-1)?.args)
    .toEqual({
      sessions: [
        { sessionId: 's-demo-direct', folder: '/home/demo/ledger', agent: 'demo' },
        { sessionId: 's-never-sent', folder: '/home/demo/notes', agent: 'demo' },
      ],
      shown: 0,
    });
  await shot(page, 'restored-after-return--window');
});

test('a restored session whose folder is gone says so and can be removed', async ({ page }) => {
  const gone = structuredClone(restored);
  const [first] = gone.sessions;
  if (first)
    Object.assign(first, {
      folderProblem:
        'The folder /home/demo/ledger is gone (moved or deleted?): this session cannot continue there. Its transcript is still in the history.',
    });
  await replay(page, live, {
    folder: null,
    sessionId: 'eng-new',
    registryId: 's1',
    restored: gone,
  });
  await page.goto('/');
  const card = page.locator('[data-folder-gone]');
  await expect(card).toContainText('/home/demo/ledger is gone');
  await expect(page.locator('#composer')).toBeDisabled();
  await expect(page.locator('[data-entry="agent"]').first()).toBeVisible();
  await shot(page, 'restored-folder-gone--window');
  await card.getByRole('button', { name: 'Remove from sidebar' }).click();
  await expect(page.locator('[data-session-list] li')).toHaveCount(1);
  // The one shown now was not returned to: its agent waits.
  expect(await opened(page)).toEqual([]);
});
