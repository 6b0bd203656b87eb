// Review and undo (checkpoints, issue 20) through the mock's model folder: a turn's end offers
// "Review changes" with its summary; the panel lists the steps, the turn's files and their
// diffs against the checkpoint, the notes and the space used; Undo this file / Undo turn N
// write the files back (the revert is a step, and undoing it redoes the turn); a file the user
// changed since is a conflict shown in its three versions, kept or overwritten; a restore asks
// first; Esc closes what is on top; refusals say why. Screenshots at 800x600 and 1280x800.
import { expect, test, type Page } from '@playwright/test';
import { demoStart, failOnPageErrors, shot } from './hooks';
import { calls, replay, type StreamEvent } from './mock-ipc.js';

const SID = 's-review';
const start = demoStart(SID);

const files = {
  'src/main.rs': 'fn main() {\n    println!("hello");\n}\n',
  'README.md': '# Demo\n\nA project.\n',
  'old.txt': 'to be removed\n',
};
const turns: Record<string, string | null>[] = [
  {
    'src/main.rs': 'fn main() {\n    println!("hello, world");\n    greet();\n}\n',
    'src/greet.rs': 'pub fn greet() {\n    println!("hi");\n}\n',
  },
  { 'old.txt': null, 'README.md': '# Demo\n\nA project, now with a greeting.\n' },
];

function turnEvents(n: number, prompt: string, summary: Record<string, number>): StreamEvent[] {
  return [
    { kind: 'turn-start', sessionId: SID, prompt: [{ type: 'text', text: prompt }] },
    { kind: 'checkpoint', sessionId: SID, phase: 'before', turn: n, waitedMs: 40 },
    { kind: 'text-delta', sessionId: SID, text: `Done with turn ${n}.`, messageId: `m${n}` },
    { kind: 'turn-end', sessionId: SID, reason: 'completed', stopReason: 'end_turn' },
    { kind: 'checkpoint', sessionId: SID, phase: 'after', turn: n, summary },
  ];
}
const thread = [
  ...turnEvents(1, 'Greet the world', { files: 2, added: 5, removed: 1 }),
  ...turnEvents(2, 'Tidy up', { files: 2, added: 1, removed: 2 }),
];

async function open(page: Page, size = { width: 1280, height: 800 }, opts = {}) {
  await page.setViewportSize(size);
  await replay(page, [...start, ...thread], {
    sessionId: SID,
    checkpoints: { files, turns, unrestorable: ['.env'] },
    ...opts,
  });
  await page.goto('/');
  await expect(page.locator('[data-entry="changes"]')).toHaveCount(2);
}

const panel = (page: Page) => page.locator('[data-review]');
/** The mock's model folder (MockCheckpoints), as the page has it. */
type WithFolder = { __acpMock: { folder: Record<string, string> } };
const folderNow = (page: Page) =>
  page.evaluate(() => ({ ...(window as unknown as WithFolder).__acpMock.folder }));

failOnPageErrors(test);

for (const size of [
  { width: 1280, height: 800 },
  { width: 800, height: 600 },
]) {
  test(`a turn's end offers its review; the panel shows its files and diffs (${size.width}x${size.height})`, async ({
    page,
  }) => {
    await open(page, size);
    const line = page.locator('[data-review-turn="1"]');
    await expect(line).toHaveText('Review changes · 2 files +5 −1');
    await shot(page, `checkpoints-thread-${size.width}x${size.height}`);
    await line.click();
    await expect(panel(page)).toBeVisible();
    await expect(panel(page).locator('#review-title')).toHaveText('Turn 1');
    await expect(panel(page).locator('[data-file]')).toHaveText([
      /src\/greet\.rs\s*created\s*\+3\s*−0/,
      /src\/main\.rs\s*changed\s*\+2\s*−1/,
    ]);
    // The first file's diff against the checkpoint.
    const diff = panel(page).locator('[data-review-diff] .diff-view');
    await expect(diff.locator('.path')).toHaveText('src/greet.rs');
    await expect(diff.locator('.tag.new')).toHaveText('New file');
    await panel(page).locator('[data-file="src/main.rs"]').click();
    await expect(diff.locator('.path')).toHaveText('src/main.rs');
    await expect(diff.locator('tr.add .code')).toHaveText([
      '    println!("hello, world");',
      '    greet();',
    ]);
    await expect(diff.locator('tr.del .code')).toHaveText(['    println!("hello");']);
    await expect(panel(page).locator('[data-scope]')).toHaveText([
      'Whole session',
      /Turn 1\s*2 files \+5 −1/,
      /Turn 2\s*2 files \+1 −2/,
    ]);
    await expect(panel(page).locator('[data-review-storage]')).toContainText(
      'Checkpoints of this folder: 51 KB of 2.0 GB (2 steps of 1 session)',
    );
    // The panel fits the window; its buttons are in it.
    for (const el of [panel(page), panel(page).locator('[data-undo-turn]')]) {
      const box = await el.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= size.width + 1).toBe(true);
      expect(box && box.y >= 0 && box.y + box.height <= size.height + 1).toBe(true);
    }
    await shot(page, `checkpoints-review-${size.width}x${size.height}`);
    await page.keyboard.press('Escape');
    await expect(panel(page)).toHaveCount(0);
    // The focus is back where it was.
    await expect(line).toBeFocused();
  });
}

test('an undo cut short (ACP Desk stopped while it wrote files) is told in the panel', async ({
  page,
}) => {
  await page.setViewportSize({ width: 800, height: 600 });
  await replay(page, [...start, ...thread], {
    sessionId: SID,
    checkpoints: {
      files,
      turns,
      interrupted: [
        {
          at: '2026-12-03T08:05:00Z',
          step: 3,
          kind: 'revert',
          undoes: 2,
          files: ['README.md', 'old.txt'],
        },
      ],
    },
  });
  await page.goto('/');
  await page.locator('[data-open-review]').click();
  const told = panel(page).locator('[data-review-interrupted]');
  await expect(told).toContainText('An undo of turn 2 was cut short at ');
  await expect(told).toContainText(
    'ACP Desk stopped while it wrote 2 files (README.md, old.txt). Every file is back as it was before it, so it changed nothing; make it again if you still want it.',
  );
  await expect(told).toHaveAttribute('role', 'alert');
  await shot(page, 'checkpoints-interrupted-800x600');
});

test('the header’s Changes shows the whole session, and a turn’s notes', async ({ page }) => {
  await open(page);
  await page.locator('[data-open-review]').click();
  await expect(panel(page).locator('#review-title')).toHaveText('Changes in this session');
  await expect(panel(page).locator('[data-file]')).toHaveCount(4);
  await expect(panel(page).locator('[data-file="old.txt"]')).toContainText('deleted');
  await panel(page).locator('[data-scope="2"]').click();
  await expect(panel(page).locator('#review-title')).toHaveText('Turn 2');
  await expect(panel(page).locator('[data-review-unrestorable]')).toContainText(
    'Changed, but not restorable: .env.',
  );
});

test('Undo turn puts its files back; the undo is a step, and undoing it redoes the turn', async ({
  page,
}) => {
  await open(page);
  const before = await folderNow(page);
  await page.locator('[data-review-turn="1"]').click();
  await panel(page).locator('[data-undo-turn]').click();
  await expect(panel(page).locator('[data-review-said]')).toHaveText(
    'Undid turn 1: 2 files put back. This is step 3: undo it from its row to go back.',
  );
  const now = await folderNow(page);
  expect(now['src/main.rs']).toBe(files['src/main.rs']);
  expect(now['src/greet.rs']).toBeUndefined();
  expect(now['README.md']).toBe(before['README.md']);
  await expect(panel(page).locator('[data-scope="1"]')).toContainText('undone by step 3');
  await expect(panel(page).locator('[data-scope="3"]')).toContainText('Step 3: undo of turn 1');
  expect(
    (await calls(page)).filter((c) => c.cmd === 'checkpoint_revert').map((c) => c.args),
  ).toEqual([{ session: SID, turn: 1, file: null, force: false }]);
  await panel(page).locator('[data-scope="3"]').click();
  await panel(page).locator('[data-undo-turn]').click();
  await expect(panel(page).locator('[data-review-said]')).toContainText('Undid step 3');
  expect(await folderNow(page)).toEqual(before);
  await page.keyboard.press('Escape');
  // The thread keeps what was undone.
  await expect(page.locator('[data-entry="notice"]').last()).toContainText(
    'Undid step 3: 2 files put back.',
  );
});

test('Undo this file writes that file only', async ({ page }) => {
  await open(page);
  await page.locator('[data-review-turn="2"]').click();
  await panel(page).locator('[data-file="old.txt"]').click();
  await panel(page).locator('[data-undo-file="old.txt"]').click();
  await expect(panel(page).locator('[data-review-said]')).toContainText(
    'Put old.txt back as it was before turn 2.',
  );
  const now = await folderNow(page);
  expect(now['old.txt']).toBe('to be removed\n');
  expect(now['README.md']).toBe(turns[1]?.['README.md']);
});

for (const size of [
  { width: 1280, height: 800 },
  { width: 800, height: 600 },
]) {
  test(`a file changed since is a conflict: three versions, Keep mine or Overwrite anyway (${size.width}x${size.height})`, async ({
    page,
  }) => {
    await open(page, size);
    // The user edits a file turn 1 wrote.
    await page.evaluate(() => {
      (window as unknown as WithFolder).__acpMock.folder['src/main.rs'] =
        'fn main() {\n    my_own_change();\n}\n';
    });
    await page.locator('[data-review-turn="1"]').click();
    await panel(page).locator('[data-undo-turn]').click();
    const dialog = panel(page).locator('[data-conflict]');
    await expect(dialog).toBeVisible();
    await expect(dialog.locator('h3')).toHaveText('A file changed since: nothing was written');
    const file = dialog.locator('[data-conflict-file="src/main.rs"]');
    await expect(file).toContainText('changed since (by you, another session or a later turn)');
    await expect(file.locator('.version')).toHaveText([
      /Before the turn\s*fn main\(\) \{\s*println!\("hello"\);/,
      /After the turn\s*fn main\(\) \{\s*println!\("hello, world"\);/,
      /Now\s*fn main\(\) \{\s*my_own_change\(\);/,
    ]);
    await expect(file.locator('[data-undo-does]')).toHaveText(
      'Overwrite anyway puts back the version from before the turn.',
    );
    expect((await folderNow(page))['src/greet.rs']).toBeDefined();
    await expect(dialog.locator('[data-keep-mine]')).toBeFocused();
    await shot(page, `checkpoints-conflict-${size.width}x${size.height}`);
    await dialog.locator('[data-keep-mine]').click();
    await expect(dialog).toHaveCount(0);
    await expect(panel(page).locator('[data-review-said]')).toHaveText(
      'Nothing was changed: undo turn 1 was not done.',
    );
    expect((await folderNow(page))['src/main.rs']).toContain('my_own_change');

    await panel(page).locator('[data-undo-turn]').click();
    await dialog.locator('[data-force]').click();
    await expect(panel(page).locator('[data-review-said]')).toContainText('Undid turn 1');
    const now = await folderNow(page);
    expect(now['src/main.rs']).toBe(files['src/main.rs']);
    expect(now['src/greet.rs']).toBeUndefined();
    expect(
      (await calls(page)).filter((c) => c.cmd === 'checkpoint_revert').map((c) => c.args.force),
    ).toEqual([false, false, true]);
    // The question went with the focus in it: Esc still reaches the panel.
    await page.keyboard.press('Escape');
    await expect(panel(page)).toHaveCount(0);
  });
}

test('a restore asks first; Esc cancels it, Restore puts the folder back', async ({ page }) => {
  await open(page, { width: 800, height: 600 });
  await page.locator('[data-open-review]').click();
  await panel(page).locator('[data-restore="1"]').click();
  const ask = panel(page).locator('[data-restore-confirm]');
  await expect(ask).toContainText('Restore the folder to before turn 1?');
  await shot(page, 'checkpoints-restore-800x600');
  await page.keyboard.press('Escape');
  await expect(ask).toHaveCount(0);
  await expect(panel(page)).toBeVisible();
  expect((await calls(page)).some((c) => c.cmd === 'checkpoint_restore')).toBe(false);
  await panel(page).locator('[data-restore="1"]').click();
  await ask.locator('[data-restore-yes]').click();
  await expect(panel(page).locator('[data-review-said]')).toContainText(
    'Restored the folder to before turn 1: 4 files written or removed.',
  );
  expect(await folderNow(page)).toEqual(files);
});

test('refusals say why, and what to do', async ({ page }) => {
  await open(page, undefined, {
    errors: {
      checkpoint_revert: {
        code: 'folder-busy',
        message:
          'a turn is running in this folder; wait for it to end (or stop it), then try again',
      },
    },
  });
  await page.locator('[data-review-turn="2"]').click();
  await panel(page).locator('[data-undo-turn]').click();
  await expect(panel(page).locator('[data-review-undo-error]')).toHaveText(
    'Undo turn 2 failed, and no file was changed: a turn is running in this folder; wait for it to end (or stop it), then try again',
  );
  await shot(page, 'checkpoints-refused-1280x800');
});

test('without checkpoints the panel says why', async ({ page }) => {
  await page.setViewportSize({ width: 800, height: 600 });
  await replay(page, [...start, ...thread], { sessionId: SID });
  await page.goto('/');
  await page.locator('[data-open-review]').click();
  await expect(panel(page).locator('[data-review-error]')).toHaveText(
    /The changes cannot be shown\.\s*checkpoints are turned off in the settings/,
  );
});

test('a session restored from the last run is reviewed and undone before its agent starts', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const restored = {
    sessions: [
      { sessionId: SID, folder: '/home/demo/project', agent: 'demo', draft: '', events: thread },
    ],
    shown: 0,
    startAtOnce: false,
  };
  await replay(page, [], { folder: null, sessionId: SID, restored, checkpoints: { files, turns } });
  await page.goto('/');
  await expect(page.locator('.session-header .status')).toHaveAttribute('data-status', 'stored');
  await page.locator('[data-review-turn="2"]').click();
  await panel(page).locator('[data-undo-turn]').click();
  await expect(panel(page).locator('[data-review-said]')).toContainText('Undid turn 2');
  expect((await folderNow(page))['old.txt']).toBe(files['old.txt']);
  // Under its history id, and no agent was started for it.
  const seen = await calls(page);
  expect(seen.find((c) => c.cmd === 'checkpoint_revert')?.args).toEqual({
    session: SID,
    turn: 2,
    file: null,
    force: false,
  });
  expect(seen.filter((c) => c.cmd === 'open_session' || c.cmd === 'continue_session')).toEqual([]);
});
