// The MCP servers & secrets view over the mocked commands (mock-ipc.js `secrets`): reached from
// the empty window, the sidebar and the Agents view; storing a secret (the field clears, the value
// appears nowhere in the page afterwards: rule 57), replacing and removing one (with its
// confirmation), the no-keychain state; and the session header's MCP chip from the
// `mcp-servers` event, with the skipped server's notice in the thread. At 1100x760 and 800x600;
// screenshots secrets-<what>-<w>x<h>.png.
import { expect, test, type Page } from '@playwright/test';
import { shot } from './hooks';
import { calls, replay } from './mock-ipc.js';

const VALUE = 'ghp_window7Q4xZ2mN8vR1';

const servers = [
  {
    name: 'github',
    transport: 'http',
    source: 'settings',
    target: 'https://api.githubcopilot.com/mcp/',
    credential: 'github-mcp',
    notes: ['sends the header `X-MCP-Toolsets`'],
  },
  {
    name: 'files',
    transport: 'stdio',
    source: 'settings',
    target: 'npx',
    agents: ['claude', 'codex'],
    notes: ['runs with `FILES_ROOT` set'],
  },
  {
    name: 'docs',
    transport: 'sse',
    source: 'manifest',
    sourceDetail: 'reviewer',
    target: 'https://docs.example.com/sse',
    credential: 'vault/docs',
  },
];

const used = {
  'github-mcp': ['MCP server `github` (settings)'],
  'vault/docs': ['MCP server `docs` (manifest `reviewer`)'],
  'anthropic-key': ['agent `my-claude` env `ANTHROPIC_API_KEY` (settings)'],
};

async function open(page: Page, secrets: Record<string, unknown> = {}): Promise<void> {
  await replay(page, [], { folder: null, secrets: { servers, used, ...secrets } });
  await page.goto('/');
  await page.getByRole('button', { name: 'MCP & secrets' }).click();
  await expect(page.locator('[data-mcp-row="github"]')).toBeVisible();
}

/** Every place the page could hold the value: its HTML, every field's value, the text. */
async function pageHolds(page: Page, value: string): Promise<string[]> {
  return page.evaluate((v) => {
    const found: string[] = [];
    if (document.documentElement.outerHTML.includes(v)) found.push('html');
    if (document.body.innerText.includes(v)) found.push('text');
    for (const el of document.querySelectorAll('input, textarea')) {
      if ((el as HTMLInputElement).value.includes(v))
        found.push(`field ${el.getAttribute('name')}`);
    }
    if (localStorage.length > 0 && JSON.stringify({ ...localStorage }).includes(v))
      found.push('localStorage');
    if (JSON.stringify({ ...sessionStorage }).includes(v)) found.push('sessionStorage');
    return found;
  }, value);
}

const sizes = [
  { width: 1100, height: 760 },
  { width: 800, height: 600 },
];

for (const size of sizes) {
  const at = `${size.width}x${size.height}`;
  test.describe(`the MCP servers & secrets view at ${at}`, () => {
    test.use({ viewport: size });

    test('lists the servers with their source, agents and credential state', async ({ page }) => {
      await open(page, { stored: ['vault/docs'] });
      const github = page.locator('[data-mcp-row="github"]');
      await expect(github).toContainText('HTTP');
      await expect(github).toContainText('Your settings');
      await expect(github).toContainText('For every agent');
      await expect(github).toContainText('Sends the header X-MCP-Toolsets');
      await expect(github.locator('[data-credential="github-mcp"]')).toContainText(
        'Credential github-mcp: missing. Sessions skip this server until it is stored.',
      );
      await expect(page.locator('[data-mcp-row="files"]')).toContainText('Only for claude, codex');
      const docs = page.locator('[data-mcp-row="docs"]');
      await expect(docs).toContainText('Manifest reviewer');
      await expect(docs).toContainText('For its agent, reviewer');
      await expect(docs).toContainText('Credential vault/docs: stored');
      await expect(page.locator('[data-secret="vault/docs"]')).toContainText('Stored');
      await expect(page.locator('[data-secret="anthropic-key"]')).toContainText('Missing');
      await expect(page.locator('[data-secret="anthropic-key"]')).toContainText(
        'Used by agent my-claude env ANTHROPIC_API_KEY (settings)',
      );
      await shot(page, `secrets-view-${at}`);
      await page.getByRole('button', { name: 'Open settings file' }).click();
      expect((await calls(page)).map((c) => c.cmd)).toContain('agents_open_settings');
    });

    test('stores a secret: the field clears and the value appears nowhere in the page', async ({
      page,
    }) => {
      await open(page);
      await page
        .locator('[data-mcp-row="github"]')
        .getByRole('button', { name: 'Store secret…' })
        .click();
      const name = page.locator('input[name="secret-name"]');
      const value = page.locator('input[name="secret-value"]');
      await expect(name).toHaveValue('github-mcp');
      await expect(value).toBeFocused();
      await expect(value).toHaveAttribute('type', 'password');
      await page.keyboard.type(VALUE);
      await shot(page.locator('[data-secret-form]'), `secrets-form-typed-${at}`);
      await page.keyboard.press('Enter');
      await expect(page.locator('[data-secrets-said]')).toHaveText(
        'Stored github-mcp in the keychain. Sessions started from now on use it.',
      );
      await expect(value).toHaveValue('');
      await expect(name).toHaveValue('');
      await expect(page.locator('[data-secret="github-mcp"]')).toContainText('Stored');
      await expect(page.locator('[data-credential="github-mcp"]')).toContainText(
        'Credential github-mcp: stored',
      );
      // The keychain (the mock's) got it; the page has it nowhere.
      const keychain = await page.evaluate(
        () =>
          (window as unknown as { __acpMock: { keychain: Record<string, string> } }).__acpMock
            .keychain,
      );
      expect(keychain['github-mcp']).toBe(VALUE);
      expect(await pageHolds(page, VALUE)).toEqual([]);
      const set = (await calls(page)).filter((c) => c.cmd === 'secret_set');
      expect(set.map((c) => c.args.name)).toEqual(['github-mcp']);
      await shot(page, `secrets-stored-${at}`);

      // Replace: the same name says so; the new value goes in, the old one is gone.
      await page
        .locator('[data-secret="github-mcp"]')
        .getByRole('button', { name: 'Replace…' })
        .click();
      await expect(page.getByRole('button', { name: 'Replace', exact: true })).toBeDisabled();
      await page.keyboard.type('second-value-77');
      await page.getByRole('button', { name: 'Replace', exact: true }).click();
      await expect(page.locator('[data-secrets-said]')).toContainText('Replaced github-mcp');
      expect(await pageHolds(page, 'second-value-77')).toEqual([]);
    });

    test('a bad name is said at the field and nothing is sent', async ({ page }) => {
      await open(page);
      await page.locator('input[name="secret-name"]').fill('my token');
      await page.locator('input[name="secret-value"]').fill(VALUE);
      await expect(page.locator('#secret-name-problem')).toHaveText(
        'Use letters, digits and . _ - / : @ only (like github-mcp).',
      );
      await expect(page.getByRole('button', { name: 'Store', exact: true })).toBeDisabled();
      expect((await calls(page)).filter((c) => c.cmd === 'secret_set')).toEqual([]);
    });

    test('removes a secret only after the confirmation', async ({ page }) => {
      await open(page, { stored: ['github-mcp'] });
      const row = page.locator('[data-secret="github-mcp"]');
      await row.getByRole('button', { name: 'Remove' }).click();
      const confirm = page.locator('[data-confirm-remove]');
      await expect(confirm).toContainText('Remove github-mcp from the keychain?');
      await expect(confirm.getByRole('button', { name: 'Keep' })).toBeFocused();
      await shot(page, `secrets-remove-confirm-${at}`);
      // Esc keeps it (and leaves the view open).
      await page.keyboard.press('Escape');
      await expect(confirm).toHaveCount(0);
      await expect(row.getByRole('button', { name: 'Remove' })).toBeFocused();
      await expect(row).toContainText('Stored');
      await row.getByRole('button', { name: 'Remove' }).click();
      await confirm.getByRole('button', { name: 'Remove' }).click();
      await expect(page.locator('[data-secrets-said]')).toHaveText(
        'Removed github-mcp from the keychain.',
      );
      await expect(row).toContainText('Missing');
      await expect(page.locator('[data-credential="github-mcp"]')).toContainText('missing');
      expect((await calls(page)).filter((c) => c.cmd === 'secret_delete').length).toBe(1);
    });

    test('without a keychain says what to do and offers no form', async ({ page }) => {
      await open(page, {
        available: false,
        problem:
          'no keychain service is running (org.freedesktop.secrets is not on the session bus). On Linux, start a Secret Service (GNOME Keyring, KeePassXC with Secret Service on, or KWallet) and try again',
      });
      const alert = page.locator('[data-no-keychain]');
      await expect(alert).toContainText('The keychain cannot be used');
      await expect(alert).toContainText('start a Secret Service');
      await expect(page.locator('[data-credential="github-mcp"]')).toContainText(
        'the keychain cannot be read',
      );
      await expect(page.locator('input[name="secret-value"]')).toBeDisabled();
      await expect(page.getByRole('button', { name: 'Store secret…' })).toHaveCount(0);
      await shot(page, `secrets-no-keychain-${at}`);
      await alert.getByRole('button', { name: 'Try again' }).click();
      expect((await calls(page)).filter((c) => c.cmd === 'secrets_list').length).toBe(2);
    });
  });
}

test('Esc goes back to the Agents view it was opened from, then to the window', async ({
  page,
}) => {
  await replay(page, [], { folder: null, secrets: { servers, used } });
  await page.goto('/');
  await page.getByRole('button', { name: 'See every agent' }).click();
  await page.getByRole('button', { name: 'MCP servers & secrets…' }).click();
  await expect(page.getByRole('heading', { name: 'MCP servers & secrets' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('heading', { name: 'Agents' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('button', { name: 'MCP & secrets' })).toBeVisible();
});

const sid = 's-mcp';
const session = [
  { kind: 'session-status', sessionId: sid, status: 'starting', agent: { launchName: 'demo' } },
  {
    kind: 'mcp-servers',
    sessionId: sid,
    servers: [
      {
        name: 'files',
        transport: 'stdio',
        source: 'settings',
        target: 'npx',
        passed: true,
        notes: [],
      },
      {
        name: 'github',
        transport: 'http',
        source: 'settings',
        target: 'https://api.githubcopilot.com/mcp/',
        passed: true,
        credential: 'github-mcp',
        notes: [],
      },
      {
        name: 'docs',
        transport: 'sse',
        source: 'manifest',
        sourceDetail: 'reviewer',
        target: 'https://docs.example.com/sse',
        passed: false,
        reason: 'the agent does not take SSE servers (its mcpCapabilities has no `sse`)',
        credential: 'vault/docs',
        notes: [],
      },
    ],
  },
  {
    kind: 'notice',
    sessionId: sid,
    severity: 'warning',
    source: 'client',
    title: '1 MCP server skipped: docs',
    description: 'docs: the agent does not take SSE servers (its mcpCapabilities has no `sse`)',
  },
  {
    kind: 'session-status',
    sessionId: sid,
    status: 'ready',
    agent: {
      launchName: 'demo',
      name: 'acp-desk-demo-agent',
      title: 'ACP Desk demo agent',
      version: '0.1.0',
      acpSessionId: 'demo-1',
    },
  },
];

for (const size of sizes) {
  const at = `${size.width}x${size.height}`;
  test(`the header's MCP chip lists passed and skipped servers at ${at}`, async ({ page }) => {
    await page.setViewportSize(size);
    await replay(page, session, { secrets: { servers, used } });
    await page.goto('/');
    const chip = page.locator('[data-mcp-chip]');
    await expect(chip).toHaveText('MCP 2 · 1 skipped');
    await expect(chip).toHaveAttribute(
      'aria-label',
      '2 MCP servers passed to the agent, 1 skipped',
    );
    await chip.hover();
    await expect(page.getByRole('tooltip')).toHaveText(
      '2 MCP servers passed to the agent, 1 skipped',
    );
    // The skipped server is in the thread too: the engine's notice.
    await expect(page.locator('.thread-view')).toContainText('1 MCP server skipped: docs');
    await chip.click();
    const pop = page.locator('#mcp-popover');
    await expect(pop.locator('[data-mcp-group="passed"] [data-mcp-server]')).toHaveCount(2);
    const docs = pop.locator('[data-mcp-group="skipped"] [data-mcp-server="docs"]');
    await expect(docs).toContainText('From manifest reviewer, credential vault/docs');
    await expect(docs).toContainText('The agent does not take SSE servers');
    await shot(page, `secrets-mcp-chip-${at}`);
    await page.keyboard.press('Escape');
    await expect(pop).toHaveCount(0);
    await expect(chip).toBeFocused();
    await chip.click();
    await pop.getByRole('button', { name: 'MCP servers & secrets…' }).click();
    await expect(page.locator('[data-mcp-row="docs"]')).toBeVisible();
  });
}

test('the sidebar opens and closes the view beside a session', async ({ page }) => {
  await replay(page, session, { secrets: { servers, used } });
  await page.goto('/');
  const toggle = page.locator('[data-secrets-toggle]');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('[data-mcp-row="github"]')).toBeVisible();
  await shot(page, 'secrets-from-sidebar-1100x760');
  await toggle.click();
  await expect(page.locator('[data-mcp-chip]')).toBeVisible();
  await toggle.click();
  await page.keyboard.press('Escape');
  await expect(page.locator('[data-mcp-chip]')).toBeVisible();
});
