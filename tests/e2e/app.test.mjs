// End to end: the real app (target/debug/acp-desk) driven through tauri-driver and
// WebKitWebDriver under Xvfb (run.sh sets that up), with the real demo agent.
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { remote } from 'webdriverio';

const repo = resolve(import.meta.dirname, '..', '..');
const app = process.env.ACP_DESK_APP ?? join(repo, 'target', 'debug', 'acp-desk');
const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'acp-desk-shots-'));
const project = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-')));
writeFileSync(join(project, 'README.md'), '# A project for the end-to-end test\n');
mkdirSync(shots, { recursive: true });

/** Live processes (not zombies) whose working folder is `dir`. */
function processesIn(dir) {
  const found = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) !== dir) continue;
      // PID 1 here does not reap orphans: a zombie is not a live process.
      if (!/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) found.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

let browser;

/** Starts the app with these arguments in a new WebDriver session. */
function launch(args) {
  return remote({
    hostname: '127.0.0.1',
    port: Number(process.env.TAURI_DRIVER_PORT ?? 4444),
    logLevel: 'warn',
    capabilities: {
      browserName: 'wry',
      'wdio:enforceWebDriverClassic': true,
      'tauri:options': { application: app, args },
    },
  });
}

async function text(selector) {
  return (await browser.$(selector)).getText();
}

async function prompt(words) {
  const box = await browser.$('#composer');
  await box.waitForEnabled({ timeout: 20000 });
  await box.setValue(words);
  await (await browser.$('#send')).click();
}

async function turnEnds(n) {
  await browser.waitUntil(async () => (await browser.$$('.entry.turn-end')).length >= n, {
    timeout: 30000,
    timeoutMsg: `turn ${n} did not end`,
  });
}

describe('ACP Desk, end to end', () => {
  before(async () => {
    browser = await launch(['--agent', 'demo', project]);
  });

  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
  });

  it('opens the folder given on the command line with the demo agent', async () => {
    const status = await browser.$('.status');
    await status.waitForExist({ timeout: 20000 });
    await browser.waitUntil(async () => (await status.getAttribute('data-status')) === 'ready', {
      timeout: 20000,
      timeoutMsg: 'the session never became ready',
    });
    assert.equal(await text('.where .folder'), project);
    assert.match(await text('.where .agent'), /demo agent/i);
  });

  it('streams an answer, with its thought, and ends the turn', async () => {
    await prompt('stream');
    await turnEnds(1);
    const answer = await text('.entry.agent');
    assert.match(answer, /ledgerline/, 'the streamed answer is shown');
    assert.ok(answer.length > 200, `the whole answer arrived (${answer.length} chars)`);
    assert.equal((await browser.$$('.entry.thought')).length, 1, 'the thought is shown once');
    assert.equal(await text('.entry.user .bubble'), 'stream');
    assert.match(await text('.entry.turn-end'), /Turn ended/);
    await browser.saveScreenshot(join(shots, 'streamed-answer.png'));
  });

  it('asks permission in a dialog, and goes on once allowed', async () => {
    await prompt('permission');
    const dialog = await browser.$('.permission-dialog');
    await dialog.waitForDisplayed({ timeout: 20000 });
    assert.match(await dialog.getText(), /cargo test/, 'the dialog shows what would run');
    assert.match(await text('.entry.tool .tool-title'), /cargo test/);
    await browser.saveScreenshot(join(shots, 'permission-dialog.png'));
    await (await browser.$('.permission-dialog button[data-kind="allow_once"]')).click();
    await dialog.waitForDisplayed({ reverse: true, timeout: 10000 });
    await turnEnds(2);
    const settled = await browser.$$('.entry.settled');
    assert.equal(settled.length, 1);
    assert.match(await settled[0].getText(), /you chose “Allow once”/);
    const tool = await browser.$('.entry.tool');
    assert.equal(await tool.getAttribute('data-status'), 'completed');
  });

  it('stops a running turn', async () => {
    const before = (await browser.$$('.entry.agent')).length;
    await prompt('slow');
    const stop = await browser.$('#stop');
    await stop.waitForDisplayed({ timeout: 10000 });
    // Stop once the slow answer is visibly streaming.
    await browser.waitUntil(async () => (await browser.$$('.entry.agent')).length > before, {
      timeout: 15000,
      timeoutMsg: 'the slow answer never started',
    });
    await stop.click();
    await turnEnds(3);
    const ends = await browser.$$('.entry.turn-end');
    assert.equal(await ends[2].getAttribute('data-reason'), 'cancelled');
    assert.equal(await ends[2].getText(), 'Stopped.');
    assert.ok(await (await browser.$('#composer')).isEnabled(), 'the window stays usable');
  });

  it('ends the agent when the app quits (Ctrl+Q), through the orderly close', async () => {
    assert.ok(processesIn(project).length > 0, 'the agent runs in the project folder');
    // A user's Ctrl+Q (File → Quit), typed into the window with xdotool: WebDriver's own
    // Close Window ends the process instead, which only the supervisor's lifeline would cover.
    const win = execFileSync('xdotool', ['search', '--name', '^ACP Desk$'], { encoding: 'utf8' })
      .trim()
      .split('\n')[0];
    execFileSync('xdotool', ['windowfocus', '--sync', win]);
    execFileSync('xdotool', ['key', 'ctrl+q']);
    const deadline = Date.now() + 10000;
    while (processesIn(project).length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(processesIn(project), [], 'nothing is left running in the project folder');
    // The close ran (not only the lifeline): the session's audit log ends with `session-ended`,
    // which only a close writes.
    const audit = join(process.env.ACP_DESK_DATA_DIR ?? '', 'audit');
    const logs = readdirSync(audit, { recursive: true })
      .filter((f) => String(f).endsWith('.jsonl'))
      .map((f) => readFileSync(join(audit, String(f)), 'utf8'));
    assert.equal(logs.length, 1, 'one session, one audit log');
    assert.match(logs[0].trim().split('\n').at(-1), /"event":"session-ended"/);
    await browser.deleteSession().catch(() => undefined);
    browser = undefined;
  });
});

describe('bad input gets a clear message, and the window stays usable', () => {
  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    browser = undefined;
    rmSync(project, { recursive: true, force: true });
  });

  it('a folder that does not exist', async () => {
    browser = await launch(['--agent', 'demo', join(project, 'vanished')]);
    const banner = await browser.$('.banner');
    await banner.waitForDisplayed({ timeout: 20000 });
    assert.equal(await banner.getAttribute('data-code'), 'folder-missing');
    assert.match(await banner.getText(), /does not exist .*Open another folder/);
    assert.match(await text('.drop-target h1'), /Drop a folder here/);
    assert.ok(await (await browser.$('.drop-target button')).isEnabled());
    await browser.saveScreenshot(join(shots, 'folder-missing.png'));
    await browser.deleteSession();
    browser = undefined;
  });

  it('an agent that cannot start', async () => {
    const config = process.env.ACP_DESK_CONFIG_DIR;
    assert.ok(config, 'run.sh gives this run its own config folder');
    mkdirSync(config, { recursive: true });
    writeFileSync(
      join(config, 'settings.json'),
      JSON.stringify({ agent_servers: { broken: { command: '/nonexistent/acp-agent' } } }),
    );
    try {
      browser = await launch(['--agent', 'broken', project]);
      const status = await browser.$('.status');
      await browser.waitUntil(async () => (await status.getAttribute('data-status')) === 'dead', {
        timeout: 20000,
        timeoutMsg: 'the session never said it could not start',
      });
      assert.match(await text('.entry.error'), /\/nonexistent\/acp-agent/);
      assert.match(await text('.ended'), /The session has ended/);
    } finally {
      rmSync(join(config, 'settings.json'), { force: true });
      await browser?.deleteSession().catch(() => undefined);
      browser = undefined;
    }
  });

  it('an agent that dies in the middle of a turn', async () => {
    browser = await launch(['--agent', 'demo', project]);
    await prompt('crash');
    const ended = await browser.$('.ended');
    await ended.waitForDisplayed({ timeout: 20000 });
    assert.match(await ended.getText(), /exited with code 3/);
    assert.match(await text('.entry.error'), /exited with code 3/);
    await turnEnds(1);
    assert.equal(await (await browser.$('.entry.turn-end')).getAttribute('data-reason'), 'error');
    assert.equal(await (await browser.$('.status')).getAttribute('data-status'), 'dead');
    await browser.saveScreenshot(join(shots, 'agent-crashed.png'));
    // The window stays usable: a new session in the same folder.
    await (await browser.$('.ended button')).click();
    const status = await browser.$('.status');
    await browser.waitUntil(async () => (await status.getAttribute('data-status')) === 'ready', {
      timeout: 20000,
      timeoutMsg: 'no new session after the crash',
    });
    assert.equal(await browser.$$('.entry.error').length, 0, 'the new session starts clean');
  });
});
