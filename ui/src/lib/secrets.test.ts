import { describe, expect, it } from 'vitest';
import type { IpcError } from './generated/ipc';
import {
  agentsText,
  credentialWords,
  nameProblem,
  SecretsController,
  sourceText,
  type McpServerRow,
  type McpServersListing,
  type SecretsBackend,
  type SecretsListing,
} from './secrets';
import { mcpChip, mcpServersOf, reportSource, type McpServerReport } from './mcp-servers';

const VALUE = 'sk-test-4b9d01e7';

/** The shell as a plain model: a keychain of names to values, one server using `github-mcp`. */
class FakeSecrets implements SecretsBackend {
  calls: string[] = [];
  keychain = new Map<string, string>();
  available = true;
  failSet: IpcError | null = null;
  private listing(): SecretsListing {
    const used: Record<string, string[]> = { 'github-mcp': ['MCP server `github` (settings)'] };
    const names = new Set([...Object.keys(used), ...(this.available ? this.keychain.keys() : [])]);
    return {
      available: this.available,
      problem: this.available ? null : 'no keychain service is running (no bus)',
      settingsFile: '/cfg/settings.json',
      secrets: [...names].sort().map((name) => ({
        name,
        stored: this.available && this.keychain.has(name),
        usedBy: used[name] ?? [],
      })),
    };
  }
  async secretsList(): Promise<SecretsListing> {
    this.calls.push('secretsList');
    return this.listing();
  }
  async secretSet(name: string, value: string): Promise<SecretsListing> {
    this.calls.push(`secretSet ${name}`);
    if (this.failSet) throw this.failSet;
    this.keychain.set(name, value);
    return this.listing();
  }
  async secretDelete(name: string): Promise<SecretsListing> {
    this.calls.push(`secretDelete ${name}`);
    if (!this.keychain.delete(name))
      throw { code: 'invalid-input', message: `the keychain holds no secret \`${name}\`` };
    return this.listing();
  }
  async mcpServersList(): Promise<McpServersListing> {
    this.calls.push('mcpServersList');
    return {
      settingsFile: '/cfg/settings.json',
      servers: [
        {
          name: 'github',
          transport: 'http',
          source: 'settings',
          target: 'https://api.example.com/mcp',
          credential: 'github-mcp',
          credentialStored: this.available ? this.keychain.has('github-mcp') : null,
          notes: [],
        },
      ],
      problems: [],
      keychainProblem: this.available ? null : 'no keychain service is running',
    };
  }
  async openSettings(): Promise<void> {
    this.calls.push('openSettings');
  }
}

describe('SecretsController', () => {
  it('stores a secret, follows the listings, and keeps the value nowhere in its state', async () => {
    const b = new FakeSecrets();
    const c = new SecretsController(b);
    const seen: string[] = [];
    c.subscribe((v) => seen.push(JSON.stringify(v)));
    await c.refresh();
    expect(c.state.servers?.servers[0]?.credentialStored).toBe(false);
    expect(c.state.secrets?.secrets).toEqual([
      { name: 'github-mcp', stored: false, usedBy: ['MCP server `github` (settings)'] },
    ]);

    c.prepare('github-mcp');
    expect(c.state.formName).toBe('github-mcp');
    expect(await c.store(' github-mcp ', VALUE)).toBe(true);
    expect(b.keychain.get('github-mcp')).toBe(VALUE);
    expect(c.state.said).toBe(
      'Stored github-mcp in the keychain. Sessions started from now on use it.',
    );
    expect(c.state.formName).toBe('');
    expect(c.state.servers?.servers[0]?.credentialStored).toBe(true);
    expect(c.state.secrets?.secrets[0]?.stored).toBe(true);
    // Every state the view was ever given, none with the value.
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.filter((s) => s.includes(VALUE))).toEqual([]);

    expect(await c.store('github-mcp', 'another')).toBe(true);
    expect(c.state.said).toMatch(/^Replaced github-mcp/);
  });

  it('refuses a bad name or an empty value before the shell is asked', async () => {
    const b = new FakeSecrets();
    const c = new SecretsController(b);
    expect(await c.store('has space', VALUE)).toBe(false);
    expect(c.state.error).toEqual({
      code: 'invalid-input',
      message: 'Use letters, digits and . _ - / : @ only (like github-mcp).',
    });
    expect(await c.store('ok', '   ')).toBe(false);
    expect(c.state.error?.message).toMatch(/empty/);
    expect(b.calls.filter((x) => x.startsWith('secretSet'))).toEqual([]);
    expect(JSON.stringify(c.state)).not.toContain(VALUE);
  });

  it('says what the keychain said when storing fails, and reports it as not stored', async () => {
    const b = new FakeSecrets();
    b.failSet = {
      code: 'keychain-unavailable',
      message: 'the keychain is locked (dismissed): unlock it and try again',
    };
    const c = new SecretsController(b);
    await c.refresh();
    expect(await c.store('github-mcp', VALUE)).toBe(false);
    expect(c.state.error?.code).toBe('keychain-unavailable');
    expect(c.state.saving).toBe(false);
    expect(c.state.said).toBeNull();
    expect(JSON.stringify(c.state)).not.toContain(VALUE);
  });

  it('removes only after the user confirmed', async () => {
    const b = new FakeSecrets();
    b.keychain.set('github-mcp', VALUE);
    const c = new SecretsController(b);
    await c.refresh();
    c.askRemove('github-mcp');
    expect(c.state.confirmRemove).toBe('github-mcp');
    c.cancelRemove();
    await c.remove();
    expect(b.keychain.has('github-mcp')).toBe(true);
    c.askRemove('github-mcp');
    await c.remove();
    expect(b.keychain.has('github-mcp')).toBe(false);
    expect(c.state.said).toBe('Removed github-mcp from the keychain.');
    expect(c.state.secrets?.secrets[0]?.stored).toBe(false);
    expect(c.state.servers?.servers[0]?.credentialStored).toBe(false);
  });

  it('a removal that finds nothing says so and lists again', async () => {
    const b = new FakeSecrets();
    b.keychain.set('gone', 'x');
    const c = new SecretsController(b);
    await c.refresh();
    b.keychain.delete('gone');
    c.askRemove('gone');
    await c.remove();
    expect(c.state.error?.message).toMatch(/holds no secret `gone`/);
    await new Promise((r) => setTimeout(r, 0));
    expect(c.state.secrets?.secrets.map((s) => s.name)).toEqual(['github-mcp']);
  });

  it('keeps the no-keychain state with its problem', async () => {
    const b = new FakeSecrets();
    b.available = false;
    const c = new SecretsController(b);
    await c.refresh();
    expect(c.state.secrets?.available).toBe(false);
    expect(c.state.secrets?.problem).toMatch(/no keychain service/);
    const row = c.state.servers?.servers[0] as McpServerRow;
    expect(credentialWords(row)).toEqual({
      text: 'Credential github-mcp: the keychain cannot be read',
      tone: 'muted',
    });
  });

  it('a listing that fails is said, and a later one replaces it', async () => {
    const b = new FakeSecrets();
    const c = new SecretsController(b);
    const ok = b.secretsList.bind(b);
    b.secretsList = async () => {
      throw { code: 'internal', message: 'could not list the secrets: the task stopped' };
    };
    await c.refresh();
    expect(c.state.listError?.code).toBe('internal');
    b.secretsList = ok;
    await c.refresh();
    expect(c.state.listError).toBeNull();
    expect(c.state.secrets).not.toBeNull();
  });
});

describe('the words', () => {
  it('checks names as the engine does', () => {
    expect(nameProblem('github-mcp')).toBeNull();
    expect(nameProblem('team/api:key@prod')).toBeNull();
    expect(nameProblem('')).toMatch(/name/);
    expect(nameProblem('x'.repeat(129))).toMatch(/128/);
    expect(nameProblem('a b')).toMatch(/letters/);
  });

  it('says where a server comes from and which agents get it', () => {
    expect(sourceText({ source: 'settings' })).toBe('Your settings');
    expect(sourceText({ source: 'manifest', sourceDetail: 'helper' })).toBe('Manifest helper');
    expect(agentsText({ source: 'settings' })).toBe('For every agent');
    expect(agentsText({ source: 'settings', agents: ['claude', 'codex'] })).toBe(
      'Only for claude, codex',
    );
    expect(agentsText({ source: 'manifest', sourceDetail: 'helper' })).toBe(
      'For its agent, helper',
    );
  });

  it('says a credential stored, missing, or unknown', () => {
    const row: McpServerRow = {
      name: 'g',
      transport: 'http',
      source: 'settings',
      target: 'https://x/mcp',
      notes: [],
    };
    expect(credentialWords(row)).toBeNull();
    expect(credentialWords({ ...row, credential: 'k', credentialStored: true })?.tone).toBe('ok');
    expect(credentialWords({ ...row, credential: 'k', credentialStored: false })).toEqual({
      text: 'Credential k: missing. Sessions skip this server until it is stored.',
      tone: 'warn',
    });
  });
});

describe('the MCP chip', () => {
  const report = (over: Partial<McpServerReport>): McpServerReport => ({
    name: 'x',
    transport: 'stdio',
    source: 'settings',
    target: 'x',
    passed: true,
    notes: [],
    ...over,
  });

  it('counts the servers passed and says the skipped ones', () => {
    expect(mcpChip(null)).toBeNull();
    expect(mcpChip([])).toBeNull();
    const chip = mcpChip([
      report({ name: 'a' }),
      report({ name: 'b', transport: 'http' }),
      report({ name: 'c', transport: 'sse', passed: false, reason: 'the agent cannot use SSE' }),
    ]);
    expect(chip?.label).toBe('MCP 2');
    expect(chip?.meaning).toBe('2 MCP servers passed to the agent, 1 skipped');
    expect(chip?.skipped.map((s) => s.name)).toEqual(['c']);
    expect(mcpChip([report({ passed: false })])?.meaning).toBe(
      '0 MCP servers passed to the agent, 1 skipped',
    );
    expect(mcpChip([report({})])?.meaning).toBe('1 MCP server passed to the agent');
  });

  it('names each source', () => {
    expect(reportSource(report({ source: 'manifest', sourceDetail: 'helper' }))).toBe(
      'manifest helper',
    );
    expect(reportSource(report({ source: 'project', sourceDetail: '/p/.mcp.json' }))).toBe(
      'project file /p/.mcp.json',
    );
  });

  it('reads the servers of an mcp-servers event only', () => {
    expect(mcpServersOf({ kind: 'notice' })).toBeNull();
    const servers = [report({})];
    expect(mcpServersOf({ kind: 'mcp-servers', sessionId: 's', servers } as never)).toEqual(
      servers,
    );
  });
});
