// The window's offer of a folder's own MCP config (lib/project-mcp.ts, ProjectMcpOffer.svelte):
// what the card shows, the three choices, a file changed since it was shown, the restart.
import { cleanup, fireEvent, render, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import ProjectMcpOffer from '../components/ProjectMcpOffer.svelte';
import type { OfferedFile, ProjectMcpOffer as Offer, SessionInfo } from './generated/ipc';
import {
  ProjectMcpController,
  quoteArg,
  serverTarget,
  type FolderOffer,
  type ProjectMcpBackend,
} from './project-mcp';

afterEach(() => cleanup());

/** `xs[i]`, or the test fails saying so. */
function at<T>(xs: T[], i = 0): T {
  const x = xs[i];
  if (x === undefined) throw new Error(`no item ${i} in ${JSON.stringify(xs)}`);
  return x;
}

const folder = '/home/demo/project';

function file(over: Partial<OfferedFile> = {}): OfferedFile {
  return {
    file: '.mcp.json',
    tool: 'Claude Code',
    path: `${folder}/.mcp.json`,
    digest: 'd1',
    servers: [
      {
        name: 'files',
        transport: 'stdio',
        command: ['npx', '-y', 'server-fs', './my docs'],
        urlHasHiddenParts: false,
        env: ['FS_TOKEN'],
        headers: [],
        usable: true,
        problems: [],
      },
      {
        name: 'tracker',
        transport: 'http',
        shownUrl: 'https://mcp.example.com/v1',
        urlHasHiddenParts: true,
        env: [],
        headers: ['X-Key'],
        usable: true,
        problems: [],
      },
      {
        name: 'gh',
        transport: 'stdio',
        command: ['gh-mcp', '--token', '${GITHUB_TOKEN}'],
        urlHasHiddenParts: false,
        env: [],
        headers: [],
        usable: false,
        problems: [
          {
            file: `${folder}/.mcp.json`,
            line: 4,
            field: 'mcpServers.gh.args[1]',
            message: '`${GITHUB_TOKEN}` is the environment variable GITHUB_TOKEN; not used',
            severity: 'error',
          },
        ],
      },
    ],
    problems: [],
    ...over,
  };
}

/** A shell that keeps decisions by digest, as the real one does. */
class FakeShell implements ProjectMcpBackend {
  files: OfferedFile[] = [file()];
  decided = new Map<string, string>();
  calls: string[] = [];
  changedUnder = false;
  async projectMcpOffer(f: string): Promise<Offer | null> {
    this.calls.push(`offer ${f}`);
    const files = this.files.filter((x) => this.decided.get(x.file) !== x.digest);
    return files.length ? { folder: f, files } : null;
  }
  async projectMcpDecide(f: string, name: string, digest: string, decision: string): Promise<void> {
    this.calls.push(`decide ${name} ${digest} ${decision}`);
    if (this.changedUnder) {
      this.files = [file({ digest: 'd2', previous: undefined })];
      this.changedUnder = false;
      throw { code: 'project-config-changed', message: `${f}/${name} changed since it was shown` };
    }
    this.decided.set(name, digest);
  }
  async projectMcpRestart(session: string): Promise<SessionInfo> {
    this.calls.push(`restart ${session}`);
    return { id: session, folder, agent: 'demo' };
  }
}

describe('serverTarget', () => {
  it('shows the whole command line, quoted as a shell would need, or the URL without its query', () => {
    const servers = file().servers;
    expect(serverTarget(at(servers, 0))).toBe("npx -y server-fs './my docs'");
    expect(serverTarget(at(servers, 1))).toBe('https://mcp.example.com/v1 (+ a query not shown)');
    expect(serverTarget(at(servers, 2))).toBe("gh-mcp --token '${GITHUB_TOKEN}'");
    expect(quoteArg("it's")).toBe(`'it'\\''s'`);
    expect(quoteArg('')).toBe("''");
  });
});

describe('ProjectMcpController', () => {
  it('asks per session opened, hides "Not now" for this run, and forgets a used file once decided', async () => {
    const shell = new FakeShell();
    const c = new ProjectMcpController(shell);
    await c.check(folder);
    expect(c.view(folder).files.map((f) => f.file)).toEqual(['.mcp.json']);
    c.later(folder, at(c.view(folder).files));
    expect(c.view(folder).files).toEqual([]);
    // The same bytes are asked about again with the next session only when they changed.
    shell.files = [file({ digest: 'd2' })];
    await c.check(folder);
    expect(c.view(folder).files.map((f) => f.digest)).toEqual(['d2']);

    await c.decide(folder, at(c.view(folder).files), 'use');
    expect(shell.calls).toContain('decide .mcp.json d2 use');
    expect(c.view(folder)).toMatchObject({ files: [], used: ['.mcp.json'], error: null });
    await c.check(folder);
    expect(c.view(folder).files).toEqual([]);

    await c.restart(folder, 's1');
    expect(shell.calls.at(-1)).toBe('restart s1');
    expect(c.view(folder).used).toEqual([]);
  });

  it('shows a file that changed under the decision again, saying why, and records nothing', async () => {
    const shell = new FakeShell();
    const c = new ProjectMcpController(shell);
    await c.check(folder);
    shell.changedUnder = true;
    await c.decide(folder, at(c.view(folder).files), 'use');
    const v = c.view(folder);
    expect(v.error?.code).toBe('project-config-changed');
    expect(v.files.map((f) => f.digest)).toEqual(['d2']);
    expect(v.used).toEqual([]);
    expect(shell.decided.size).toBe(0);
  });

  it('says a failed offer on the card instead of throwing', async () => {
    const c = new ProjectMcpController({
      ...new FakeShell(),
      projectMcpOffer: () => Promise.reject({ code: 'folder-missing', message: 'gone' }),
    } as unknown as ProjectMcpBackend);
    await c.check(folder);
    expect(c.view(folder).error).toEqual({ code: 'folder-missing', message: 'gone' });
  });
});

describe('ProjectMcpOffer.svelte', () => {
  const base: FolderOffer = { files: [file()], used: [], busy: false, error: null };

  function mount(offer: FolderOffer, canRestart = true) {
    const got: string[] = [];
    const r = render(ProjectMcpOffer, {
      offer,
      canRestart,
      ondecide: (f: OfferedFile, d: string) => got.push(`${d} ${f.file}`),
      onlater: (f: OfferedFile) => got.push(`later ${f.file}`),
      onrestart: () => got.push('restart'),
      ondismissused: () => got.push('dismiss'),
    });
    return { ...r, got };
  }

  it('shows every server with what it runs, names only for env and headers, and the choices', async () => {
    const { container, getByRole, got } = mount(base);
    const card = container.querySelector('[data-project-mcp=".mcp.json"]') as HTMLElement;
    expect(card.textContent).toContain(
      'This folder has its own MCP servers (.mcp.json, written for Claude Code).',
    );
    expect(card.textContent).toContain('They would run');
    const fs = card.querySelector('[data-server="files"]') as HTMLElement;
    expect(fs.querySelector('code')?.textContent).toBe("npx -y server-fs './my docs'");
    expect(fs.textContent).toContain('env: FS_TOKEN');
    const gh = card.querySelector('[data-server="gh"]') as HTMLElement;
    expect(gh.classList.contains('held')).toBe(true);
    expect(gh.textContent).toContain('Not used:');
    expect(gh.textContent).toContain('GITHUB_TOKEN');
    expect(within(card).getByText(/headers: X-Key/)).toBeTruthy();
    await fireEvent.click(getByRole('button', { name: 'Use in this folder' }));
    await fireEvent.click(getByRole('button', { name: 'Not now' }));
    await fireEvent.click(getByRole('button', { name: 'Ignore this file' }));
    expect(got).toEqual(['use .mcp.json', 'later .mcp.json', 'ignore .mcp.json']);
  });

  it('offers no Use for a file with nothing usable, and names a changed file', () => {
    const held = file({ previous: 'use', servers: [at(file().servers, 2)] });
    const { getByRole, container } = mount({ ...base, files: [held] });
    expect(
      (getByRole('button', { name: 'Use in this folder' }) as HTMLButtonElement).disabled,
    ).toBe(true);
    expect(container.textContent).toContain('.mcp.json changed since you chose to use it');
    expect(container.textContent).toContain('None of its servers could be used as written');
  });

  it('says a used file takes effect with the next session and offers the restart when it is safe', async () => {
    const { getByRole, got, container } = mount({ ...base, files: [], used: ['.mcp.json'] });
    expect(container.textContent).toContain('will be used from the next session in this folder');
    await fireEvent.click(getByRole('button', { name: 'Restart session with them' }));
    expect(got).toEqual(['restart']);
    cleanup();
    const busy = mount({ ...base, files: [], used: ['.mcp.json'] }, false);
    expect(
      (busy.getByRole('button', { name: 'Restart session with them' }) as HTMLButtonElement)
        .disabled,
    ).toBe(true);
  });
});
