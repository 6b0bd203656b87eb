// Every recorded transcript (the demo agent's through the CLI, and claude-code-acp's from the
// real-agent tests), replayed into the built UI: the thread shows it, and the window and each
// card are captured as screenshots. The thread is virtualized: counts come from scrolling it
// through (collectEntries), screenshots from scrolling each entry into view (revealEntry).
import { expect, test } from '@playwright/test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  collectEntries,
  expected,
  headerStatus,
  nameOf,
  repo,
  revealEntry,
  sel,
  shot,
  tally,
  type EntryType,
} from './hooks';
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

    // The whole thread, scrolled through: how many entries of each kind, and one card per tool
    // call (in order of first appearance) showing its last status and kind.
    const counts = (t: ReturnType<typeof tally>) => ({
      user: t.counts['user'] ?? 0,
      'turn-end': t.counts['turn-end'] ?? 0,
      error: t.counts['error'] ?? 0,
      notice: t.counts['notice'] ?? 0,
      file: t.counts['file'] ?? 0,
      tool: t.counts['tool'] ?? 0,
    });
    await expect
      .poll(async () => counts(tally(await collectEntries(page))))
      .toEqual({
        user: want.users,
        'turn-end': want.turnEnds,
        error: want.errors,
        notice: want.notices,
        file: want.files,
        tool: want.tools.length,
      });
    const seen = await collectEntries(page);
    expect(tally(seen).tools).toEqual(
      want.tools.map((t) => ({ id: t.id, status: t.status, kind: t.kind ?? 'other' })),
    );
    if (want.agentText !== null) {
      expect(seen.some((e) => e.entry === 'agent')).toBe(true);
      const agent = await revealEntry(page, sel.entry('agent'));
      await expect(agent).toBeVisible();
      expect(seen.map((e) => e.text).join(' ')).toContain(want.agentText);
    }

    const status = headerStatus(want);
    if (status) await expect(page.locator(sel.status)).toHaveAttribute('data-status', status);
    if (want.status === 'dead')
      // The dead session's card (its headline says how, by kind: "The agent exited.").
      await expect(page.locator('[data-dead], [data-start-failed]').first()).toBeVisible();

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
    for (const [i, tool] of want.tools.entries()) {
      const card = await revealEntry(page, sel.toolCard(tool.id));
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
      if (!seen.some((e) => e.entry === kind)) continue;
      const entry = await revealEntry(page, sel.entry(kind));
      await shot(entry, `${name}--${kind}`);
    }
    expect(errors).toEqual([]);
  });
}
