// End to end: MCP servers and secrets in the real app (run.sh: Xvfb, tauri-driver). The demo
// agent (an `agent_servers` entry advertising only http MCP servers, recording what opened each
// session) gets a stdio server, an http server whose credential_ref is not stored yet, and an sse
// one. The header's MCP chip must show what was passed and what skipped, and why, matching what the
// agent recorded (invariant 58). With a Secret Service (run.sh runs this file inside
// tests/keychain/run.sh when gnome-keyring is installed) the MCP servers & secrets view stores the
// secret, which the keychain then holds (secret-tool) and the page does not; a reconnected session
// passes the http server with it, as the agent's record shows. Without one, the view's no-keychain
// message is what is asserted (the store path is covered by the CLI tests).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { app, launchApp } from './lib.mjs';

const shots = process.env.E2E_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), 'acp-desk-shots-'));
mkdirSync(shots, { recursive: true });
const project = realpathSync(mkdtempSync(join(tmpdir(), 'acp-desk-e2e-mcp-')));
writeFileSync(join(project, 'README.md'), '# A project for the MCP chip\n');
const record = join(project, '..', `${project.split('/').pop()}-agent-record.jsonl`);

const config = process.env.ACP_DESK_CONFIG_DIR;
const data = process.env.ACP_DESK_DATA_DIR ?? '';
const settings = config ? join(config, 'settings.json') : null;
/** Inside tests/keychain/run.sh: the app's session bus has an unlocked Secret Service. */
const keychain = process.env.ACP_DESK_KEYCHAIN_HARNESS === '1';
const demoAgent = join(dirname(app), 'acp-desk-demo-agent');
const secretName = 'e2e-web-token';
// Characters a careless page or log would mangle or escape.
const secretValue = `e2e-${randomBytes(12).toString('hex')}-"q\\<b>`;
let dataBefore = [];
let browser;

async function text(selector) {
  return (await browser.$(selector)).getProperty('textContent');
}

async function statusIs(want, timeout = 20000) {
  const status = await browser.$('.session-header .status');
  await status.waitForExist({ timeout });
  await browser.waitUntil(async () => (await status.getAttribute('data-status')) === want, {
    timeout,
    timeoutMsg: `the session never became ${want}`,
  });
}

/** What the demo agent recorded it received, one entry per session/new. */
function received() {
  if (!existsSync(record)) return [];
  return readFileSync(record, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

function serverNames(line) {
  return line.params.mcpServers.map((s) => s.name).sort();
}

/** The chip's passed and skipped server names, from its popover. */
async function chipGroups() {
  return browser.execute(() => {
    const names = (group) =>
      [...document.querySelectorAll(`[data-mcp-group="${group}"] [data-mcp-server]`)]
        .map((li) => li.getAttribute('data-mcp-server'))
        .sort();
    return { passed: names('passed'), skipped: names('skipped') };
  });
}

async function openChip() {
  const chip = await browser.$('[data-mcp-chip]');
  await chip.waitForExist({ timeout: 20000 });
  if ((await chip.getAttribute('aria-expanded')) !== 'true') await chip.click();
  await (await browser.$('#mcp-popover')).waitForExist({ timeout: 5000 });
  return chip;
}

async function closeChip() {
  const chip = await browser.$('[data-mcp-chip]');
  if ((await chip.getAttribute('aria-expanded')) === 'true') await chip.click();
}

/** Every file under `dir`, for the "nowhere else" check. */
function filesUnder(dir, out = []) {
  if (!dir || !existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) filesUnder(p, out);
    else if (st.isFile()) out.push(p);
  }
  return out;
}

describe('MCP servers and secrets in the window, end to end', () => {
  before(async () => {
    assert.ok(settings, 'run.sh sets ACP_DESK_CONFIG_DIR (never the user’s own settings)');
    assert.ok(existsSync(demoAgent), `the demo agent is built next to the app: ${demoAgent}`);
    mkdirSync(config, { recursive: true });
    writeFileSync(
      settings,
      JSON.stringify(
        {
          agent_servers: {
            rec: {
              command: demoAgent,
              env: { ACP_DESK_DEMO_MCP: 'http', ACP_DESK_DEMO_RECORD: record },
            },
          },
          mcp_servers: {
            files: { command: demoAgent, args: ['--not-really-an-mcp-server'] },
            web: { url: 'http://127.0.0.1:9/mcp', credential_ref: secretName },
            events: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
          },
        },
        null,
        2,
      ),
    );
    mkdirSync(data, { recursive: true });
    dataBefore = readdirSync(data);
    rmSync(join(data, 'state.json'), { force: true });
    browser = await launchApp(['--agent', 'rec', project]);
  });

  after(async () => {
    await browser?.deleteSession().catch(() => undefined);
    if (settings) rmSync(settings, { force: true });
    for (const added of readdirSync(data).filter((f) => !dataBefore.includes(f))) {
      rmSync(join(data, added), { recursive: true, force: true });
    }
    rmSync(record, { force: true });
    rmSync(project, { recursive: true, force: true });
  });

  it('the MCP chip shows what reached the agent and what was skipped, and why', async () => {
    await statusIs('ready');
    const got = received();
    assert.equal(got.length, 1, `one session/new: ${JSON.stringify(got)}`);
    // The agent takes http, not sse; web's credential is not stored yet.
    assert.deepEqual(serverNames(got[0]), ['files'], 'what reached the agent');
    const chip = await openChip();
    assert.equal(await chip.getAttribute('data-mcp-chip'), '1');
    assert.equal(await chip.getAttribute('data-mcp-skipped'), '2');
    assert.deepEqual(await chipGroups(), { passed: ['files'], skipped: ['events', 'web'] });
    const web = await text('[data-mcp-group="skipped"] [data-mcp-server="web"]');
    assert.ok(web.includes(secretName), `the reason names the missing secret: ${web}`);
    assert.ok(web.includes('http://127.0.0.1:9/mcp'), web);
    const events = await text('[data-mcp-group="skipped"] [data-mcp-server="events"]');
    assert.match(events, /sse/i, `the reason names the transport the agent lacks: ${events}`);
    await browser.saveScreenshot(join(shots, 'mcp-chip.png'));
    await closeChip();
  });

  it('the MCP servers & secrets view lists the servers and the missing secret', async () => {
    await (await browser.$('[data-secrets-toggle]')).click();
    const row = await browser.$('[data-mcp-row="web"]');
    await row.waitForExist({ timeout: 20000 });
    assert.equal(await row.getAttribute('data-source'), 'settings');
    for (const name of ['files', 'events']) {
      assert.ok(await (await browser.$(`[data-mcp-row="${name}"]`)).isExisting(), name);
    }
    if (!keychain) {
      const said = await text('[data-no-keychain]');
      assert.match(said, /keychain cannot be used/i, said);
      assert.ok(
        (await (await browser.$('input[name="secret-value"]')).getAttribute('disabled')) !== null,
        'no field to type a secret into that could not be stored',
      );
      await browser.saveScreenshot(join(shots, 'mcp-no-keychain.png'));
      return;
    }
    const noKeychain = await browser.$('[data-no-keychain]');
    const refused = (await noKeychain.isExisting())
      ? await noKeychain.getProperty('textContent')
      : '';
    assert.equal(refused, '', 'the keychain answers');
    const secret = await browser.$(`[data-secret="${secretName}"]`);
    await secret.waitForExist({ timeout: 20000 });
    assert.equal(await secret.getAttribute('data-stored'), 'false');
    assert.match(
      await secret.getProperty('textContent'),
      /Used by mcp_servers\.web \(credential_ref\)/,
    );
  });

  it('stores a secret in the keychain, and the page keeps nothing of it', async (t) => {
    if (!keychain) {
      t.skip(
        'no Secret Service in this run: the store path is covered by tests/tests/mcp_secrets.rs',
      );
      return;
    }
    await (await browser.$('input[name="secret-name"]')).setValue(secretName);
    const value = await browser.$('input[name="secret-value"]');
    await value.setValue(secretValue);
    await (await browser.$('[data-secret-form] button[type="submit"]')).click();
    const secret = await browser.$(`[data-secret="${secretName}"]`);
    await browser.waitUntil(async () => (await secret.getAttribute('data-stored')) === 'true', {
      timeout: 20000,
      timeoutMsg: 'the secret was not reported stored',
    });
    // The list may hear of the stored secret a moment before the form has emptied its field.
    await browser.waitUntil(async () => (await value.getProperty('value')) === '', {
      timeout: 10000,
      timeoutMsg: 'the field is emptied',
    });
    // Where it arrives: the Secret Service holds exactly what was typed.
    const stored = execFileSync(
      'secret-tool',
      ['lookup', 'service', 'dev.acpdesk.desk', 'username', secretName],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(stored, secretValue);
    // And nowhere in the page: markup, text, or any field's value.
    const page = await browser.execute(() => ({
      html: document.documentElement.outerHTML,
      values: [...document.querySelectorAll('input, textarea')].map((e) => e.value),
    }));
    const escaped = JSON.stringify(secretValue).slice(1, -1);
    for (const form of [
      secretValue,
      escaped,
      secretValue.replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
    ]) {
      assert.ok(!page.html.includes(form), 'the value is not in the page');
    }
    assert.ok(!page.values.some((v) => v.includes(secretValue.slice(0, 20))), 'no field holds it');
    await browser.saveScreenshot(join(shots, 'mcp-secret-stored.png'));
    await (await (await browser.$('.secrets-view')).$('button=Close')).click();
  });

  it('a reconnected session gets the http server with the stored credential', async (t) => {
    if (!keychain) {
      t.skip('no Secret Service in this run');
      return;
    }
    // The demo agent dies on "crash"; Reconnect starts it again, choosing the servers afresh.
    const box = await browser.$('#composer');
    await box.waitForEnabled({ timeout: 20000 });
    await box.setValue('crash');
    await (await browser.$('#send')).click();
    await statusIs('dead');
    await (await browser.$('.ended [data-reconnect]')).click();
    await statusIs('ready');
    const got = received();
    assert.equal(got.length, 2, `a second session/new: ${got.length}`);
    assert.deepEqual(serverNames(got[1]), ['files', 'web']);
    const web = got[1].params.mcpServers.find((s) => s.name === 'web');
    assert.deepEqual(web.headers, [{ name: 'Authorization', value: `Bearer ${secretValue}` }]);
    const chip = await openChip();
    await browser.waitUntil(async () => (await chip.getAttribute('data-mcp-chip')) === '2', {
      timeout: 10000,
      timeoutMsg: 'the chip did not show the reconnected session’s servers',
    });
    assert.deepEqual(await chipGroups(), { passed: ['files', 'web'], skipped: ['events'] });
    await browser.saveScreenshot(join(shots, 'mcp-chip-reconnected.png'));
    await closeChip();
    // Nowhere the app writes: its settings, data (history, audit, logs, state).
    // As written, JSON-escaped (events, state and history hold JSON) and base64.
    const forms = [
      secretValue,
      JSON.stringify(secretValue).slice(1, -1),
      Buffer.from(secretValue).toString('base64'),
    ].map((f) => Buffer.from(f));
    const leaks = [...filesUnder(config), ...filesUnder(data)].filter((f) => {
      const bytes = readFileSync(f);
      return forms.some((form) => bytes.includes(form));
    });
    assert.deepEqual(leaks, [], 'the secret is in no file of the app’s');
  });
});
