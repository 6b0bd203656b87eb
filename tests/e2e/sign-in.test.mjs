// End to end: signing in to an agent in the real app (run.sh: Xvfb, tauri-driver), against the
// demo agent's sign-in scenarios (crates/acp-desk-demo-agent/src/auth.rs, ACP_DESK_DEMO_AUTH*).
//
// - API key at `session/new`: the start is refused (-32000); the dead card offers the agent's
//   methods; the key typed in the window goes to the keychain (secret-tool finds it under
//   `agent-auth/<agent>/<method>`) and nowhere in the page; the session restarts, the engine
//   sends the key in `authenticate` (the agent's record), and the session is ready. Without a
//   Secret Service (run.sh runs this file inside tests/keychain/run.sh when gnome-keyring is
//   installed) the dialog says the keychain cannot be used and keeps nothing.
// - Agent method at a prompt: the session opens; a prompt is refused (-32000); the thread says to
//   sign in; Sign in restarts the agent with `authenticate {methodId}` and the prompt that hit the
//   login is sent again, once.
// Screenshots at 1280x800 and 800x600 (E2E_SCREENSHOTS=docs/screenshots to refresh them).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { app, entries, launchApp } from './lib.mjs';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'acp-desk-shots-'));
mkdirSync(shots, { recursive: true });
const config = process.env.ACP_DESK_CONFIG_DIR;
const data = process.env.ACP_DESK_DATA_DIR ?? '';
const settings = config ? join(config, 'settings.json') : null;
const keychain = process.env.ACP_DESK_KEYCHAIN_HARNESS === '1';
const demoAgent = join(dirname(app), 'acp-desk-demo-agent');
const work = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-sign-in-')));
const project = join(work, 'project');
const record = join(work, 'agent-record.jsonl');
// Characters a careless page or log would mangle or escape.
const apiKey = `k-${randomBytes(12).toString('hex')}-"q\\<b>`;
let browser;

function writeSettings() {
  mkdirSync(config, { recursive: true });
  writeFileSync(
    settings,
    JSON.stringify(
      {
        agent_servers: {
          keyed: {
            command: demoAgent,
            env: {
              ACP_DESK_DEMO_AUTH: 'api-key',
              ACP_DESK_DEMO_AUTH_AT: 'new',
              ACP_DESK_DEMO_API_KEY: apiKey,
              ACP_DESK_DEMO_RECORD: record,
            },
          },
          login: {
            command: demoAgent,
            env: {
              ACP_DESK_DEMO_AUTH: 'agent',
              ACP_DESK_DEMO_AUTH_AT: 'prompt',
              ACP_DESK_DEMO_AUTH_DIR: join(work, 'auth'),
              ACP_DESK_DEMO_RECORD: record,
            },
          },
        },
      },
      null,
      2,
    ),
  );
}

/** What the demo agent recorded it received (session/new, authenticate). */
function received() {
  if (!existsSync(record)) return [];
  return readFileSync(record, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

/** Waits for `selector`, saying what the window showed instead when it never came. */
async function shown(selector, timeout = 30000) {
  const el = await browser.$(selector);
  try {
    await el.waitForExist({ timeout });
  } catch {
    const said = await browser.execute(() => document.body.innerText);
    assert.fail(`${selector} never showed; the window said:\n${said}`);
  }
  return el;
}

async function statusIs(want, timeout = 30000) {
  const status = await browser.$('.session-header .status');
  await status.waitForExist({ timeout });
  await browser.waitUntil(async () => (await status.getAttribute('data-status')) === want, {
    timeout,
    timeoutMsg: `the session never became ${want}`,
  });
}

/** Both sizes: the window at 800x600, then back to the screen's 1280x800. */
async function shotsOf(name) {
  await browser.saveScreenshot(join(shots, `${name}-1280x800.png`));
  await browser.setWindowSize(800, 600);
  await browser.pause(400);
  await browser.saveScreenshot(join(shots, `${name}-800x600.png`));
  await browser.setWindowSize(1280, 800);
  await browser.pause(400);
}

/** The page's markup, text and every field's value: where a typed key must not be. */
function pageHolds(browser) {
  return browser.execute(() => ({
    html: document.documentElement.outerHTML,
    text: document.body.innerText,
    values: [...document.querySelectorAll('input, textarea')].map((e) => e.value),
  }));
}

describe('signing in to an agent in the window, end to end', () => {
  before(() => {
    assert.ok(settings, 'run.sh sets ACP_DESK_CONFIG_DIR (never the user’s own settings)');
    assert.ok(existsSync(demoAgent), `the demo agent is built next to the app: ${demoAgent}`);
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'README.md'), '# A project that needs a sign-in\n');
    writeSettings();
    rmSync(join(data, 'state.json'), { force: true });
  });

  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    if (settings) rmSync(settings, { force: true });
    rmSync(work, { recursive: true, force: true });
  });

  describe('an API key asked for at session/new', () => {
    before(async () => {
      browser = await launchApp(['--agent', 'keyed', project]);
    });
    after(async () => {
      await browser?.deleteSession().catch(() => undefined);
      browser = undefined;
      rmSync(join(data, 'state.json'), { force: true });
    });

    it('the refused start offers the agent’s methods, not a broken command', async () => {
      await shown('[data-dead] [data-sign-in-actions]');
      assert.equal(await (await browser.$('[data-start-failed]')).isExisting(), false);
      const button = await browser.$('[data-sign-in="demo-api-key"]');
      assert.equal(await button.getText(), 'Enter a demo API key');
      const headline = await (await browser.$('[data-dead] strong')).getText();
      assert.equal(headline, 'The agent could not start a session: it needs you to sign in.');
      await shotsOf('sign-in-dead-card');
    });

    it('the key typed goes to the keychain, the session starts with it', async () => {
      await (await browser.$('[data-sign-in="demo-api-key"]')).click();
      const field = await browser.$('[data-api-key]');
      await field.waitForExist({ timeout: 5000 });
      assert.equal(await field.getAttribute('type'), 'password');
      await field.setValue(apiKey);
      await (await browser.$('[data-api-key-save]')).click();
      if (!keychain) {
        const error = await browser.$('[data-api-key-error]');
        await error.waitForExist({ timeout: 20000 });
        assert.match(await error.getText(), /keychain/i);
        assert.equal(await field.getProperty('value'), '', 'the field is emptied');
        const page = await pageHolds(browser);
        assert.ok(!JSON.stringify(page).includes(apiKey), 'the key is nowhere in the page');
        return;
      }
      await statusIs('ready');
      assert.equal(await (await browser.$('[data-api-key-dialog]')).isExisting(), false);
      const stored = execFileSync(
        'secret-tool',
        ['lookup', 'service', 'dev.acpdesk.desk', 'username', 'agent-auth/keyed/demo-api-key'],
        { encoding: 'utf8' },
      );
      assert.equal(stored, apiKey, 'the keychain holds exactly what was typed');
      const page = await pageHolds(browser);
      assert.ok(!JSON.stringify(page).includes(apiKey), 'the key is nowhere in the page');
      const auths = received().filter((r) => r.method === 'authenticate');
      assert.ok(auths.length >= 1, `authenticate reached the agent: ${auths.length}`);
      assert.equal(auths.at(-1).params.methodId, 'demo-api-key');
      assert.equal(
        auths.at(-1).params._meta?.['api-key'],
        apiKey,
        'the engine sent the stored key',
      );
      const result = await browser.$('[data-sign-in-result="ok"]');
      await result.waitForExist({ timeout: 10000 });
      assert.match(await result.getText(), /Signed in\. The session is ready\./);
      await shotsOf('sign-in-api-key-ready');
    });
  });

  describe('the agent’s own method, asked for at a prompt', () => {
    before(async () => {
      rmSync(record, { force: true });
      browser = await launchApp(['--agent', 'login', project]);
    });
    after(async () => {
      await browser?.deleteSession().catch(() => undefined);
      browser = undefined;
    });

    it('the refused prompt is kept and sent again once, after Sign in', async () => {
      await statusIs('ready');
      const words = 'summarize the README please';
      await (await browser.$('#composer')).setValue(words);
      await (await browser.$('#send')).click();
      const card = await shown('[data-sign-in-card]');
      assert.match(
        await card.getText(),
        /Sign in to continue\. Your prompt will be sent again once you are signed in\./,
      );
      await shotsOf('sign-in-thread-card');
      await (await browser.$('[data-sign-in-card] [data-sign-in="demo-login"]')).click();
      // The agent restarts with authenticate, then the kept prompt goes out once.
      await browser.waitUntil(
        async () =>
          (await entries(browser)).filter((e) => e.type === 'user' && e.text.includes(words))
            .length === 2,
        { timeout: 30000, timeoutMsg: 'the kept prompt was not sent again' },
      );
      await browser.waitUntil(
        async () => (await entries(browser)).filter((e) => e.type === 'turn-end').length >= 2,
        { timeout: 30000, timeoutMsg: 'the prompt sent again did not end its turn' },
      );
      await statusIs('ready');
      const auths = received().filter((r) => r.method === 'authenticate');
      assert.deepEqual(
        auths.map((a) => a.params.methodId),
        ['demo-login'],
        'one authenticate, with the method chosen',
      );
      await browser.pause(1500);
      const sent = (await entries(browser)).filter(
        (e) => e.type === 'user' && e.text.includes(words),
      );
      assert.equal(sent.length, 2, 'the prompt: once refused, once sent again, not more');
      assert.equal(await (await browser.$('[data-sign-in-card]')).isExisting(), false);
      await shotsOf('sign-in-prompt-sent-again');
    });
  });
});
