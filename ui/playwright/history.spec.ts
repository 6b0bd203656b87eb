// The History view over the mocked history commands (mock-ipc.js `history`): past sessions by
// folder, search with marked hits, a hit opening its session scrolled to the hit's entry,
// delete with its confirmation, export, copy id, the empty state and the errors. Screenshots
// history-<what>-<w>x<h>.png at 1100x735 and 800x600 (curated copies in docs/screenshots).
import { expect, test, type Page } from '@playwright/test';
import { shot } from './hooks';
import { calls, replay } from './mock-ipc.js';

const now = Date.now();
const min = 60_000;
type Ev = { kind: string } & Record<string, unknown>;

function turn(sid: string, prompt: string, answer: string, tool?: string): Ev[] {
  const out: Ev[] = [
    { kind: 'turn-start', sessionId: sid, prompt: [{ type: 'text', text: prompt }] },
  ];
  if (tool) {
    out.push({
      kind: 'tool-call',
      sessionId: sid,
      toolCallId: `${sid}-${out.length}-${prompt.length}`,
      toolName: tool,
      toolKind: 'search',
      status: 'completed',
      arguments: {},
      isUpdate: false,
    });
  }
  out.push({ kind: 'text-delta', sessionId: sid, text: answer });
  out.push({ kind: 'turn-end', sessionId: sid, reason: 'completed', stopReason: 'end_turn' });
  return out;
}

/** A long session: the hit (`session_info`) is in turn 30 of 60, far from both ends. */
const longSession: Ev[] = [
  { kind: 'session-status', sessionId: 'h-long', status: 'ready' },
  ...Array.from({ length: 60 }, (_, i) =>
    i === 30
      ? turn(
          'h-long',
          'Where is the title taken from?',
          'The title comes from the `session_info` update the agent sends, else from the first prompt.',
          'grep -rn session_info crates/',
        )
      : turn(
          'h-long',
          `Step ${i + 1}: tidy the ledger module`,
          `Done with step ${i + 1}. The tests pass.`,
        ),
  ).flat(),
  { kind: 'session-status', sessionId: 'h-long', status: 'dead', detail: 'Session closed.' },
];

const identity = (launchName: string, title: string) => ({
  launchName,
  title,
  promptCapabilities: { image: false, audio: false, embeddedContext: true },
  sessionMethods: { load: true, resume: false, list: true, close: false, delete: false },
});

const sessions = [
  {
    id: 'h-long',
    agent: 'demo',
    folder: '/home/demo/ledger',
    title: 'Tidy the ledger module, step by step',
    createdMs: now - 190 * min,
    updatedMs: now - 7 * min,
    status: 'dead',
    statusDetail: 'Session closed.',
    agentIdentity: identity('demo', 'ACP Desk demo agent'),
    rows: longSession.length,
    open: false,
  },
  {
    id: 'h-crash',
    agent: 'claude',
    folder: '/home/demo/ledger',
    title: 'Why does the parser reject negative amounts?',
    createdMs: now - 3 * 24 * 60 * min - 30 * min,
    updatedMs: now - 3 * 24 * 60 * min - 10 * min,
    status: 'dead',
    statusDetail: 'The agent exited with code 1.',
    agentIdentity: identity('claude', 'Claude Code'),
    rows: 4,
    open: false,
  },
  {
    id: 'h-web',
    agent: 'demo',
    folder: '/home/demo/website',
    title: null,
    createdMs: now - 26 * 60 * min,
    updatedMs: now - 25 * 60 * min,
    status: 'prompting',
    statusDetail: null,
    agentIdentity: identity('demo', 'ACP Desk demo agent'),
    rows: 4,
    open: false,
  },
];

const transcripts = {
  'h-long': longSession,
  'h-crash': turn(
    'h-crash',
    'Why does the parser reject negative amounts?',
    'Because `parse_amount` reads the sign as part of the session_info prefix.',
  ),
  'h-web': turn('h-web', 'Make the footer links readable', 'The footer now uses the muted colour.'),
};

async function openHistory(
  page: Page,
  history: Record<string, unknown> = { sessions, transcripts },
  options: Record<string, unknown> = {},
): Promise<void> {
  await replay(page, [], { folder: null, history: history as never, ...options });
  await page.goto('/');
  await page.getByRole('button', { name: 'History', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'History' })).toBeVisible();
}

const sizes = [
  { width: 1100, height: 735 },
  { width: 800, height: 600 },
] as const;

for (const size of sizes) {
  const tag = `${size.width}x${size.height}`;
  test.describe(`history at ${tag}`, () => {
    test.use({ viewport: size });

    test('lists past sessions by folder, newest first, with agent, time and status', async ({
      page,
    }) => {
      await openHistory(page);
      const groups = page.locator('[data-history-folder]');
      await expect(groups).toHaveCount(2);
      await expect(groups.nth(0)).toHaveAttribute('data-history-folder', '/home/demo/ledger');
      const ledger = groups.nth(0).locator('[data-history-session]');
      await expect(ledger.nth(0)).toHaveAttribute('data-history-session', 'h-long');
      await expect(ledger.nth(0)).toContainText('Tidy the ledger module');
      await expect(ledger.nth(0)).toContainText('ACP Desk demo agent');
      await expect(ledger.nth(0)).toContainText('7 min ago');
      await expect(ledger.nth(0)).toContainText('Closed');
      await expect(ledger.nth(1)).toContainText('3 days ago');
      await expect(ledger.nth(1)).toHaveAttribute('data-status', 'ended');
      const web = groups.nth(1).locator('[data-history-session]');
      await expect(web).toContainText('Untitled session');
      await expect(web).toContainText('Cut off');
      // The exact time is the tooltip.
      await expect(ledger.nth(0).locator('.item-time')).toHaveAttribute('data-tip', /\d{4}/);
      await shot(page, `history-list-${tag}`);
    });

    test('search marks the hits; a hit opens its session at that entry', async ({ page }) => {
      await openHistory(page);
      await page.getByRole('searchbox', { name: 'Search every conversation' }).fill('session_info');
      const hits = page.locator('[data-hit-session]');
      await expect(hits).toHaveCount(3);
      await expect(page.locator('[data-hit-count]')).toHaveText(/3 matches for “session_info”/);
      await expect(hits.first().locator('mark').first()).toHaveText('session_info');
      await shot(page, `history-search-${tag}`);
      const answer = page.locator('[data-hit-session="h-long"][data-seq]').filter({
        hasText: 'The title comes from',
      });
      await answer.click();
      await expect(page.locator('[data-past-session="h-long"]')).toBeVisible();
      const marked = page.locator('.item[data-hit]');
      await expect(marked).toBeVisible();
      await expect(marked).toContainText('The title comes from');
      // In view, far from the thread's start and end.
      const box = await marked.boundingBox();
      const scroller = await page.locator('.thread-view > .scroller').boundingBox();
      expect(box && scroller).toBeTruthy();
      if (box && scroller) {
        expect(box.y).toBeGreaterThanOrEqual(scroller.y - 1);
        expect(box.y).toBeLessThan(scroller.y + scroller.height);
      }
      await expect(page.getByText('Step 1: tidy the ledger module', { exact: true })).toHaveCount(
        0,
      );
      await expect(page.getByText(/The stored conversation, read-only/)).toBeVisible();
      await expect(page.locator('#composer')).toHaveCount(0);
      await shot(page, `history-open-at-hit-${tag}`);
      // Esc goes back to the hits.
      await page.keyboard.press('Escape');
      await expect(page.locator('[data-hit-session]')).toHaveCount(3);
    });
  });
}

test('deletes only after the confirmation', async ({ page }) => {
  await page.setViewportSize({ width: 1100, height: 735 });
  await openHistory(page);
  await page.locator('[data-history-session="h-crash"]').click();
  await expect(page.locator('[data-past-session="h-crash"]')).toBeVisible();
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  const ask = page.getByRole('alertdialog', { name: 'Delete this session?' });
  await expect(ask).toContainText('Why does the parser reject negative amounts?');
  await shot(page, 'history-delete-confirm-1100x735');
  await ask.getByRole('button', { name: 'Keep' }).click();
  expect((await calls(page)).some((c) => c.cmd === 'history_delete')).toBe(false);
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
  await expect(page.locator('[data-history-session]')).toHaveCount(2);
  await expect(page.locator('[data-history-session="h-crash"]')).toHaveCount(0);
  const del = (await calls(page)).filter((c) => c.cmd === 'history_delete');
  expect(del.map((c) => c.args.id)).toEqual(['h-crash']);
});

test('exports as Markdown or JSON lines and copies the id', async ({ page }) => {
  await page.setViewportSize({ width: 1100, height: 735 });
  await openHistory(page);
  await page.locator('[data-history-session="h-web"]').click();
  await page.getByRole('button', { name: 'Copy id' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Session id copied' })).toBeVisible();
  await page.getByRole('button', { name: 'Export ▾' }).click();
  await shot(page, 'history-export-menu-1100x735');
  await page.getByRole('menuitem', { name: /Markdown/ }).click();
  await expect(page.getByText('Exported to /home/demo/exported.md')).toBeVisible();
  await page.getByRole('button', { name: 'Export ▾' }).click();
  await page.getByRole('menuitem', { name: /JSON lines/ }).click();
  await expect(page.getByText('Exported to /home/demo/exported.jsonl')).toBeVisible();
  const made = (await calls(page)).filter((c) => c.cmd.startsWith('history_'));
  expect(made.filter((c) => c.cmd !== 'history_status' && c.cmd !== 'history_list')).toEqual([
    expect.objectContaining({ cmd: 'history_events', args: { id: 'h-web' } }),
    expect.objectContaining({ cmd: 'history_copy_id', args: { id: 'h-web' } }),
    expect.objectContaining({ cmd: 'history_export', args: { id: 'h-web', format: 'markdown' } }),
    expect.objectContaining({ cmd: 'history_export', args: { id: 'h-web', format: 'jsonl' } }),
  ]);
});

for (const size of sizes) {
  test(`the empty state says what makes a past session (${size.width}x${size.height})`, async ({
    page,
  }) => {
    await page.setViewportSize(size);
    await openHistory(page, { sessions: [], transcripts: {} });
    const empty = page.locator('[data-history-empty]');
    await expect(empty).toContainText('No past sessions yet');
    await expect(empty).toContainText('open a folder and send a prompt');
    await empty.getByRole('button', { name: 'Open Folder…' }).click();
    expect((await calls(page)).some((c) => c.cmd === 'pick_folder')).toBe(true);
    await shot(page, `history-empty-${size.width}x${size.height}`);
  });
}

test('history that is off is said in the window, naming the file; the list error too', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1100, height: 735 });
  const file = '/home/demo/.local/share/acp-desk/history.sqlite3';
  await replay(page, [], {
    folder: null,
    history: {
      sessions: [],
      transcripts: {},
      notices: [
        {
          off: true,
          message: `the history file ${file} is locked by another program (another ACP Desk, or a database tool that has it open); history is off for this run: close that program and start again`,
        },
      ],
    },
    errors: {
      history_list: {
        code: 'history-unavailable',
        message: `the history file ${file} is locked by another program (another ACP Desk, or a database tool that has it open); history is off for this run: close that program and start again`,
      },
    },
  });
  await page.goto('/');
  // Seen without opening History.
  const notice = page.locator('[data-history-notice="off"]');
  await expect(notice).toContainText('History is off.');
  await expect(notice).toContainText(file);
  await page.getByRole('button', { name: 'History', exact: true }).click();
  // Said once: the list's failure points at the notice that already names the file.
  const error = page.locator('[data-history-error]');
  await expect(error).toContainText('The past sessions cannot be read');
  await expect(error).toContainText('The reason is above.');
  await expect(page.locator('[data-history-notice]:visible')).toHaveCount(1);
  await expect(page.locator('[data-history-empty]')).toHaveCount(0);
  await shot(page, 'history-error-1100x735');
  // Without a notice, the failure says it all itself; Try again asks again.
  await page.locator('[data-history-notice]:visible button').click();
  await page.getByRole('button', { name: 'Close History' }).click();
  await page.getByRole('button', { name: 'History', exact: true }).click();
  await expect(page.locator('[data-history-error]')).toContainText(file);
  const before = (await calls(page)).filter((c) => c.cmd === 'history_list').length;
  await error.getByRole('button', { name: 'Try again' }).click();
  await expect
    .poll(async () => (await calls(page)).filter((c) => c.cmd === 'history_list').length)
    .toBe(before + 1);
});

test('Continue goes on with the agent; one that starts afresh offers the old conversation', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1100, height: 735 });
  // What the shell's continued session says: the agent could only start a new session.
  const live: Ev[] = [
    { kind: 'session-status', sessionId: 'h-crash', status: 'starting' },
    { kind: 'session-continued', sessionId: 'h-crash', mode: 'continue', outcome: 'new' },
    {
      kind: 'notice',
      sessionId: 'h-crash',
      severity: 'warning',
      source: 'client',
      title:
        'This agent cannot continue the old conversation: it offers neither session/resume nor session/load.',
    },
    {
      kind: 'session-status',
      sessionId: 'h-crash',
      status: 'ready',
      agent: identity('claude', 'Claude Code'),
    },
  ];
  await replay(page, live, { folder: null, history: { sessions, transcripts } as never });
  await page.goto('/');
  await page.getByRole('button', { name: 'History', exact: true }).click();
  await page.locator('[data-history-session="h-crash"]').click();
  await expect(page.getByText('Continue to go on with it.')).toBeVisible();
  await shot(page, 'history-past-session-1100x735');
  await page.locator('[data-continue]').click();
  // The session is in the sidebar, its stored turn above what the agent says now.
  await expect(page.locator('[data-session-list] [data-session]')).toHaveCount(1);
  await expect(
    page.getByText('Why does the parser reject negative amounts?').first(),
  ).toBeVisible();
  const offer = page.locator('[data-context-offer]');
  await expect(offer).toContainText('This agent cannot continue the old conversation');
  await expect(offer).toContainText(
    'You can send it the old conversation to read first, as the whole transcript inside one message',
  );
  await shot(page, 'history-continued-new-1100x735');
  await offer.getByRole('button', { name: 'Send it the old conversation' }).click();
  await expect(offer).toHaveCount(0);
  const made = (await calls(page)).filter(
    (c) => c.cmd.startsWith('history_c') || c.cmd === 'history_send_context',
  );
  expect(made.map((c) => [c.cmd, c.args])).toEqual([
    ['history_continue', { id: 'h-crash' }],
    ['history_send_context', { session: 'h-crash', stored: 'h-crash' }],
  ]);
});

test("Show <agent>'s own sessions here asks the agent and opens one with load", async ({
  page,
}) => {
  await page.setViewportSize({ width: 1100, height: 735 });
  const live: Ev[] = [
    { kind: 'session-status', sessionId: 'h-new', status: 'starting' },
    { kind: 'session-continued', sessionId: 'h-new', mode: 'import', outcome: 'loaded' },
    ...turn('h-new', 'Rename the ledger columns', 'Renamed them in src/columns.rs.'),
    { kind: 'session-status', sessionId: 'h-new', status: 'ready' },
  ];
  const agentSessions = [
    {
      acpSessionId: 'cc-41',
      title: 'Rename the ledger columns',
      updatedAt: new Date(now - 50 * min).toISOString(),
    },
  ];
  await replay(page, live, {
    folder: null,
    history: { sessions, transcripts, agentSessions } as never,
  });
  await page.goto('/');
  await page.getByRole('button', { name: 'History', exact: true }).click();
  const ledger = page.locator('[data-history-folder="/home/demo/ledger"]');
  // Both agents of the fixture advertise session/list.
  await ledger.getByRole('button', { name: "Show Claude Code's own sessions here" }).click();
  const own = ledger.locator('[data-agent-sessions="claude"]');
  await expect(own.locator('[data-agent-session="cc-41"]')).toContainText('50 min ago');
  await shot(page, 'history-agent-sessions-1100x735');
  await own.locator('[data-agent-session="cc-41"]').click();
  await expect(page.locator('[data-session-list] [data-session]')).toHaveCount(1);
  await expect(page.getByText('Continued: the agent loaded the conversation.')).toBeVisible();
  await expect(page.getByText('Renamed them in src/columns.rs.')).toBeVisible();
  const made = (await calls(page)).filter(
    (c) => c.cmd === 'history_agent_sessions' || c.cmd === 'history_import',
  );
  expect(made.map((c) => [c.cmd, c.args])).toEqual([
    ['history_agent_sessions', { agent: 'claude', folder: '/home/demo/ledger' }],
    ['history_import', { agent: 'claude', folder: '/home/demo/ledger', acpSessionId: 'cc-41' }],
  ]);
});
