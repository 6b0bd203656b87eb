// The Agents view over the mocked agents commands (mock-ipc.js `agents`): every source listed
// with its origin and status, the filter, Check (passed, and failed with its reason and fix),
// Install's progress and a failed install, "Use for new sessions" (the pickers follow), and the
// problems of the settings file (in the view, and the main window's notice). At 1100x760 and
// 800x600; screenshots agents-<what>-<w>x<h>.png.
import { expect, test, type Page } from '@playwright/test';
import { shot } from './hooks';
import { calls, replay } from './mock-ipc.js';

const snapshot = 'ACP registry snapshot 2026-11-20 (7f3c2e1)';
const settingsFile = '/home/demo/.config/acp-desk/settings.json';

type Entry = Record<string, unknown>;
const entry = (over: Entry): Entry => ({
  alsoDefinedIn: [],
  envNames: [],
  installable: false,
  problems: [],
  ...over,
});
const reg = (id: string, name: string, description: string, status: string, over: Entry = {}) =>
  entry({
    id,
    name,
    description,
    version: '1.0.0',
    source: 'registry',
    origin: snapshot,
    command: `npx -y @${id}/acp`,
    status,
    ...over,
  });

/** A listing as the shell gives one: every source, dozens of registry agents. */
const listing = {
  agents: [
    entry({
      id: 'demo',
      name: 'ACP Desk demo agent',
      description: 'Scripted, no model: say “hello” to see what it can show.',
      source: 'builtin',
      command: '/usr/lib/acp-desk/acp-desk-demo-agent',
      status: 'found',
    }),
    entry({
      id: 'my-claude',
      name: 'my-claude',
      source: 'settings',
      origin: settingsFile,
      command: 'npx -y @agentclientprotocol/claude-agent-acp',
      envNames: ['ANTHROPIC_API_KEY'],
      status: 'downloads',
      alsoDefinedIn: ['builtin'],
    }),
    entry({
      id: 'reviewer',
      name: 'reviewer',
      description: 'Reviews a change set and explains what it would change.',
      version: '0.2.0',
      source: 'manifest',
      origin: '/home/demo/.config/acp-desk/agents/reviewer/ACP.md',
      manifestFile: '/home/demo/.config/acp-desk/agents/reviewer/ACP.md',
      command: 'reviewer-acp --stdio',
      status: 'found',
    }),
    entry({
      id: 'gemini',
      name: 'Gemini CLI',
      description: "Google's open-source terminal agent.",
      source: 'builtin',
      command: 'gemini --acp',
      status: 'missing',
      hint: 'Install Gemini CLI with `npm install -g @google/gemini-cli`, then sign in once by running `gemini`.',
      installCommand: 'npm install -g @google/gemini-cli',
    }),
    entry({
      id: 'goose',
      name: 'goose',
      source: 'builtin',
      command: 'goose acp',
      status: 'missing',
      hint: 'Install goose (see its documentation for your system), then run `goose configure` once.',
    }),
    reg('opencode', 'OpenCode', 'The open source AI coding agent.', 'found', {
      command: '/home/demo/.local/bin/opencode acp',
    }),
    reg('kimi', 'Kimi CLI', "Moonshot AI's coding agent for the terminal.", 'not-installed', {
      installable: true,
      command: 'kimi acp',
    }),
    reg(
      'vtcode',
      'VT Code',
      'A Rust coding agent with semantic code intelligence.',
      'not-installed',
      {
        installable: true,
        command: 'vtcode acp',
      },
    ),
    reg(
      'fast-agent',
      'fast-agent',
      'Define, prompt and test MCP enabled agents and workflows.',
      'downloads',
      {
        command: 'uvx fast-agent-acp',
      },
    ),
    reg('auggie', 'Auggie CLI', "Augment Code's agent, with its context engine.", 'downloads'),
    reg('cline', 'Cline', 'An autonomous coding agent that asks before it acts.', 'downloads'),
    reg('qwen-code', 'Qwen Code', 'A command-line agent tuned for Qwen3-Coder.', 'downloads'),
    reg(
      'stakpak',
      'Stakpak',
      'An agent for DevOps work: infrastructure, pipelines, secrets.',
      'unavailable',
      {
        command: 'stakpak acp',
        hint: 'No build for linux-aarch64 (it has: linux-x86_64, darwin-aarch64).',
      },
    ),
    reg('mistral-vibe', 'Mistral Vibe', "Mistral's command-line coding assistant.", 'downloads'),
  ],
  defaultAgent: 'demo',
  defaultReason: 'the demo agent: nothing else is installed',
  settingsFile,
  problems: [] as Entry[],
};

const problems = [
  {
    file: settingsFile,
    line: 7,
    column: 15,
    field: 'agent_servers.my-codex.args',
    message: 'expected a list of strings, found a string: write ["--acp"]',
    severity: 'error',
  },
  {
    file: settingsFile,
    line: 9,
    column: 7,
    field: 'agent_servers.my-claude.default_mode',
    message: 'unknown field, ignored (ACP Desk reads command, args, env and manifest)',
    severity: 'warning',
  },
];

const failedCheck = {
  agent: 'gemini',
  ok: false,
  steps: [{ name: 'start', millis: 1, ok: false }],
  authMethods: [],
  differences: [],
  warnings: [],
  failure: {
    kind: 'not-installed',
    message: 'the agent command `gemini` was not found on PATH',
    fix: 'install it with `npm install -g @google/gemini-cli`, or give its full path in the settings file',
  },
};

const manifestCheck = {
  agent: 'reviewer',
  ok: true,
  steps: [
    { name: 'start', millis: 9, ok: true },
    { name: 'initialize', millis: 212, ok: true },
  ],
  agentName: 'reviewer',
  agentVersion: '0.2.0',
  protocolVersion: 1,
  capabilities: { loadSession: false, promptCapabilities: { image: false, embeddedContext: true } },
  authMethods: [{ id: 'token', name: 'API token', description: 'set REVIEWER_TOKEN' }],
  differences: [{ path: 'loadSession', declared: true, reported: false }],
  warnings: [],
};

async function openAgents(page: Page, over: Record<string, unknown> = {}): Promise<void> {
  await replay(page, [], {
    folder: null,
    agents: {
      listing,
      checks: { gemini: failedCheck, reviewer: manifestCheck },
      checkMs: 1200,
      // Each step stays up longer than expect()'s slowest poll (1 s).
      installStepMs: 1200,
      installErrors: {
        vtcode: {
          code: 'invalid-input',
          message:
            'the download of vtcode 1.0.0 has sha256 9b1f…e04a, not 5c2d…71aa as the registry says: nothing was installed; try again, or import a newer registry file',
        },
      },
      ...over,
    },
  });
  await page.goto('/');
  await page.getByRole('button', { name: 'See every agent' }).click();
  await expect(page.locator('[data-agent="demo"]')).toBeVisible();
}

const sizes = [
  { width: 1100, height: 760 },
  { width: 800, height: 600 },
];

for (const size of sizes) {
  const at = `${size.width}x${size.height}`;
  test.describe(`the Agents view at ${at}`, () => {
    test.use({ viewport: size });

    test('lists every source with its origin and status; registry agents to install are folded', async ({
      page,
    }) => {
      await openAgents(page);
      const yours = page.locator('[data-agent-group="yours"] > [data-agent]');
      await expect(yours).toHaveCount(5);
      await expect(page.locator('[data-agent="my-claude"]')).toContainText('Your settings');
      await expect(page.locator('[data-agent="my-claude"]')).toContainText(
        'also defined in: Built in; this one is used',
      );
      await expect(page.locator('[data-agent="my-claude"]')).toContainText(
        'with ANTHROPIC_API_KEY set',
      );
      await expect(page.locator('[data-agent="reviewer"]')).toContainText('Manifest');
      await expect(page.locator('[data-agent="gemini"] .agent-status')).toHaveText('Not installed');
      // Installed registry agents first; the others folded.
      await expect(
        page.locator('[data-agent-group="registry-installed"] [data-agent]'),
      ).toHaveCount(1);
      await expect(page.locator('[data-agent-more]')).toHaveText(
        '8 more registry agents, not installed here yet',
      );
      await expect(page.locator('[data-agent="kimi"]')).toBeHidden();
      await expect(page.locator('[data-new-session-agent]')).toContainText(
        'New sessions use ACP Desk demo agent (the demo agent: nothing else is installed).',
      );
      // Nothing wider than the window.
      const overflow = await page.evaluate(() => {
        const body = document.querySelector('.agents-body') as HTMLElement;
        return body.scrollWidth - body.clientWidth;
      });
      expect(overflow).toBeLessThanOrEqual(0);
      await shot(page, `agents-list-${at}`);
      await page.locator('[data-agent-more]').click();
      await expect(page.locator('[data-agent="kimi"]')).toBeVisible();
      await page.locator('[data-agent="kimi"]').scrollIntoViewIfNeeded();
      await shot(page, `agents-registry-${at}`);
    });

    test('imports a registry file: the registry in use is said', async ({ page }) => {
      const imported = {
        registry: {
          kind: 'imported',
          label: 'ACP registry imported from /home/demo/registry.json on 2026-12-01',
          file: '/home/demo/registry.json',
          agents: 12,
        },
        problems: [{ file: '/home/demo/registry.json', message: 'x', severity: 'warning' }],
        listing,
      };
      await openAgents(page, { imported });
      await expect(page.locator('.group-head').nth(1)).toContainText(
        'From the ACP registry snapshot 2026-11-20 (7f3c2e1)',
      );
      await page.getByRole('button', { name: 'Import a registry file…' }).click();
      await expect(page.locator('.agents-said')).toHaveText(
        'ACP registry imported from /home/demo/registry.json on 2026-12-01: 12 agents from it are listed (1 of its entries cannot be used).',
      );
    });

    test('filters by name, id or description', async ({ page }) => {
      await openAgents(page);
      const filter = page.getByLabel('Filter agents');
      await expect(filter).toBeFocused();
      await filter.fill('rust');
      await expect(page.locator('[data-agent]')).toHaveCount(1);
      await expect(page.locator('[data-agent="vtcode"]')).toBeVisible();
      await filter.fill('kimi');
      await expect(page.locator('[data-agent]')).toHaveCount(1);
      await filter.fill('no such agent');
      await expect(page.locator('[data-agents-none]')).toContainText(
        'No agent’s name, id or description holds “no such agent”.',
      );
      await page.keyboard.press('Escape');
      await expect(filter).toHaveValue('');
      await expect(page.locator('[data-agent]')).toHaveCount(listing.agents.length);
    });

    test('Check passes with what the agent said; a failed Check says why and what to do', async ({
      page,
    }) => {
      await openAgents(page);
      const demo = page.locator('[data-agent="demo"]');
      await demo.getByRole('button', { name: 'Check' }).click();
      await expect(demo.getByRole('button', { name: 'Checking…' })).toBeDisabled();
      const ok = demo.locator('[data-check-result="ok"]');
      await expect(ok).toContainText('Check passed');
      await expect(ok).toContainText('start 6 ms · initialize 48 ms');
      await expect(ok).toContainText(
        'It says it is ACP Desk Demo 0.1.0 (acp-desk-demo), protocol 1.',
      );
      await expect(ok).toContainText('promptCapabilities.embeddedContext');

      const gemini = page.locator('[data-agent="gemini"]');
      await gemini.getByRole('button', { name: 'Check' }).click();
      const failed = gemini.locator('[data-check-result="failed"]');
      await expect(failed).toContainText('Check failed');
      await expect(failed.locator('[data-failure-kind="not-installed"]')).toHaveText(
        'The agent command gemini was not found on PATH.',
      );
      await expect(failed).toContainText('Install it with npm install -g @google/gemini-cli');

      const reviewer = page.locator('[data-agent="reviewer"]');
      await reviewer.getByRole('button', { name: 'Check' }).click();
      await expect(reviewer.locator('[data-check-differences]')).toContainText(
        'loadSession: the manifest declares true, the agent reports false',
      );
      // Its sign-in methods are buttons (sign-in.spec.ts signs in with them).
      await expect(reviewer.locator('[data-check-sign-in]')).toContainText('Sign-in: one way');
      await expect(reviewer.locator('[data-sign-in="token"]')).toHaveText('Sign in with API token');
      await expect(reviewer.locator('[data-check-sign-in]')).toContainText('Set REVIEWER_TOKEN.');
      await gemini.scrollIntoViewIfNeeded();
      await shot(page, `agents-check-${at}`);
      const checked = (await calls(page))
        .filter((c) => c.cmd === 'agent_check')
        .map((c) => c.args.id);
      expect(checked).toEqual(['demo', 'gemini', 'reviewer']);
    });

    test('Install shows its progress, then the agent is installed; a failed install says why', async ({
      page,
    }) => {
      await openAgents(page);
      await page.locator('[data-agent-more]').click();
      const kimi = page.locator('[data-agent="kimi"]');
      await kimi.getByRole('button', { name: 'Install' }).click();
      const progress = kimi.locator('[data-install-progress]');
      await expect(progress).toContainText(/Downloading: [26]\.[13] of 8\.4 MB/);
      await expect(progress.locator('progress')).toBeVisible();
      await shot(page, `agents-installing-${at}`);
      // Installed: it moves up among the installed registry agents.
      await expect(
        page.locator('[data-agent-group="registry-installed"] [data-agent="kimi"]'),
      ).toBeVisible();
      await expect(page.locator('[data-agent="kimi"] .agent-status')).toHaveText('Installed');

      const vt = page.locator('[data-agent="vtcode"]');
      await vt.getByRole('button', { name: 'Install' }).click();
      const failed = vt.locator('[data-install-failed]');
      // Four steps of progress first.
      await expect(failed).toContainText('Not installed:', { timeout: 15_000 });
      await expect(failed).toContainText(
        'has sha256 9b1f…e04a, not 5c2d…71aa as the registry says',
      );
      await expect(vt.getByRole('button', { name: 'Install' })).toBeEnabled();
      await vt.scrollIntoViewIfNeeded();
      await shot(page, `agents-install-failed-${at}`);
    });

    test('Use for new sessions: the shell remembers it and the pickers follow', async ({
      page,
    }) => {
      await openAgents(page);
      const opencode = page.locator('[data-agent="opencode"]');
      await opencode.getByRole('button', { name: 'Use for new sessions' }).click();
      await expect(opencode.locator('[data-current]')).toHaveText('Used for new sessions');
      await expect(page.locator('[data-agent="demo"] [data-current]')).toHaveCount(0);
      await expect(page.locator('[data-new-session-agent]')).toContainText(
        'New sessions use OpenCode (the agent last chosen in the window).',
      );
      // A missing agent cannot be chosen.
      await expect(
        page.locator('[data-agent="gemini"]').getByRole('button', { name: 'Use for new sessions' }),
      ).toBeDisabled();
      await page.getByRole('button', { name: 'Close Agents' }).click();
      await expect(page.locator('#agent-select')).toHaveValue('opencode');
      const used = (await calls(page)).filter((c) => c.cmd === 'agents_use_for_new_sessions');
      expect(used.map((c) => c.args.id)).toEqual(['opencode']);
    });

    test('the settings file’s problems: at the top of the view, and a notice in the window', async ({
      page,
    }) => {
      await replay(page, [], { folder: null, agents: { listing: { ...listing, problems } } });
      await page.goto('/');
      const notice = page.locator('[data-settings-notice]');
      await expect(notice).toContainText(
        'Your settings file has an error; ACP Desk uses the rest of it.',
      );
      await expect(notice).toContainText(
        `${settingsFile}:7:15: agent_servers.my-codex.args: expected a list of strings, found a string`,
      );
      // The window still works: the empty state's agent picker and Open Folder.
      await expect(page.locator('#agent-select')).toHaveValue('demo');
      await shot(page, `agents-settings-notice-${at}`);
      await notice.getByRole('button', { name: 'Open settings file' }).click();
      await notice.getByRole('button', { name: 'Show in Agents' }).click();
      const shown = page.locator('[data-agent-problems]');
      await expect(shown).toContainText('1 error and 1 warning in the files agents come from');
      await expect(shown).toContainText(
        `${settingsFile}:9:7: agent_servers.my-claude.default_mode: unknown field, ignored`,
      );
      await shot(page, `agents-problems-${at}`);
      const opened = (await calls(page)).filter((c) => c.cmd === 'agents_open_settings');
      expect(opened).toHaveLength(1);
    });
  });
}

test('the sidebar reaches the view, and its picker follows the default rule', async ({ page }) => {
  await replay(page, [{ kind: 'session-status', sessionId: 'e1', status: 'ready' }], {
    agents: {
      listing: { ...listing, defaultAgent: 'reviewer', defaultReason: 'default_agent in settings' },
    },
  });
  await page.goto('/');
  const picker = page.getByLabel('Agent for new sessions');
  // `--agent demo` opened this session; new ones use the command line's agent until chosen.
  await expect(picker).toHaveValue('demo');
  await picker.selectOption('reviewer');
  await page.locator('[data-agents-toggle]').click();
  await expect(page.locator('[data-agent="reviewer"] [data-current]')).toBeVisible();
  await expect(page.locator('[data-new-session-agent]')).toContainText(
    '(the agent last chosen in the window)',
  );
  await page.keyboard.press('Escape');
  await expect(page.locator('[data-agent="demo"]')).toHaveCount(0);
  await expect(page.locator('#composer')).toBeVisible();
});
