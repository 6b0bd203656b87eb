// Background tasks (`background-task`, issue 19) through the mock: the header's chip counts the
// running ones, its list says each task's name, description, kind, status, output file and
// summary; Stop (where the agent allows it) calls `background_task_stop` and the task settles;
// a refusal is said beside the task; tasks ACP Desk settled because the session ended say so;
// and a cycle the agent started on its own (`usage_update` origin `task-notification`) is
// marked in the thread as not a reply to the user. Screenshots at 800x600 and 1280x800.
import { expect, test, type Page } from '@playwright/test';
import { collectEntries, demoStart, failOnPageErrors, frame, sel, shot } from './hooks';
import { fileURLToPath } from 'node:url';
import { calls, readTranscript, replay, type StreamEvent } from './mock-ipc.js';

const SID = 's-tasks';
const start = demoStart(SID);

const build = {
  taskId: 'task-1',
  name: 'cargo build --release',
  description: 'Builds the release binaries',
  taskKind: 'shell',
  status: 'running',
  outputFile: '/tmp/claude/tasks/task-1.output',
  canStop: true,
};
const watcher = {
  taskId: 'task-2',
  name: 'Watch the test suite',
  description: 'Re-runs the tests on every change',
  taskKind: 'agent',
  status: 'running',
  canStop: false,
};
const lint = {
  taskId: 'task-3',
  name: 'npm run lint',
  taskKind: 'shell',
  status: 'completed',
  summary: 'No problems found in 214 files.',
  outputFile: '/tmp/claude/tasks/task-3.output',
};

const task = (phase: string, t: Record<string, unknown>): StreamEvent => ({
  kind: 'background-task',
  sessionId: SID,
  phase,
  task: t,
});

const turn: StreamEvent[] = [
  { kind: 'turn-start', sessionId: SID, prompt: [{ type: 'text', text: 'background task' }] },
  {
    kind: 'text-delta',
    sessionId: SID,
    text: 'I started the build and a test watcher in the background.',
    messageId: 'm1',
  },
  task('started', build),
  task('started', watcher),
  task('started', { ...lint, status: 'running', summary: undefined }),
  task('settled', lint),
  { kind: 'turn-end', sessionId: SID, reason: 'completed', stopReason: 'end_turn' },
];

async function open(
  page: Page,
  events: StreamEvent[],
  size = { width: 1280, height: 800 },
  options: Parameters<typeof replay>[2] = {},
) {
  await page.setViewportSize(size);
  await replay(page, [...start, ...events], options);
  await page.goto('/');
}

const chip = (page: Page) => page.locator('.session-header .tasks .chip-button');
const item = (page: Page, id: string) => page.locator(`#tasks-popover [data-task="${id}"]`);

// Nothing the page runs may throw (a dialog going away while its queue empties, say).
failOnPageErrors(test);

for (const size of [
  { width: 1280, height: 800 },
  { width: 800, height: 600 },
]) {
  test(`the chip counts running tasks; the list says what each is (${size.width}x${size.height})`, async ({
    page,
  }) => {
    await open(page, turn, size);
    await expect(chip(page)).toHaveText('2 running');
    await chip(page).click();
    const list = page.locator('#tasks-popover');
    await expect(list).toBeVisible();
    await expect(list.locator('[data-task]')).toHaveCount(3);
    await expect(item(page, 'task-1')).toContainText('cargo build --release');
    await expect(item(page, 'task-1')).toContainText('Builds the release binaries');
    await expect(item(page, 'task-1').locator('.task-kind')).toHaveText('shell');
    await expect(item(page, 'task-1').locator('.task-status')).toHaveText('running');
    await expect(item(page, 'task-1').locator('.task-file')).toHaveText(
      '/tmp/claude/tasks/task-1.output',
    );
    await expect(item(page, 'task-3').locator('.task-status')).toHaveText('completed');
    await expect(item(page, 'task-3')).toContainText('No problems found in 214 files.');
    // Stop only where the agent said it can be stopped, and only while it runs.
    await expect(item(page, 'task-1').getByRole('button', { name: 'Stop' })).toBeVisible();
    await expect(item(page, 'task-2').getByRole('button')).toHaveCount(0);
    await expect(item(page, 'task-3').getByRole('button')).toHaveCount(0);
    // The list is inside the window.
    const box = await list.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= size.width).toBe(true);
    await shot(page, `background-tasks-list-${size.width}x${size.height}`);
  });
}

test('Stop asks the agent, and the task settles as stopped', async ({ page }) => {
  await open(page, turn);
  await chip(page).click();
  await item(page, 'task-1').getByRole('button', { name: 'Stop' }).click();
  await expect
    .poll(async () =>
      (await calls(page)).filter((c) => c.cmd === 'background_task_stop').map((c) => c.args),
    )
    .toEqual([{ session: SID, taskId: 'task-1' }]);
  await expect(item(page, 'task-1').locator('.task-status')).toHaveText('stopped');
  await expect(item(page, 'task-1').getByRole('button')).toHaveCount(0);
  await expect(chip(page)).toHaveText('1 running');
});

test('a refused Stop is said beside the task', async ({ page }) => {
  await open(page, turn, undefined, {
    errors: {
      background_task_stop: {
        code: 'task-not-stoppable',
        message: 'the background task `task-1` cannot be stopped: it has ended',
      },
    },
  });
  await chip(page).click();
  await item(page, 'task-1').getByRole('button', { name: 'Stop' }).click();
  await expect(item(page, 'task-1').locator('[data-stop-error]')).toHaveText(
    'The background task task-1 cannot be stopped: it has ended.',
  );
  await expect(item(page, 'task-1').locator('.task-status')).toHaveText('running');
  await shot(page.locator('#tasks-popover'), 'background-tasks-stop-refused');
});

test('other Stop failures are said too', async ({ page }) => {
  await open(page, turn, undefined, {
    errors: {
      background_task_stop: { code: 'session-ended', message: 'the session has ended' },
    },
  });
  await chip(page).click();
  await item(page, 'task-1').getByRole('button', { name: 'Stop' }).click();
  await expect(item(page, 'task-1').locator('[data-stop-error]')).toHaveText(
    'Not stopped: the session has ended.',
  );
});

test('tasks still running when the session ends are settled as such', async ({ page }) => {
  await open(page, turn);
  await expect(chip(page)).toHaveText('2 running');
  await frame(page, [
    task('settled', { ...build, status: 'stopped', settledBy: 'session-end' }),
    task('settled', { ...watcher, status: 'stopped', settledBy: 'session-end' }),
    { kind: 'session-status', sessionId: SID, status: 'dead', detail: 'Session closed.' },
  ]);
  await expect(chip(page)).toHaveText('3 tasks');
  await chip(page).click();
  for (const id of ['task-1', 'task-2']) {
    await expect(item(page, id).locator('.task-status')).toHaveText('stopped');
    await expect(item(page, id).locator('[data-settled-note]')).toHaveText(
      'ACP Desk stopped it: the session ended.',
    );
    await expect(item(page, id)).toHaveAttribute('data-settled-by', 'session-end');
    await expect(item(page, id).getByRole('button')).toHaveCount(0);
  }
  await shot(page, 'background-tasks-session-end-1280x800');
});

test('a cycle the agent started on its own is marked, not shown as a reply', async ({ page }) => {
  await open(page, [
    ...turn,
    // The build ends after the turn; the agent wakes by itself and reports.
    task('settled', { ...build, status: 'completed', summary: 'Finished in 2m 14s.' }),
    {
      kind: 'text-delta',
      sessionId: SID,
      text: 'The release build finished in 2m 14s; the binaries are in `target/release`.',
      messageId: 'm2',
    },
    { kind: 'usage_update', sessionId: SID, used: 5200, size: 200000, origin: 'task-notification' },
  ]);
  const seen = await collectEntries(page);
  const kinds = seen.map((e) => e.entry);
  const mark = kinds.indexOf('autonomous');
  expect(kinds.slice(mark - 1, mark + 2)).toEqual(['turn-end', 'autonomous', 'agent']);
  expect(seen[mark]?.text).toBe(
    'The agent went on by itself after a background task ended: what follows is not a reply to you.',
  );
  expect(seen[mark + 1]?.text).toContain('The release build finished');
  // Only one user message: the cycle is not a reply to a prompt.
  expect(kinds.filter((k) => k === 'user')).toHaveLength(1);
  await expect(page.locator(sel.entry('autonomous'))).toBeVisible();
  await shot(page, 'background-tasks-autonomous-1280x800');
  await page.setViewportSize({ width: 800, height: 600 });
  await expect(page.locator(sel.entry('autonomous'))).toBeVisible();
  await shot(page, 'background-tasks-autonomous-800x600');
});

test('the engine’s own recording: a task the session’s end settled (demo agent, through the CLI)', async ({
  page,
}) => {
  const events = readTranscript(
    fileURLToPath(new URL('./recorded/demo-background-task.jsonl', import.meta.url)),
  );
  await page.setViewportSize({ width: 1280, height: 800 });
  // The CLI's close stays: it is what settled the task.
  await replay(page, events, { keepClose: true });
  await page.goto('/');
  await expect(chip(page)).toHaveText('1 task');
  await chip(page).click();
  const t = item(page, 'demo-build');
  await expect(t).toContainText('cargo build --release');
  await expect(t).toContainText('Build the release binary (simulated)');
  await expect(t.locator('.task-status')).toHaveText('stopped');
  await expect(t.locator('[data-settled-note]')).toHaveText(
    'ACP Desk stopped it: the session ended.',
  );
});
