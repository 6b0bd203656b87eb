// The demo agent's `showcase` scenario (tests/transcripts/demo/showcase.jsonl: every card kind in
// one turn) replayed into the built UI, light and dark: each card state, the plan panel, the
// usage meter, the mode and config pickers (and that choosing calls set_mode /
// set_config_option), the permission dialog's variants (diff, command, MCP-style arguments,
// queued), the `/` menu, the `@` picker, links (open_url, no navigation) and locations
// (open_path). Screenshots: screenshots/replay-<what>-<light|dark>.png; docs/screenshots has a
// curated copy.
import { expect, test, type Page } from '@playwright/test';
import { join } from 'node:path';
import { collectEntries, expected, repo, revealEntry, sel, shot, tally } from './hooks';
import { calls, readTranscript, replay, replayed, type StreamEvent } from './mock-ipc.js';

const showcase = join(repo, 'tests/transcripts/demo/showcase.jsonl');
const pendingPath = join(repo, 'tests/transcripts/demo/permission-pending.jsonl');
/** Where the demo agent ran when recording (record.sh): paths show relative to it. */
const folder = '/tmp/acp-desk-transcripts/project';

/** What list_files answers: a realistic Rust project. */
const FILES = [
  '.gitignore',
  'Cargo.lock',
  'Cargo.toml',
  'README.md',
  'docs/FORMAT.md',
  'docs/CHANGELOG.md',
  'examples/monthly.rs',
  'src/lib.rs',
  'src/main.rs',
  'src/parser.rs',
  'src/parser/amount.rs',
  'src/parser/date.rs',
  'src/report.rs',
  'src/report/csv.rs',
  'src/report/table.rs',
  'tests/cli.rs',
  'tests/fixtures/old.ledger',
  'tests/fixtures/empty.ledger',
  'tests/parser.rs',
  'benches/parse.rs',
];

const schemes = ['light', 'dark'] as const;

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

async function openShowcase(
  page: Page,
  scheme: (typeof schemes)[number],
  options: Parameters<typeof replay>[2] = {},
): Promise<StreamEvent[]> {
  await page.emulateMedia({ colorScheme: scheme });
  const events = await replay(page, showcase, { folder, files: FILES, ...options });
  await page.goto('/');
  return events;
}

const toolIds = (events: StreamEvent[]): string[] => [
  ...new Set(events.filter((e) => e.kind === 'tool-call').map((e) => String(e.toolCallId))),
];

for (const scheme of schemes) {
  test(`showcase (${scheme}): every card kind, thought, plan, usage, pickers`, async ({ page }) => {
    const errors = watchErrors(page);
    const events = await openShowcase(page, scheme);
    const want = expected(events);
    await expect.poll(() => replayed(page)).toBe(true);
    await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'ready');

    // Every tool call, in order, with its last status and kind: every kind of the protocol.
    const seen = await collectEntries(page);
    expect(tally(seen).tools).toEqual(
      want.tools.map((t) => ({ id: t.id, status: t.status, kind: t.kind ?? 'other' })),
    );
    expect(new Set(want.tools.map((t) => t.kind))).toEqual(
      new Set(['search', 'read', 'fetch', 'think', 'edit', 'move', 'delete', 'execute', 'other']),
    );
    expect(want.tools.find((t) => t.id === 'show-other')?.status).toBe('failed');
    await shot(page, `replay-window-${scheme}`);

    for (const id of toolIds(events)) {
      const card = await revealEntry(page, sel.toolCard(id));
      await shot(card, `replay-tool-${id.replace(/^show-/, '')}-${scheme}`);
    }

    // The edit: a diff of a changed file; the new file: a diff with additions only.
    const edit = await revealEntry(page, sel.toolCard('show-edit'));
    await expect(edit.locator(sel.diff)).toBeVisible();
    const created = await revealEntry(page, sel.toolCard('show-new'));
    await expect(created.locator(sel.diff)).toBeVisible();
    await expect(created.locator(sel.diff)).toContainText('Ledger file format');
    // The terminal, with the command's output and its exit.
    const term = await revealEntry(page, sel.toolCard('show-term'));
    await expect(term.locator(`${sel.terminal}[data-terminal-id="term-1"]`)).toContainText(
      'test result: ok. 12 passed',
    );
    await expect(term.locator('.exit')).toHaveAttribute('data-state', 'ok');
    // Codex-style: empty content, the command in rawInput, the output in rawOutput (shown open).
    const codex = await revealEntry(page, sel.toolCard('show-codex'));
    await expect(codex).toContainText('cargo fmt --check');
    await expect(codex.locator('details.io[open]')).toContainText('no formatting changes needed');
    // Locations, relative to the folder, with their line.
    const read = await revealEntry(page, sel.toolCard('show-read'));
    await expect(read.locator('.loc')).toHaveText('src/parser.rs:12');

    // The thought, folded to its first line, then opened.
    const thought = await revealEntry(page, sel.entry('thought'));
    await expect(thought).not.toHaveAttribute('open');
    await shot(thought, `replay-thought-closed-${scheme}`);
    await thought.locator('summary').click();
    await expect(thought).toHaveAttribute('open');
    await expect(thought).toContainText('ask before the risky edit');
    await shot(thought, `replay-thought-open-${scheme}`);
    const agent = await revealEntry(page, sel.entry('agent'));
    await expect(agent.locator('pre code')).toContainText('fn main()');
    await shot(agent, `replay-markdown-${scheme}`);

    // The plan panel: folded after the turn, every entry done; opened, each entry's state.
    const plan = [...events].reverse().find((e) => e.kind === 'plan');
    const planEntries = plan?.entries as { status: string; priority: string }[];
    const panel = page.locator(sel.plan);
    await expect(panel).toHaveAttribute('data-expanded', 'false');
    await expect(panel).toContainText(
      `${planEntries.filter((e) => e.status === 'completed').length}/${planEntries.length}`,
    );
    await shot(panel, `replay-plan-folded-${scheme}`);
    await panel.getByRole('button', { expanded: false }).click();
    await expect(page.locator(sel.planEntry)).toHaveCount(planEntries.length);
    for (const [i, e] of planEntries.entries()) {
      await expect(page.locator(sel.planEntry).nth(i)).toHaveAttribute('data-status', e.status);
      await expect(page.locator(sel.planEntry).nth(i)).toHaveAttribute('data-priority', e.priority);
    }
    await shot(panel, `replay-plan-${scheme}`);

    // The usage meter: the last usage_update (25,900 of 200,000 tokens, $0.037).
    const usage = page.locator('[data-usage]');
    await expect(usage).toBeVisible();
    await expect(usage).toContainText('13%');
    await expect(usage).toContainText('$0.037');
    await expect(usage).toHaveAttribute('data-tip', /25\.9k|25,900/);
    await shot(usage, `replay-usage-${scheme}`);

    // The pickers: the mode list and the config options the demo agent answers session/new with.
    await expect(page.locator('[data-mode-picker]')).toHaveValue('ask');
    await expect(page.locator('[data-mode-picker] option')).toHaveText([
      'Ask before edits',
      'Edit freely',
      'Plan only',
    ]);
    await expect(page.locator('select[data-config-option="model"]')).toHaveValue('demo-swift');
    await expect(page.locator('select[data-config-option="thought_level"]')).toHaveValue('medium');
    await expect(page.locator('input[data-config-option="brief"]')).not.toBeChecked();
    await shot(page.locator('.session-header'), `replay-header-${scheme}`);
    expect(errors).toEqual([]);
  });
}

test('showcase: choosing a mode or a config option calls set_mode / set_config_option', async ({
  page,
}) => {
  const events = await openShowcase(page, 'light');
  await expect.poll(() => replayed(page)).toBe(true);
  const session = String(events[0]?.sessionId);
  const last = async (cmd: string) =>
    (await calls(page)).filter((c) => c.cmd === cmd).at(-1)?.args ?? null;

  const mode = page.locator('[data-mode-picker]');
  await mode.selectOption('code');
  await expect.poll(() => last('set_mode')).toEqual({ session, modeId: 'code' });
  await expect(mode).toHaveValue('code');

  const model = page.locator('select[data-config-option="model"]');
  await model.selectOption('demo-deep');
  await expect
    .poll(() => last('set_config_option'))
    .toEqual({ session, configId: 'model', value: 'demo-deep' });
  await expect(model).toHaveValue('demo-deep');

  const brief = page.locator('input[data-config-option="brief"]');
  // A click, not check(): the box shows the agent's answer (config-options), not the click.
  await brief.click();
  await expect
    .poll(() => last('set_config_option'))
    .toEqual({ session, configId: 'brief', value: true });
  await expect(brief).toBeChecked();
  await shot(page.locator('.session-header'), 'replay-header-changed-light');
});

test('showcase: each header control says what it is, in its tooltip and its accessible name', async ({
  page,
}) => {
  await openShowcase(page, 'light');
  await expect.poll(() => replayed(page)).toBe(true);
  const header = page.locator('.session-header');
  // The tooltip is the picker's label's (it covers the control); the words come from the
  // agent's option (its name) and the protocol (its category).
  const tip = (control: ReturnType<Page['locator']>) =>
    control.locator('xpath=ancestor::*[@data-tip][1]');
  const mode = header.getByRole('combobox', { name: 'Mode', exact: true });
  await expect(tip(mode)).toHaveAttribute('data-tip', /^Mode: Ask before edits\n./);
  const model = header.getByRole('combobox', { name: 'Model', exact: true });
  await expect(tip(model)).toHaveAttribute(
    'data-tip',
    'Model: Demo Swift\nWhich (made-up) model answers.',
  );
  const thought = header.getByRole('combobox', { name: 'Thinking (thought level)', exact: true });
  await expect(thought).toHaveValue('medium');
  await expect(tip(thought)).toHaveAttribute(
    'data-tip',
    'Thinking (thought level): Medium\nHow hard the (made-up) model thinks.',
  );
  const brief = header.getByRole('switch', { name: 'Brief answers', exact: true });
  await expect(tip(brief)).toHaveAttribute('data-tip', /^Brief answers: off\n/);
  // The usage meter: 25,900 of 200,000 tokens, $0.037 so far.
  const usage = header.getByRole('group', { name: 'Context used: 13%, cost so far: $0.037' });
  await expect(usage).toBeVisible();
  await expect(usage).toHaveAttribute(
    'data-tip',
    /^Context used: 25,900 of 200,000 tokens \(13%\)$/m,
  );
  await expect(usage).toHaveAttribute('data-tip', /^Cost so far: \$0\.037$/m);
});

test('the window title: the shown folder and the requests waiting, through the window’s setTitle', async ({
  page,
}) => {
  const ask = requests();
  const titles = async () =>
    (await calls(page)).filter((c) => c.cmd === 'plugin:window|set_title').map((c) => c.args);
  await replay(page, waiting([ask.diff, ask.command]), { folder });
  await page.goto('/');
  await expect(page).toHaveTitle('(2) project — ACP Desk');
  await expect
    .poll(async () => (await titles()).at(-1))
    .toEqual({ label: 'main', value: '(2) project — ACP Desk' });
  await page.locator(sel.dialog).locator(sel.optionOfKind('allow_once')).click();
  await expect(page).toHaveTitle('(1) project — ACP Desk');
  await page.locator(sel.dialog).locator(sel.optionOfKind('allow_once')).click();
  await expect(page).toHaveTitle('project — ACP Desk');
  // No session: the app's name alone.
  await page.getByRole('button', { name: 'Close project' }).click();
  // The turn still runs: closing asks first.
  await page.locator(sel.sessionList).getByRole('button', { name: 'Close', exact: true }).click();
  await expect(page).toHaveTitle('ACP Desk');
  expect((await titles()).at(-1)).toEqual({ label: 'main', value: 'ACP Desk' });
});

/** The showcase's diff request, the recorded command request, an MCP tool's, by id. */
function requests(): Record<'diff' | 'command' | 'mcp', StreamEvent> {
  const diff = readTranscript(showcase).find((e) => e.kind === 'agent-prompt');
  const command = readTranscript(pendingPath).find((e) => e.kind === 'agent-prompt');
  if (!diff || !command) throw new Error('a recorded agent-prompt is missing');
  const mcp: StreamEvent = {
    kind: 'agent-prompt',
    toolCallId: 'mcp-1#1',
    targetToolCallId: 'mcp-1',
    toolName: 'mcp__github__create_issue',
    text: 'Allow mcp__github__create_issue?',
    rawInput: {
      owner: 'acme',
      repo: 'ledgerline',
      title: 'Amounts without a leading zero are rejected',
      body: 'Parsing `-.75` fails:\n\n    error: invalid amount\n\nExpected -0.75.',
      labels: ['bug', 'parser'],
      draft: false,
    },
    options: [
      { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
      { optionId: 'always', name: 'Always allow create_issue', kind: 'allow_always' },
      { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
      { optionId: 'never', name: 'Never', kind: 'reject_always' },
    ],
  };
  return { diff, command, mcp };
}

/** A ready session with `asks` waiting. */
function waiting(asks: StreamEvent[]): StreamEvent[] {
  const sid = 'perm-variants';
  // The recording up to its turn (status, modes, config options, commands, usage).
  const recorded = readTranscript(showcase);
  const head = recorded.slice(
    0,
    recorded.findIndex((e) => e.kind === 'turn-start'),
  );
  return [
    ...head,
    { kind: 'turn-start', prompt: [{ type: 'text', text: 'showcase' }] },
    { kind: 'text-delta', text: 'I need your permission for the next step.' },
    ...asks,
  ].map((e) => ({ ...e, sessionId: sid }));
}

for (const scheme of schemes) {
  test(`permission dialog variants (${scheme}): diff, command, MCP arguments, queued`, async ({
    page,
  }) => {
    await page.emulateMedia({ colorScheme: scheme });
    const ask = requests();
    await replay(page, waiting([ask.diff, ask.command]), { folder });
    await page.goto('/');
    const dialog = page.locator(sel.dialog);
    // Queued: the first of two, the queue listed.
    await expect(dialog.locator('[data-queue-position]')).toHaveText('1 of 2');
    await expect(dialog.locator(sel.diff)).toBeVisible();
    await expect(dialog.locator(sel.diff)).toContainText('-0.75 coffee');
    await expect(dialog.locator(sel.option)).toHaveCount(3);
    await expect(page.locator(sel.status)).toHaveAttribute('data-status', 'waiting');
    // The OS's scheme reaches the styles through lib/theme.ts (the theme is `system`).
    await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
    await shot(dialog, `replay-permission-queued-diff-${scheme}`);
    await shot(page, `replay-permission-window-${scheme}`);
    // The second, chosen from the queue: the command and where it runs.
    await dialog.getByRole('list', { name: 'Requests waiting' }).getByRole('button').nth(1).click();
    await expect(dialog.locator('[data-queue-position]')).toHaveText('2 of 2');
    await expect(dialog.locator('[data-command] pre')).toHaveText('cargo test');
    await expect(dialog.locator('[data-cwd]')).toContainText(folder);
    await shot(dialog, `replay-permission-command-${scheme}`);
    await dialog.locator(sel.optionOfKind('allow_once')).click();
    await expect(page.locator(sel.dialog).locator('[data-queue-position]')).toHaveCount(0);
    await expect(dialog.locator(sel.diff)).toBeVisible();
  });

  test(`permission dialog: an MCP tool's arguments (${scheme})`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await replay(page, waiting([requests().mcp]), { folder });
    await page.goto('/');
    const dialog = page.locator(sel.dialog);
    await expect(dialog).toBeVisible();
    const args = dialog.locator('[data-args]');
    await expect(args).toBeVisible();
    for (const key of ['owner', 'repo', 'title', 'body', 'labels', 'draft'])
      await expect(args.locator('th', { hasText: key })).toHaveCount(1);
    await expect(args).toContainText('Amounts without a leading zero are rejected');
    await expect(dialog.locator(sel.option)).toHaveCount(4);
    await expect(dialog.locator('[data-command]')).toHaveCount(0);
    await shot(dialog, `replay-permission-mcp-${scheme}`);
  });
}

test('showcase: the recorded diff request waits for the user, then the turn ends', async ({
  page,
}) => {
  const events = await openShowcase(page, 'light', { answer: 'user', pace: 1, batch: 8 });
  const ask = events.find((e) => e.kind === 'agent-prompt');
  const dialog = page.locator(sel.dialog);
  await expect(dialog).toBeVisible();
  await expect(dialog.locator(sel.diff)).toBeVisible();
  await dialog.locator(sel.optionOfKind('allow_once')).click();
  await expect
    .poll(async () => (await calls(page)).find((c) => c.cmd === 'respond_permission')?.args)
    .toMatchObject({ requestId: ask?.toolCallId, resolution: { optionId: 'allow' } });
  await expect.poll(() => replayed(page)).toBe(true);
  await expect.poll(async () => tally(await collectEntries(page)).counts['turn-end'] ?? 0).toBe(1);
  await expect(dialog).toHaveCount(0);
});

for (const scheme of schemes) {
  test(`composer (${scheme}): the / menu and the @ picker`, async ({ page }) => {
    const events = await openShowcase(page, scheme);
    await expect.poll(() => replayed(page)).toBe(true);
    const commands = (events.find((e) => e.kind === 'available-commands')?.commands ?? []) as {
      name: string;
    }[];
    const composer = page.locator(sel.composer);
    await composer.click();
    await composer.pressSequentially('/');
    const menu = page.locator('[data-command-menu]');
    await expect(menu.locator('[data-command]')).toHaveCount(commands.length);
    await shot(page, `replay-slash-menu-${scheme}`);
    await composer.pressSequentially('perm');
    await expect(menu.locator('[data-command]')).toHaveText([/\/permission/]);
    await composer.press('Enter');
    await expect(menu).toHaveCount(0);
    await expect(composer).toHaveValue('/permission ');

    await composer.fill('');
    await composer.pressSequentially('Look at @pars');
    const picker = page.locator('[data-file-picker]');
    await expect(picker.locator('[data-file]').first()).toBeVisible();
    expect((await calls(page)).some((c) => c.cmd === 'list_files')).toBe(true);
    const shown = await picker
      .locator('[data-file]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-file')));
    expect(shown).toContain('src/parser.rs');
    expect(shown.every((f) => FILES.includes(String(f)))).toBe(true);
    await shot(page, `replay-file-picker-${scheme}`);
    await composer.press('Enter');
    await expect(picker).toHaveCount(0);
    await expect(page.locator('[data-chip="file"]')).toHaveCount(1);
    await expect(composer).toHaveValue('Look at ');
    await shot(page.locator('.composer-wrap'), `replay-file-chip-${scheme}`);
  });
}

test('showcase: a link opens through open_url (no navigation), a location through open_path', async ({
  page,
}) => {
  const seenRequests: string[] = [];
  page.on('request', (r) => seenRequests.push(r.url()));
  const events = await openShowcase(page, 'light');
  await expect.poll(() => replayed(page)).toBe(true);
  const session = String(events[0]?.sessionId);
  // One more agent message with a link, as a live frame.
  await page.evaluate((sid) => {
    (window as unknown as { __acpMock: { frame(e: unknown[]): void } }).__acpMock.frame([
      { kind: 'turn-start', sessionId: sid, prompt: [{ type: 'text', text: 'docs?' }] },
      {
        kind: 'text-delta',
        sessionId: sid,
        text: 'See [the anyhow docs](https://docs.rs/anyhow/latest/anyhow/).',
      },
      { kind: 'turn-end', sessionId: sid, reason: 'completed', stopReason: 'end_turn' },
    ]);
  }, session);
  const start = page.url();
  const link = page.getByRole('link', { name: 'the anyhow docs' });
  await expect(link).toBeVisible();
  await link.click();
  await expect
    .poll(async () => (await calls(page)).find((c) => c.cmd === 'open_url')?.args)
    .toEqual({ url: 'https://docs.rs/anyhow/latest/anyhow/' });
  await page.waitForTimeout(200);
  expect(page.url()).toBe(start);
  expect(seenRequests.filter((u) => u.includes('docs.rs'))).toEqual([]);
  expect(page.context().pages()).toHaveLength(1);

  const read = await revealEntry(page, sel.toolCard('show-read'));
  await read.locator('.loc').click();
  await expect
    .poll(async () => (await calls(page)).find((c) => c.cmd === 'open_path')?.args)
    .toEqual({ session, path: `${folder}/src/parser.rs`, line: 12 });
  await read.getByRole('button', { name: 'Reveal parser.rs' }).click();
  await expect
    .poll(async () => (await calls(page)).find((c) => c.cmd === 'reveal_path')?.args)
    .toMatchObject({ path: `${folder}/src/parser.rs` });
  expect(page.url()).toBe(start);
});
