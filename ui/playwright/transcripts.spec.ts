// Every recorded transcript (the demo agent's through the CLI, and claude-code-acp's from the
// real-agent tests), replayed into the built UI: the thread shows it, and the window and each
// card are captured as screenshots.
import { expect, test } from '@playwright/test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expected, legacy, nameOf, repo, sel, shot, type EntryType } from './hooks';
import { replay, replayed } from './mock-ipc.js';

const demoDir = join(repo, 'tests/transcripts/demo');
const realDir = join(repo, 'tests/real-agents/transcripts');
const transcripts = [
  ...readdirSync(demoDir)
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => ({ group: 'demo', path: join(demoDir, f) })),
  ...readdirSync(realDir)
    .filter((f) => f.startsWith('claude-code-acp-') && f.endsWith('.jsonl'))
    .map((f) => ({ group: 'real', path: join(realDir, f) })),
].sort((a, b) => a.path.localeCompare(b.path));

for (const { group, path } of transcripts) {
  const name = `${group}-${nameOf(path)}`;
  test(`replays ${name}`, async ({ page }) => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const events = await replay(page, path);
    const want = expected(events);
    await page.goto('/');
    await expect.poll(() => replayed(page)).toBe(true);

    const thread = page.locator(sel.thread);
    await expect(page.locator(sel.entry('turn-end'))).toHaveCount(want.turnEnds);
    await expect(page.locator(sel.entry('user'))).toHaveCount(want.users);
    if (want.agentText !== null) {
      await expect(page.locator(sel.entry('agent')).first()).toBeVisible();
      await expect(thread).toContainText(want.agentText);
    }
    await expect(page.locator(sel.entry('error'))).toHaveCount(want.errors);
    await expect(page.locator(sel.entry('notice'))).toHaveCount(want.notices);
    await expect(page.locator(sel.entry('file'))).toHaveCount(want.files);

    // One card per tool call, showing its last status.
    const cards = page.locator(sel.entry('tool'));
    await expect(cards).toHaveCount(want.tools.length);
    for (const [i, tool] of want.tools.entries()) {
      const card = legacy ? cards.nth(i) : page.locator(sel.toolCard(tool.id));
      await expect(card).toHaveAttribute('data-status', tool.status);
    }

    if (want.status)
      await expect(page.locator(sel.status)).toHaveAttribute('data-status', want.status);
    if (want.status === 'dead')
      await expect(page.getByText('The session has ended.')).toBeVisible();

    const first = want.pending[0];
    if (first) {
      const dialog = page.locator(sel.dialog);
      await expect(dialog).toBeVisible();
      await expect(dialog.locator(sel.option)).toHaveCount(first.options);
      await shot(dialog, `${name}--dialog`);
    } else {
      await expect(page.locator(sel.dialog)).toHaveCount(0);
    }

    await shot(page, `${name}--window`);
    // Each tool card, and the first entry of every other kind.
    for (let i = 0; i < want.tools.length; i++) {
      const card = cards.nth(i);
      await card.scrollIntoViewIfNeeded();
      await shot(card, `${name}--tool-${i}-${await card.getAttribute('data-status')}`);
    }
    const kinds: EntryType[] = [
      'user',
      'agent',
      'thought',
      'turn-end',
      'error',
      'notice',
      'settled',
      'file',
    ];
    for (const kind of kinds) {
      const entry = page.locator(sel.entry(kind)).first();
      if ((await entry.count()) === 0) continue;
      await entry.scrollIntoViewIfNeeded();
      await shot(entry, `${name}--${kind}`);
    }
    expect(errors).toEqual([]);
  });
}
