// End to end, the History view in the real app with a real agent process: a session's turn is
// recorded, found by search with its hit marked, opened at the hit, continued with the agent
// (which has the conversation: the demo agent offering session/resume), and deleted after a
// confirmation, at the agent too. Run by run.sh after the others, with the same data folder.
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { app, entries as entriesOf, launchApp as launch, turn as turnIn } from './lib.mjs';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'acp-desk-shots-'));
const data = process.env.ACP_DESK_DATA_DIR ?? '';
const config = process.env.ACP_DESK_CONFIG_DIR ?? '';
const folder = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-history-')));
const agentSessions = mkdtempSync(join(tmpdir(), 'acp-desk-history-agent-'));
mkdirSync(shots, { recursive: true });

let browser;

async function ready() {
  await browser.waitUntil(
    async () =>
      (await browser.execute(() =>
        document.querySelector('.session-header .status')?.getAttribute('data-status'),
      )) === 'ready',
    { timeout: 20000, timeoutMsg: 'the session never became ready' },
  );
}

async function button(name) {
  const b = await browser.$(`button=${name}`);
  await b.waitForClickable({ timeout: 10000 });
  return b;
}

async function closeShownSession() {
  await (await browser.$('[data-session-list] .close-session')).click();
  // A session with turns asks first.
  const confirm = await browser.$('.confirm-close button.danger');
  if (await confirm.isExisting()) await confirm.click();
  await browser.waitUntil(
    async () => (await browser.$$('[data-session-list] .session-select')).length === 0,
    { timeout: 10000, timeoutMsg: 'the session did not close' },
  );
}

describe('the History view with a real agent', () => {
  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    rmSync(join(config, 'settings.json'), { force: true });
    rmSync(folder, { recursive: true, force: true });
    rmSync(agentSessions, { recursive: true, force: true });
  });

  it('finds a turn, opens it at the hit, continues it with the agent, deletes it', async () => {
    // Other tests' sidebars are not this test's.
    rmSync(join(data, 'state.json'), { force: true });
    mkdirSync(config, { recursive: true });
    writeFileSync(
      join(config, 'settings.json'),
      JSON.stringify({
        agent_servers: {
          'demo-history': {
            command: join(dirname(app), 'acp-desk-demo-agent'),
            args: ['--session-methods', 'resume,delete', '--session-dir', agentSessions],
          },
        },
      }),
    );
    browser = await launch(['--agent', 'demo-history', folder]);
    await ready();
    await turnIn(browser, 'remember the word aubergine');
    await closeShownSession();

    // Found by search, the hit marked.
    await (await button('History')).click();
    const search = await browser.$('input[type="search"]');
    await search.setValue('aubergine');
    const hit = await browser.$('[data-hit-session]');
    await hit.waitForExist({ timeout: 10000, timeoutMsg: 'no hit for “aubergine”' });
    const marked = await hit.$('mark');
    assert.equal((await marked.getText()).toLowerCase(), 'aubergine');
    await browser.saveScreenshot(join(shots, 'history-real-search.png'));

    // Opened at the hit: the stored transcript, read-only, the hit's entry marked.
    await hit.click();
    const past = await browser.$('[data-past-session]');
    await past.waitForExist({ timeout: 10000 });
    const id = await past.getAttribute('data-past-session');
    await (await browser.$('.item[data-hit]')).waitForExist({ timeout: 10000 });
    assert.equal(await (await browser.$('#composer')).isExisting(), false, 'read-only');
    const stored = await entriesOf(browser);
    assert.ok(stored.some((e) => e.type === 'user' && /aubergine/.test(e.text)));

    // Continued: a live session with the stored thread above, the agent has the conversation.
    await (await browser.$('[data-continue]')).click();
    await ready();
    const live = await entriesOf(browser);
    assert.ok(
      live.some((e) => e.type === 'user' && /aubergine/.test(e.text)),
      'stored turn kept',
    );
    await turnIn(browser, 'what did I say first?');
    const after = await entriesOf(browser);
    assert.match(after.at(-2)?.text ?? '', /You first said: .remember the word aubergine/);
    await browser.saveScreenshot(join(shots, 'history-real-continued.png'));
    await closeShownSession();

    // Deleted after a confirmation: gone from the history, and at the agent (session/delete).
    const records = () => readdirSync(agentSessions).filter((f) => f.endsWith('.json'));
    assert.equal(records().length, 1, 'the agent keeps one session');
    await (await button('History')).click();
    // The last search is still there: emptied, the list of sessions.
    // (As a user empties it: WebDriver's clear fires no input event.)
    await (await browser.$('input[type="search"]')).click();
    await browser.keys(['Control', 'a']);
    await browser.keys('Backspace');
    const row = await browser.$(`[data-history-session="${id}"]`);
    await row.waitForExist({ timeout: 10000 });
    await row.click();
    await (await button('Delete')).click();
    const ask = await browser.$('[role="alertdialog"]');
    await ask.waitForExist({ timeout: 5000 });
    await (await ask.$('button.danger')).click();
    await browser.waitUntil(
      async () => !(await (await browser.$(`[data-history-session="${id}"]`)).isExisting()),
      { timeout: 15000, timeoutMsg: 'the session stayed in the history' },
    );
    // What the view says comes with the delete's answer, which may land after the list
    // refreshed: wait for it rather than read it once.
    const saidNow = () =>
      browser.execute(() => document.querySelector('.history-said')?.textContent ?? '');
    let said = '';
    await browser.waitUntil(
      async () => {
        said = await saidNow();
        return /at the agent/.test(said);
      },
      { timeout: 10000, timeoutMsg: 'the view did not say where the session was deleted' },
    );
    assert.match(said, /at the agent/, said);
    assert.deepEqual(records(), [], 'deleted at the agent too');
    assert.equal(readFileSync(join(data, 'history.sqlite3')).length > 0, true);
  });
});
