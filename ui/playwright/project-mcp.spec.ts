// A folder's own MCP config offered above the thread (ProjectMcpOffer): what each server would
// run, Use in this folder (the decision carries the digest shown), the note that it takes effect
// with the next session and Restart session with them, Ignore this file, and a file changed
// since it was shown. At 800x600 (the smallest layout) and 1280x800; screenshots
// project-mcp-<what>-<w>x<h>.png.
import { expect, test, type Page } from '@playwright/test';
import { join } from 'node:path';
import { repo, shot } from './hooks';
import { calls, replay, replayed } from './mock-ipc.js';

const folder = '/home/demo/project';
const hello = join(repo, 'tests/transcripts/demo/multi-turn.jsonl');

const offer = {
  folder,
  files: [
    {
      file: '.mcp.json',
      tool: 'Claude Code',
      path: `${folder}/.mcp.json`,
      digest: '9f2c4e1b7a0d',
      servers: [
        {
          name: 'files',
          transport: 'stdio',
          command: ['npx', '-y', '@modelcontextprotocol/server-filesystem', './docs'],
          urlHasHiddenParts: false,
          env: ['FS_TOKEN', 'LOG_LEVEL'],
          headers: [],
          usable: true,
          problems: [],
        },
        {
          name: 'tracker',
          transport: 'http',
          shownUrl: 'https://mcp.example.com/v1/mcp',
          urlHasHiddenParts: true,
          env: [],
          headers: ['X-Team'],
          usable: true,
          problems: [],
        },
        {
          name: 'github',
          transport: 'stdio',
          command: ['gh-mcp', '--token', '${GITHUB_TOKEN}'],
          urlHasHiddenParts: false,
          env: [],
          headers: [],
          usable: false,
          problems: [
            {
              file: `${folder}/.mcp.json`,
              line: 16,
              column: 40,
              field: 'mcpServers.github.args[2]',
              message:
                '`${GITHUB_TOKEN}` is the environment variable GITHUB_TOKEN, which Claude Code fills in; ACP Desk does not fill in placeholders, so this server is not used (add it to the settings\' mcp_servers with the value, or {"secret": NAME} for a secret)',
              severity: 'error',
            },
          ],
        },
      ],
      problems: [
        {
          file: `${folder}/.mcp.json`,
          line: 22,
          column: 3,
          field: 'extra',
          message: 'not read by ACP Desk: ignored',
          severity: 'warning',
        },
      ],
    },
  ],
};

const agent = { launchName: 'demo', acpSessionId: 'demo-session-1' };
const reconnect = [
  { kind: 'session-status', status: 'starting', agent: { launchName: 'demo' } },
  {
    kind: 'session-continued',
    mode: 'continue',
    outcome: 'resumed',
    acpSessionId: 'demo-session-1',
  },
  { kind: 'session-status', status: 'ready', agent },
];

async function open(page: Page, projectMcp = { offer }): Promise<void> {
  await replay(page, hello, { projectMcp, reconnect });
  await page.goto('/');
  await expect.poll(() => replayed(page)).toBe(true);
}

for (const [w, h] of [
  [800, 600],
  [1280, 800],
] as const) {
  test.describe(`${w}x${h}`, () => {
    test.use({ viewport: { width: w, height: h } });

    test('the offer shows what would run; Use, then Restart session with them', async ({
      page,
    }) => {
      await open(page);
      const card = page.locator('[data-project-mcp=".mcp.json"]');
      await expect(card).toContainText(
        'This folder has its own MCP servers (.mcp.json, written for Claude Code).',
      );
      await expect(card.locator('[data-server="files"] code')).toHaveText(
        'npx -y @modelcontextprotocol/server-filesystem ./docs',
      );
      await expect(card.locator('[data-server="files"]')).toContainText('env: FS_TOKEN, LOG_LEVEL');
      await expect(card.locator('[data-server="tracker"] code')).toHaveText(
        'https://mcp.example.com/v1/mcp (+ a query not shown)',
      );
      await expect(card.locator('[data-server="github"]')).toContainText('Not used:');
      // The card fits its column: nothing sticks out sideways.
      const overflow = await card.evaluate((el) => el.scrollWidth - el.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await shot(page, `project-mcp-offer-${w}x${h}`);

      await card.getByRole('button', { name: 'Use in this folder' }).click();
      await expect
        .poll(async () => (await calls(page)).find((c) => c.cmd === 'project_mcp_decide')?.args)
        .toEqual({ folder, file: '.mcp.json', digest: '9f2c4e1b7a0d', decision: 'use' });
      await expect(card).toHaveCount(0);
      const used = page.locator('[data-project-mcp-used]');
      await expect(used).toContainText(
        'The MCP servers of .mcp.json will be used from the next session in this folder.',
      );
      await shot(page, `project-mcp-used-${w}x${h}`);
      await used.getByRole('button', { name: 'Restart session with them' }).click();
      await expect
        .poll(async () => (await calls(page)).filter((c) => c.cmd === 'project_mcp_restart'))
        .toHaveLength(1);
      await expect(used).toHaveCount(0);
    });
  });
}

test.describe('800x600', () => {
  test.use({ viewport: { width: 800, height: 600 } });

  test('Not now hides it for this run and records nothing', async ({ page }) => {
    await open(page);
    const card = page.locator('[data-project-mcp=".mcp.json"]');
    await card.getByRole('button', { name: 'Not now' }).click();
    await expect(card).toHaveCount(0);
    expect((await calls(page)).filter((c) => c.cmd === 'project_mcp_decide')).toHaveLength(0);
  });

  test('Ignore this file is recorded and the card goes', async ({ page }) => {
    await open(page);
    const card = page.locator('[data-project-mcp=".mcp.json"]');
    await card.getByRole('button', { name: 'Ignore this file' }).click();
    await expect
      .poll(async () => (await calls(page)).find((c) => c.cmd === 'project_mcp_decide')?.args)
      .toMatchObject({ decision: 'ignore' });
    await expect(card).toHaveCount(0);
    await expect(page.locator('[data-project-mcp-used]')).toHaveCount(0);
  });

  test('a file changed since it was shown is refused and said', async ({ page }) => {
    await replay(page, hello, {
      projectMcp: { offer },
      errors: {
        project_mcp_decide: {
          code: 'project-config-changed',
          message: `${folder}/.mcp.json changed since it was shown; look at what it would run now and decide again`,
        },
      },
    });
    await page.goto('/');
    const card = page.locator('[data-project-mcp=".mcp.json"]');
    await card.getByRole('button', { name: 'Use in this folder' }).click();
    await expect(page.locator('[data-project-mcp-error="project-config-changed"]')).toContainText(
      'changed since it was shown',
    );
    await expect(card).toBeVisible();
    await expect(page.locator('[data-project-mcp-used]')).toHaveCount(0);
    await shot(page, 'project-mcp-changed-800x600');
  });
});
