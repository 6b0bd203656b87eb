// End to end: a terminal login in the real app (run.sh: Xvfb, tauri-driver), with the real demo
// agent (`ACP_DESK_DEMO_AUTH=terminal`: `session/new` answers -32000 until its `login`
// subcommand, which reads a code from its terminal, has written the marker). The session fails
// with auth-required; the user clicks the sign-in method, the login terminal opens with the
// keyboard in it, and keys typed there (WebDriver's keys into xterm.js) reach the program on
// the pty: a wrong code exits 1 and says so, the right one exits 0 and the session reconnects
// signed in and is ready. No login process is left behind.
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
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { app, launchApp } from './lib.mjs';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'acp-desk-shots-'));
mkdirSync(shots, { recursive: true });
const project = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-login-')));
const marker = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-login-marker-')));
const config = process.env.ACP_DESK_CONFIG_DIR ?? '';
const settings = join(config, 'settings.json');
/** Its own code, so that only what is typed here can sign in. */
const code = `e2e-${process.pid}`;

let browser;

/** Live processes (not zombies) running the demo agent's `login` (the program itself, not its
 * supervisor, whose command line names it too). */
function logins() {
  const found = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (!cmd[0]?.endsWith('acp-desk-demo-agent') || cmd[1] !== 'login') continue;
      if (!/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) found.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

async function headerStatus() {
  return browser.execute(
    () => document.querySelector('.session-header .status')?.getAttribute('data-status') ?? null,
  );
}

/** The login terminal's state (`data-login-state`) and its state line. */
async function loginState() {
  return browser.execute(() => {
    const t = document.querySelector('.login-terminal');
    return {
      state: t?.getAttribute('data-login-state') ?? null,
      line: t?.querySelector('.state')?.textContent?.trim() ?? '',
      screen: t?.querySelector('.xterm-rows')?.textContent ?? '',
      // xterm.js takes the keyboard through its helper textarea.
      focused: !!document.activeElement?.closest('.login-terminal .xterm'),
    };
  });
}

async function untilLogin(want, what) {
  let last = null;
  await browser
    .waitUntil(async () => want((last = await loginState())), { timeout: 20000 })
    .catch(async () => {
      await browser.saveScreenshot(join(shots, 'login-terminal-failed.png')).catch(() => undefined);
      assert.fail(`${what}; the login terminal is ${JSON.stringify(last)}`);
    });
  return last;
}

/** Types `text`, then Enter, on the keyboard as a person does (X key events through xdotool
 * into the focused window; WebKitWebDriver's key actions send keydowns without the
 * keypress/input that xterm.js reads printable characters from). */
function typeLine(text) {
  const win = execFileSync('xdotool', ['search', '--name', 'ACP Desk$'], { encoding: 'utf8' })
    .trim()
    .split('\n')[0];
  execFileSync('xdotool', ['windowfocus', '--sync', win]);
  execFileSync('xdotool', ['type', '--delay', '30', text]);
  execFileSync('xdotool', ['key', 'Return']);
}

/** A fresh start of the app with the demo agent needing a terminal login in `project`: the
 * session fails for want of a sign-in, and the thread offers the agent's method. `folder`:
 * where to open (a new one, for the second test: the first signed its marker in). */
async function launchForLogin(folder = project, auth = marker) {
  // What the tests before this one left open is not this test's.
  rmSync(join(process.env.ACP_DESK_DATA_DIR ?? '', 'state.json'), { force: true });
  mkdirSync(config, { recursive: true });
  writeFileSync(
    settings,
    JSON.stringify({
      agent_servers: {
        'demo-login': {
          command: join(dirname(app), 'acp-desk-demo-agent'),
          env: {
            ACP_DESK_DEMO_AUTH: 'terminal',
            ACP_DESK_DEMO_AUTH_DIR: auth,
            ACP_DESK_DEMO_LOGIN_CODE: code,
          },
        },
      },
    }),
  );
  browser = await launchApp(['--agent', 'demo-login', folder]);
  await browser.waitUntil(async () => (await headerStatus()) === 'dead', {
    timeout: 20000,
    timeoutMsg: 'the session did not fail with auth-required',
  });
}

/** File → Quit as a user types it (WebDriver's own close would kill the process instead). */
function quit() {
  const win = execFileSync('xdotool', ['search', '--name', 'ACP Desk$'], { encoding: 'utf8' })
    .trim()
    .split('\n')[0];
  execFileSync('xdotool', ['windowfocus', '--sync', win]);
  execFileSync('xdotool', ['key', 'ctrl+q']);
}

describe('a terminal login in the window', () => {
  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    rmSync(settings, { force: true });
    rmSync(project, { recursive: true, force: true });
    rmSync(marker, { recursive: true, force: true });
  });

  it('takes the keys typed in its terminal: a wrong code exits 1, the right one signs in', async () => {
    await launchForLogin();
    const signIn = await browser.$('[data-sign-in="demo-terminal-login"]');
    await signIn.waitForClickable({ timeout: 10000 });
    await signIn.click();

    // The terminal opens running the login, with the keyboard in it.
    let s = await untilLogin(
      (l) => l.state === 'running' && l.screen.includes('Enter the login code'),
      'the login did not start and ask for the code',
    );
    assert.ok(s.focused, 'the login terminal has the focus when it opens');
    assert.equal(logins().length, 1, 'one login program runs');
    await browser.saveScreenshot(join(shots, 'login-terminal-running.png'));

    typeLine('not-the-code');
    // (The terminal draws what it was sent on its next frame: wait for the words too.)
    s = await untilLogin(
      (l) => l.state === 'exited' && l.screen.includes('Wrong code'),
      'the wrong code did not end the login',
    );
    assert.match(s.line, /exited with code 1/);
    assert.match(s.line, /not signed in/);
    assert.match(s.screen, /not-the-code/, 'the terminal echoed what was typed');
    assert.match(s.screen, /Wrong code/);
    assert.equal(await headerStatus(), 'dead', 'a failed login leaves the session as it was');
    await browser.saveScreenshot(join(shots, 'login-terminal-wrong-code.png'));

    // Again, with the right code: exit 0, and the session reconnects signed in.
    const retry = await browser.$('[data-login-retry]');
    await retry.waitForClickable({ timeout: 10000 });
    await retry.click();
    await untilLogin(
      (l) => l.state === 'running' && l.screen.includes('Enter the login code') && l.focused,
      'the second login did not start with the focus',
    );
    typeLine(code);
    // Signed in: the dialog says so, and the session reconnects signed in and is ready.
    await browser
      .$('[data-login-result="ok"]')
      .then((e) => e.waitForDisplayed({ timeout: 30000 }))
      .catch(async () => {
        await browser.saveScreenshot(join(shots, 'login-terminal-failed.png'));
        assert.fail(`the right code did not sign in: ${JSON.stringify(await loginState())}`);
      });
    assert.ok(readFileSync(join(marker, 'signed-in'), 'utf8').length > 0, 'the login signed in');
    // The same terminal says how its program ended (it stays mounted while the session restarts).
    s = await untilLogin(
      (l) => l.state === 'exited' && l.screen.includes('Signed in'),
      'the login terminal did not show the signed-in end',
    );
    assert.match(s.line, /^exited with code 0: signed in/);
    assert.equal(logins().length, 0, 'no second login started after the first signed in');
    await browser.waitUntil(async () => (await headerStatus()) === 'ready', {
      timeout: 30000,
      timeoutMsg: 'the session did not reconnect signed in',
    });
    await browser.saveScreenshot(join(shots, 'login-terminal-signed-in.png'));
    // Closed: no login program is left.
    // (The dialog's Close, or the terminal's own once its program ended.)
    await (await browser.$('[data-login-close], .login-terminal button.close')).click();
    const deadline = Date.now() + 10000;
    while (logins().length > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(logins(), [], 'no login program is left');
    await browser.deleteSession().catch(() => undefined);
    browser = undefined;
  });

  it('ends with the app: quitting mid-login leaves no login program', async () => {
    // The first test's app, if it failed before closing it.
    await browser?.deleteSession().catch(() => undefined);
    const folder = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-login-quit-')));
    const auth = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-login-quit-marker-')));
    try {
      await launchForLogin(folder, auth);
      const signIn = await browser.$('[data-sign-in="demo-terminal-login"]');
      await signIn.waitForClickable({ timeout: 10000 });
      await signIn.click();
      await untilLogin(
        (l) => l.state === 'running' && l.screen.includes('Enter the login code'),
        'the login did not start',
      );
      assert.equal(logins().length, 1, 'one login program runs');
      quit();
      const deadline = Date.now() + 15000;
      while (logins().length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(logins(), [], 'the login program outlived the app');
      await browser.deleteSession().catch(() => undefined);
      browser = undefined;
    } finally {
      rmSync(folder, { recursive: true, force: true });
      rmSync(auth, { recursive: true, force: true });
    }
  });
});
