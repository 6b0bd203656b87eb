// End to end: review and undo (checkpoints, issue 20) in the real app (run.sh: Xvfb,
// tauri-driver) over a real folder, against the demo agent's scenarios:
// - turn 1, "write-file": writes through ACP Desk's fs service (it rewrites the user's
//   demo-notes.txt and creates demo-folder/nested/created.txt); turn 2, "direct-write": the
//   agent's own tool writes direct-notes.txt and direct-folder/new.txt behind ACP Desk's back.
// - Each turn's end offers "Review changes" with its summary; the panel lists the turn's files
//   with their diffs from the shadow repository.
// - The user edits a file turn 2 wrote: Undo turn 2 is a conflict that shows the three
//   versions and writes nothing; Keep mine keeps the edit; Overwrite anyway undoes the turn.
// - Restore to before turn 1 (from the header's Changes, after a yes) puts the folder back
//   byte for byte (every file's hash, and no folder left behind); the restore is a step of its
//   own, so undoing it brings turn 1's files back.
// - A real agent: claude-code-acp (tests/real-agents' pinned copy, against its scripted model
//   server) edits edit.txt, writes new.txt and runs a shell command that writes out.txt in one
//   turn, each allowed in the window's permission dialog; the turn's review lists the three,
//   and Undo turn 1 puts the folder back byte for byte.
// Screenshots of the panel and the conflict at 1280x800 and 800x600 (E2E_SCREENSHOTS).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchApp, resizeWindow, saveShot, turn } from './lib.mjs';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'acp-desk-shots-'));
mkdirSync(shots, { recursive: true });
const project = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-undo-')));
writeFileSync(join(project, 'README.md'), '# A project for the undo test\n');
writeFileSync(join(project, 'demo-notes.txt'), 'my own notes, before any agent\n');
mkdirSync(join(project, 'src'));
writeFileSync(join(project, 'src', 'lib.rs'), 'pub fn answer() -> u32 {\n    42\n}\n');

/** Every file and folder under `dir` with its content's hash (folders: 'dir'). */
function tree(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const rel = relative(dir, p);
      if (e.isDirectory()) {
        out[rel] = 'dir';
        walk(p);
      } else out[rel] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

let browser;
let size;
const $ = (selector) => browser.$(selector);
const PANEL = '[data-review]';

// textContent, not WebDriver's getText: WebKitWebDriver answers '' for some visible elements.
async function text(selector) {
  return ((await (await $(selector)).getProperty('textContent')) ?? '').replace(/\s+/g, ' ').trim();
}

async function texts(selector) {
  return browser.execute(
    (s) => [...document.querySelectorAll(s)].map((e) => e.textContent.replace(/\s+/g, ' ').trim()),
    selector,
  );
}

async function click(selector) {
  const el = await $(selector);
  await el.waitForClickable({ timeout: 10000, timeoutMsg: `${selector} is not clickable` });
  await el.click();
}

/** The window at `w`x`h` (the page's viewport follows). */
const resize = (w, h) => resizeWindow(browser, w, h);

/** A screenshot once the compositor caught up (lib.mjs). */
const shot = (file) => saveShot(browser, join(shots, file));

async function shotsOf(name) {
  await shot(`${name}-${size.width}x${size.height}.png`);
  await resize(800, 600);
  await shot(`${name}-800x600.png`);
  await resize(size.width, size.height);
}

/** The panel's message once it says something (an undo's outcome or its failure). */
async function said() {
  await browser.waitUntil(
    async () =>
      (await $(`${PANEL} [data-review-said]`).isExisting()) ||
      (await $(`${PANEL} [data-review-undo-error]`).isExisting()),
    { timeout: 15000, timeoutMsg: 'the panel said nothing after the undo' },
  );
  if (await $(`${PANEL} [data-review-undo-error]`).isExisting())
    assert.fail(`the undo failed: ${await text(`${PANEL} [data-review-undo-error]`)}`);
  return text(`${PANEL} [data-review-said]`);
}

describe('ACP Desk, review and undo of a real folder, end to end', () => {
  const initial = tree(project);
  let afterTurn1;

  before(async () => {
    rmSync(join(process.env.ACP_DESK_DATA_DIR ?? '', 'state.json'), { force: true });
    browser = await launchApp(['--agent', 'demo', project]);
    const status = await $('.session-header .status');
    await status.waitForExist({ timeout: 20000 });
    await browser.waitUntil(async () => (await status.getAttribute('data-status')) === 'ready', {
      timeout: 20000,
      timeoutMsg: 'the session never became ready',
    });
    size = await browser.getWindowSize();
    const notice = await $('[data-desktop-notice] button');
    if (await notice.isExisting()) await notice.click();
  });

  after(async () => {
    await browser?.deleteSession();
    rmSync(project, { recursive: true, force: true });
  });

  it('offers each turn’s review at its end, with what it changed', async () => {
    await turn(browser, 'write-file');
    const first = await $('[data-review-turn="1"]');
    await first.waitForExist({
      timeout: 15000,
      timeoutMsg: 'turn 1 ended without “Review changes” (no checkpoint of its end?)',
    });
    assert.match(await text('[data-review-turn="1"]'), /^Review changes · 2 files \+\d+ −\d+$/);
    afterTurn1 = tree(project);
    assert.notDeepEqual(afterTurn1, initial, 'turn 1 changed the folder');

    await turn(browser, 'direct-write');
    await (
      await $('[data-review-turn="2"]')
    ).waitForExist({ timeout: 15000, timeoutMsg: 'turn 2 ended without “Review changes”' });
    assert.match(await text('[data-review-turn="2"]'), /^Review changes · 2 files \+2 −0$/);

    await click('[data-review-turn="1"]');
    await (await $(PANEL)).waitForDisplayed({ timeout: 10000 });
    await browser.waitUntil(async () => (await texts(`${PANEL} [data-file]`)).length === 2, {
      timeout: 10000,
      timeoutMsg: 'the panel did not list turn 1’s two files',
    });
    const files = await texts(`${PANEL} [data-file]`);
    assert.match(files[0], /^demo-folder\/nested\/created\.txt created/);
    assert.match(files[1], /^demo-notes\.txt changed/);
    // The diff of the user's file against the checkpoint: their line went, the agent's came.
    await click(`${PANEL} [data-file="demo-notes.txt"]`);
    await browser.waitUntil(
      async () => (await texts(`${PANEL} [data-review-diff] tr.del .code`)).length > 0,
      { timeout: 10000, timeoutMsg: 'no diff of demo-notes.txt' },
    );
    assert.deepEqual(await texts(`${PANEL} [data-review-diff] tr.del .code`), [
      'my own notes, before any agent',
    ]);
    assert.match(await text(`${PANEL} [data-review-storage]`), /^Checkpoints of this folder: /);
    await shotsOf('checkpoints-review');
    await browser.keys('Escape');
    await (await $(PANEL)).waitForExist({ reverse: true, timeout: 5000 });
  });

  it('refuses to overwrite the user’s edit without asking, and overwrites when told', async () => {
    const edited = 'the user changed this after the turn\n';
    writeFileSync(join(project, 'direct-notes.txt'), edited);
    await click('[data-review-turn="2"]');
    await click(`${PANEL} [data-undo-turn]`);
    const conflict = `${PANEL} [data-conflict]`;
    await (await $(conflict)).waitForDisplayed({ timeout: 15000, timeoutMsg: 'no conflict' });
    assert.equal(await text(`${conflict} h3`), 'A file changed since: nothing was written');
    const versions = await texts(`${conflict} [data-conflict-file="direct-notes.txt"] .version`);
    assert.deepEqual(versions, [
      'Before the turn No such file.',
      "After the turn written by the agent's own tool",
      `Now ${edited.trim()}`,
    ]);
    assert.equal(
      await text(`${conflict} [data-conflict-file="direct-notes.txt"] [data-undo-does]`),
      'It did not exist before the turn: Overwrite anyway deletes it.',
    );
    assert.equal(readFileSync(join(project, 'direct-notes.txt'), 'utf8'), edited);
    await shotsOf('checkpoints-conflict');
    await click(`${conflict} [data-keep-mine]`);
    assert.equal(await said(), 'Nothing was changed: undo turn 2 was not done.');
    assert.equal(readFileSync(join(project, 'direct-notes.txt'), 'utf8'), edited);

    await click(`${PANEL} [data-undo-turn]`);
    await click(`${conflict} [data-force]`);
    assert.match(await said(), /^Undid turn 2: 2 files put back\. This is step 3/);
    assert.deepEqual(tree(project), afterTurn1, 'the folder is as turn 1 left it');
    await browser.keys('Escape');
  });

  it('restores the folder to before turn 1 byte for byte, and the restore can be undone', async () => {
    await click('[data-open-review]');
    await (await $(PANEL)).waitForDisplayed({ timeout: 10000 });
    await click(`${PANEL} [data-restore="1"]`);
    await (await $(`${PANEL} [data-restore-confirm]`)).waitForDisplayed({ timeout: 5000 });
    await click(`${PANEL} [data-restore-yes]`);
    assert.match(
      await said(),
      /^Restored the folder to before turn 1: \d+ files written or removed/,
    );
    assert.deepEqual(tree(project), initial, 'every file as it was, and no folder left behind');

    // The restore is step 4: undoing it brings turn 1's files back.
    await click(`${PANEL} [data-scope="4"]`);
    await browser.waitUntil(
      async () => (await text(`${PANEL} #review-title`)).startsWith('Step 4: restore'),
      { timeout: 10000, timeoutMsg: 'step 4 is not the restore' },
    );
    await click(`${PANEL} [data-undo-turn]`);
    assert.match(await said(), /^Undid step 4: /);
    assert.deepEqual(tree(project), afterTurn1);
    await browser.keys('Escape');
    // The thread keeps what the undos did.
    const notices = await texts('.thread-view [data-entry="notice"]');
    assert.ok(
      notices.some((n) => n.startsWith('Undid step 4')),
      `the thread says the undo: ${notices.join(' | ')}`,
    );
  });
});

const repo = resolve(import.meta.dirname, '..', '..');
const realAgents = join(repo, 'tests', 'real-agents');
const agentJs = join(
  realAgents,
  'node_modules',
  '@zed-industries',
  'claude-code-acp',
  'dist',
  'index.js',
);

describe('a real agent’s turn (claude-code-acp), undone from the window', () => {
  const config = process.env.ACP_DESK_CONFIG_DIR ?? '';
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-real-')));
  const proj = join(work, 'proj');
  let server;
  let initial;

  before(async () => {
    assert.ok(
      existsSync(agentJs),
      `claude-code-acp is not installed: run (cd tests/real-agents && npm ci) (${agentJs})`,
    );
    mkdirSync(proj);
    // What tests/real-agents/run.sh's projects hold: the scripted model edits `colour = red`.
    writeFileSync(join(proj, 'edit.txt'), 'title: test\ncolour = red\nend\n');
    writeFileSync(join(proj, 'notes.txt'), 'notes of the user\n');
    initial = tree(proj);
    const portFile = join(work, 'port');
    server = spawn(
      process.execPath,
      [
        join(realAgents, 'fake-anthropic.mjs'),
        '--port-file',
        portFile,
        '--log',
        join(work, 'requests.jsonl'),
      ],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100 && !existsSync(portFile); i++)
      await new Promise((r) => setTimeout(r, 100));
    const port = readFileSync(portFile, 'utf8').trim();
    assert.ok(port, 'the scripted model server started');
    mkdirSync(join(work, 'home'));
    mkdirSync(config, { recursive: true });
    writeFileSync(
      join(config, 'settings.json'),
      JSON.stringify({
        agent_servers: {
          'claude-real': {
            command: process.execPath,
            args: [agentJs],
            // A home of its own and the scripted model: nothing of the machine's Claude leaks in.
            env: {
              HOME: join(work, 'home'),
              ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
              ANTHROPIC_API_KEY: 'test',
              DISABLE_TELEMETRY: '1',
              DISABLE_AUTOUPDATER: '1',
              DISABLE_ERROR_REPORTING: '1',
              CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
              IS_SANDBOX: '1',
              CLAUDE_CODE_MAX_RETRIES: '1',
            },
          },
        },
      }),
    );
    rmSync(join(process.env.ACP_DESK_DATA_DIR ?? '', 'state.json'), { force: true });
    browser = await launchApp(['--agent', 'claude-real', proj]);
    const status = await $('.session-header .status');
    await status.waitForExist({ timeout: 30000 });
    await browser.waitUntil(async () => (await status.getAttribute('data-status')) === 'ready', {
      timeout: 60000,
      timeoutMsg: 'claude-code-acp never became ready',
    });
    const notice = await $('[data-desktop-notice] button');
    if (await notice.isExisting()) await notice.click();
  });

  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    server?.kill();
    rmSync(join(config, 'settings.json'), { force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('edits, writes and runs a command in one turn; Undo turn 1 puts every byte back', async () => {
    const box = await $('#composer');
    await box.waitForEnabled({ timeout: 20000 });
    await box.setValue('change the project three ways');
    await (await $('#send')).click();
    // Each of its tools asks first: allow them as they come, until the turn's review is offered.
    const review = await $('[data-review-turn="1"]');
    await browser.waitUntil(
      async () => {
        const allow = await $('[data-permission] [data-option-kind="allow_once"]');
        if (await allow.isExisting()) await allow.click().catch(() => undefined);
        return review.isExisting();
      },
      { timeout: 120000, interval: 500, timeoutMsg: 'the turn ended without “Review changes”' },
    );
    assert.match(await text('[data-review-turn="1"]'), /^Review changes · 3 files \+\d+ −\d+$/);
    assert.equal(readFileSync(join(proj, 'out.txt'), 'utf8'), 'hi-from-bash\n');
    await click('[data-review-turn="1"]');
    await browser.waitUntil(async () => (await texts(`${PANEL} [data-file]`)).length === 3, {
      timeout: 10000,
      timeoutMsg: 'the panel did not list the turn’s three files',
    });
    const files = await texts(`${PANEL} [data-file]`);
    assert.match(files[0], /^edit\.txt changed \+1 −1$/);
    assert.match(files[1], /^new\.txt created \+1 −0$/);
    assert.match(files[2], /^out\.txt created \+1 −0$/);
    await shot('checkpoints-real-agent-1100x760.png');
    await click(`${PANEL} [data-undo-turn]`);
    assert.match(await said(), /^Undid turn 1: 3 files put back\./);
    assert.deepEqual(tree(proj), initial, 'the folder is byte for byte as before the turn');
  });
});
