import { describe, expect, it } from 'vitest';
import type { StreamEvent, StreamFrame } from './generated/ipc';
import { SessionStore } from './session-store';

const sid = 's';
const text = (t: string, messageId?: string): StreamEvent => ({
  kind: 'text-delta',
  sessionId: sid,
  text: t,
  ...(messageId ? { messageId } : {}),
});
const live = (...events: StreamEvent[]): StreamFrame => ({ snapshot: false, events });

// Transcripts recorded through `acp-desk-cli run --json` from a real agent (claude-code-acp).
const transcripts = import.meta.glob('../../../tests/real-agents/transcripts/*.jsonl', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

function transcript(name: string): StreamEvent[] {
  const text = transcripts[`../../../tests/real-agents/transcripts/${name}`];
  if (text === undefined) throw new Error(`no transcript ${name}`);
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as StreamEvent);
}

describe('SessionStore', () => {
  it('merges text deltas per message and tells subscribers once per batch', () => {
    const store = new SessionStore();
    const seen: number[] = [];
    store.subscribe((v) => seen.push(v.entries.length));
    store.applyAll([
      live(text('Hel'), text('lo')),
      live(text(' world'), { kind: 'thought', sessionId: sid, text: 'hmm' }, text('next')),
    ]);
    expect(seen).toEqual([0, 3]);
    const [a, t, b] = store.state.entries;
    expect(a).toMatchObject({ type: 'agent', text: 'Hello world' });
    expect(t).toMatchObject({ type: 'thought', text: 'hmm' });
    expect(b).toMatchObject({ type: 'agent', text: 'next' });
  });

  it('starts a new message when the message id changes', () => {
    const store = new SessionStore();
    store.applyAll([live(text('a', 'm1'), text('b', 'm1'), text('c', 'm2'))]);
    expect(store.state.entries.map((e) => (e.type === 'agent' ? e.text : ''))).toEqual(['ab', 'c']);
  });

  it('a snapshot replaces what the view held', () => {
    const store = new SessionStore();
    store.applyAll([live(text('old'))]);
    store.applyAll([{ snapshot: true, events: [text('new')] }]);
    expect(store.state.entries).toHaveLength(1);
    expect(store.state.entries[0]).toMatchObject({ text: 'new' });
  });

  it('keeps one card per tool call, updated in place, and queues permission requests', () => {
    const store = new SessionStore();
    const events = transcript('claude-code-acp-allow-edit.jsonl');
    // Applied one event per frame, as a slow stream would arrive.
    for (const ev of events) store.applyAll([live(ev)]);
    const tools = store.state.entries.filter((e) => e.type === 'tool');
    const ids = new Set(events.flatMap((e) => (e.kind === 'tool-call' ? [e.toolCallId] : [])));
    expect(tools).toHaveLength(ids.size);
    for (const t of tools) expect(t).toMatchObject({ status: 'completed' });
    const edit = tools.find((t) => t.type === 'tool' && t.kind === 'edit');
    // An update without a title keeps the one the call had.
    expect(edit).toMatchObject({ title: expect.stringMatching(/^Edit `.*edit\.txt`$/) });
    expect(store.state.pending).toEqual([]);
    expect(store.state.turnRunning).toBe(false);
    // The CLI closed the session at the end of the recording.
    expect(store.state.status).toBe('dead');
    const settled = store.state.entries.filter((e) => e.type === 'settled');
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({ text: expect.stringContaining('a rule chose') });
  });

  it('gives the same thread whether a transcript arrives in one batch or event by event', () => {
    for (const name of [
      'claude-code-acp-allow-run.jsonl',
      'claude-code-acp-reject-write.jsonl',
      'claude-code-acp-allow-read.jsonl',
    ]) {
      const events = transcript(name);
      const whole = new SessionStore();
      whole.applyAll([live(...events)]);
      const oneByOne = new SessionStore();
      for (const ev of events) oneByOne.applyAll([live(ev)]);
      const strip = (s: SessionStore) => s.state.entries.map((e) => ({ ...e, key: 0 }));
      expect(strip(oneByOne)).toEqual(strip(whole));
      expect(whole.state.entries.some((e) => e.type === 'turn-end')).toBe(true);
    }
  });

  it('a pending request leaves the queue when settled elsewhere', () => {
    const store = new SessionStore();
    const ask = (id: string): StreamEvent => ({
      kind: 'agent-prompt',
      sessionId: sid,
      toolCallId: id,
      targetToolCallId: 't',
      toolName: `tool ${id}`,
      options: [{ optionId: 'ok', name: 'Allow', kind: 'allow_once' }],
    });
    store.applyAll([live(ask('a'), ask('b'), ask('a'))]);
    expect(store.state.pending.map((p) => p.toolCallId)).toEqual(['a', 'b']);
    store.applyAll([
      live({
        kind: 'agent-prompt-settled',
        sessionId: sid,
        toolCallId: 'a',
        outcome: { cancelled: true },
        by: 'stop',
      }),
    ]);
    expect(store.state.pending.map((p) => p.toolCallId)).toEqual(['b']);
    expect(store.state.entries.at(-1)).toMatchObject({
      type: 'settled',
      text: 'Permission for “tool a” cancelled: the turn was stopped.',
    });
  });

  it('a dead session ends the turn and drops its pending requests', () => {
    const store = new SessionStore();
    store.applyAll([
      live(
        { kind: 'turn-start', sessionId: sid, prompt: [{ type: 'text', text: 'go' }] },
        {
          kind: 'agent-prompt',
          sessionId: sid,
          toolCallId: 'x',
          targetToolCallId: 'x',
          options: [],
        },
        { kind: 'session-status', sessionId: sid, status: 'dead', detail: 'exited with code 3' },
      ),
    ]);
    expect(store.state).toMatchObject({
      status: 'dead',
      statusDetail: 'exited with code 3',
      turnRunning: false,
      pending: [],
    });
    expect(store.state.entries[0]).toMatchObject({ type: 'user', text: 'go' });
  });

  it('folds tool-call updates: content replaced whole, rawOutput kept when content is empty', () => {
    const store = new SessionStore();
    const base = { sessionId: sid, toolCallId: 't1', toolName: '', arguments: {}, isUpdate: true };
    store.applyAll([
      live({
        ...base,
        kind: 'tool-call',
        toolName: 'Edit src/a.rs',
        toolKind: 'edit',
        status: 'pending',
        isUpdate: false,
        arguments: { path: 'src/a.rs' },
        locations: [{ path: '/p/src/a.rs', line: 3 }],
      }),
      live({
        ...base,
        kind: 'tool-call',
        status: 'in_progress',
        content: [{ type: 'diff', path: '/p/src/a.rs', oldText: 'a', newText: 'b' }],
      }),
      live({ ...base, kind: 'tool-call', status: 'completed', rawOutput: { stdout: 'ok' } }),
      live({ kind: 'tool-result', sessionId: sid, toolCallId: 't1', result: {}, isError: false }),
    ]);
    expect(store.state.entries).toHaveLength(1);
    expect(store.state.entries[0]).toMatchObject({
      type: 'tool',
      title: 'Edit src/a.rs',
      kind: 'edit',
      status: 'completed',
      rawInput: { path: 'src/a.rs' },
      rawOutput: { stdout: 'ok' },
      locations: [{ path: '/p/src/a.rs', line: 3 }],
      content: [{ type: 'diff', newText: 'b' }],
    });
  });

  it('takes nothing from a tool-result: an update after it still shows, a failure stays failed', () => {
    const store = new SessionStore();
    const call = {
      kind: 'tool-call' as const,
      sessionId: sid,
      toolName: 'Run',
      arguments: {},
      isUpdate: false,
    };
    const text = (t: string) => [
      { type: 'content' as const, content: { type: 'text' as const, text: t } },
    ];
    store.applyAll([
      live(
        { ...call, toolCallId: 'a', status: 'completed', content: text('first') },
        { ...call, toolCallId: 'b', status: 'failed' },
        {
          kind: 'tool-result',
          sessionId: sid,
          toolCallId: 'a',
          result: { content: text('first'), rawOutput: 'raw' },
          isError: false,
        },
        { kind: 'tool-result', sessionId: sid, toolCallId: 'b', result: {}, isError: false },
        { ...call, toolCallId: 'a', toolName: '', isUpdate: true, content: text('later') },
      ),
    ]);
    const [a, b] = store.state.entries;
    expect(a).toMatchObject({ status: 'completed', content: text('later'), rawOutput: undefined });
    expect(b).toMatchObject({ status: 'failed' });
  });

  it('keeps terminal output per terminal, capped from the start, with its exit status', () => {
    const store = new SessionStore();
    const out = (data: string, extra: Partial<StreamEvent> = {}): StreamEvent =>
      ({
        kind: 'terminal-output',
        sessionId: sid,
        terminalId: 'term',
        data,
        ...extra,
      }) as StreamEvent;
    store.applyAll([live(out('abcdefghijk', { outputByteLimit: 8 } as Partial<StreamEvent>))]);
    let t = store.state.terminals['term'];
    expect(t).toMatchObject({ text: 'defghijk', dropped: 3, limit: 8, exitStatus: null });
    store.applyAll([live(out('12', { exitStatus: { exitCode: 0 } } as Partial<StreamEvent>))]);
    t = store.state.terminals['term'];
    // Within the slack (a quarter of the limit): nothing trimmed yet.
    expect(t).toMatchObject({ text: 'defghijk12', dropped: 3, exitStatus: { exitCode: 0 } });
    // A view that had written everything so far continues with exactly the new text.
    const written = 13;
    store.applyAll([live(out('xyz'))]);
    t = store.state.terminals['term'];
    expect(t?.text.slice(written - (t?.dropped ?? 0))).toBe('xyz');
    expect(t?.exitStatus).toEqual({ exitCode: 0 });
  });

  it('keeps usage, commands, modes, config options and background tasks up to date', () => {
    const store = new SessionStore();
    store.applyAll([
      live(
        {
          kind: 'usage_update',
          sessionId: sid,
          used: 10,
          size: 100,
          cost: { amount: 0.5, currency: 'USD' },
        },
        { kind: 'usage_update', sessionId: sid, used: 20, size: 100 },
        {
          kind: 'available-commands',
          sessionId: sid,
          commands: [{ name: 'help', description: 'Help' }],
        },
        {
          kind: 'modes',
          sessionId: sid,
          currentModeId: 'ask',
          availableModes: [
            { id: 'ask', name: 'Ask' },
            { id: 'code', name: 'Code' },
          ],
        },
        { kind: 'current-mode', sessionId: sid, currentModeId: 'code' },
        {
          kind: 'config-options',
          sessionId: sid,
          configOptions: [
            {
              id: 'model',
              name: 'Model',
              type: 'select',
              currentValue: 'a',
              options: [{ value: 'a', name: 'A' }],
            },
          ],
        },
        {
          kind: 'background-task',
          sessionId: sid,
          phase: 'started',
          task: { taskId: 'bg', description: 'Build', status: 'running' },
        },
        {
          kind: 'background-task',
          sessionId: sid,
          phase: 'settled',
          // Each event carries the task merged so far (the engine's), replacing the copy.
          task: { taskId: 'bg', status: 'completed', description: 'Build', summary: 'ok' },
        },
        {
          kind: 'plan',
          sessionId: sid,
          entries: [{ content: 'one', priority: 'high', status: 'pending' }],
        },
        {
          kind: 'plan',
          sessionId: sid,
          entries: [{ content: 'two', priority: 'low', status: 'completed' }],
        },
      ),
    ]);
    const v = store.state;
    expect(v.usage).toMatchObject({ used: 20, size: 100, cost: { amount: 0.5 } });
    expect(v.commands.map((c) => c.name)).toEqual(['help']);
    expect(v.modes?.current).toBe('code');
    expect(v.configOptions[0]?.id).toBe('model');
    expect(v.tasks).toEqual([
      { taskId: 'bg', description: 'Build', status: 'completed', summary: 'ok' },
    ]);
    // Replaced whole, not merged.
    expect(v.plan).toEqual([{ content: 'two', priority: 'low', status: 'completed' }]);
  });

  it("shows a prompt's attachments as chips", () => {
    const store = new SessionStore();
    store.applyAll([
      live({
        kind: 'turn-start',
        sessionId: sid,
        prompt: [
          { type: 'text', text: 'look at ' },
          { type: 'resource_link', name: 'a.rs', uri: 'file:///p/a.rs' },
          { type: 'resource', resource: { uri: 'file:///p/b.rs', text: 'fn b() {}' } },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
      }),
    ]);
    expect(store.state.entries[0]).toMatchObject({
      type: 'user',
      text: 'look at ',
      attachments: [
        { kind: 'file', name: 'a.rs' },
        { kind: 'resource', name: 'b.rs' },
        { kind: 'image', name: 'image/png' },
      ],
    });
  });

  it('logs a settled request with the words of the button chosen, not the agent’s short name', () => {
    // claude-code-acp names its allow-once option "Allow"; the dialog's button says "Allow once".
    const store = new SessionStore();
    store.applyAll([live(...transcript('claude-code-acp-allow-run.jsonl'))]);
    const settled = store.state.entries.filter((e) => e.type === 'settled');
    expect(settled.map((e) => e.text)).toEqual([
      'Permission for “`echo hi-from-bash > out.txt && cat out.txt`”: a rule chose “Allow once”.',
    ]);
  });

  it('names an option once when the agent’s name extends our label, and adds other words', () => {
    const store = new SessionStore();
    const ask = (id: string, name: string): StreamEvent => ({
      kind: 'agent-prompt',
      sessionId: sid,
      toolCallId: id,
      targetToolCallId: 't',
      toolName: 'Edit a',
      options: [{ optionId: 'o', name, kind: 'allow_always' }],
    });
    const settle = (id: string): StreamEvent => ({
      kind: 'agent-prompt-settled',
      sessionId: sid,
      toolCallId: id,
      outcome: { optionId: 'o' },
      by: 'user',
    });
    store.applyAll([
      live(ask('a', 'Always allow edits'), settle('a'), ask('b', 'Yes, and don’t ask again')),
      live(settle('b')),
    ]);
    expect(store.state.entries.map((e) => (e.type === 'settled' ? e.text : ''))).toEqual([
      'Permission for “Edit a”: you chose “Always allow edits”.',
      'Permission for “Edit a”: you chose “Always allow” (the agent’s “Yes, and don’t ask again”).',
    ]);
  });

  it('places a file change with the call that wrote it, even after the next call began', () => {
    const store = new SessionStore();
    const call = (id: string, status: 'in_progress' | 'completed'): StreamEvent => ({
      kind: 'tool-call',
      sessionId: sid,
      toolCallId: id,
      toolName: `Edit ${id}`,
      arguments: null,
      isUpdate: false,
      toolKind: 'edit',
      status,
    });
    const changed = (path: string, created: boolean, toolCallId?: string): StreamEvent => ({
      kind: 'file-changed',
      sessionId: sid,
      path,
      created,
      via: 'watcher',
      ...(toolCallId ? { toolCallId } : {}),
    });
    store.applyAll([
      live(
        call('a', 'in_progress'),
        call('a', 'completed'),
        call('b', 'in_progress'),
        // The watcher's report of a's write arrives while b runs.
        changed('/p/new.txt', true, 'a'),
        changed('/p/new.txt', false, 'a'),
        changed('/p/other.txt', false),
      ),
    ]);
    const v = store.state.entries;
    expect(v.map((e) => e.type)).toEqual(['tool', 'tool', 'file']);
    expect(v[0]).toMatchObject({ toolCallId: 'a', files: [{ path: '/p/new.txt', created: true }] });
    expect(v[1]).toMatchObject({ toolCallId: 'b', files: [] });
    expect(v[2]).toMatchObject({ type: 'file', path: '/p/other.txt', created: false });
  });
});

describe('the mcp-servers event', () => {
  // The event is an addition of issue 17 (ADDITIONS in events/mod.rs), as the engine sends it.
  const servers = [
    {
      name: 'files',
      transport: 'stdio',
      source: 'settings',
      target: 'mcp-files',
      passed: true,
      notes: [],
    },
    {
      name: 'events',
      transport: 'sse',
      source: 'manifest',
      sourceDetail: 'helper',
      target: 'https://events.example.com/sse',
      passed: false,
      reason: 'the agent does not take SSE servers (mcpCapabilities.sse is not set)',
      notes: [],
    },
  ];
  const mcp = (list: unknown[]): StreamEvent =>
    ({ kind: 'mcp-servers', sessionId: sid, servers: list }) as unknown as StreamEvent;
  const warning: StreamEvent = {
    kind: 'notice',
    sessionId: sid,
    severity: 'warning',
    title: 'MCP server events was skipped',
    description: 'the agent does not take SSE servers',
    source: 'client',
  };

  it('is kept whole, replaced by the next start, and makes no entry of its own', () => {
    const store = new SessionStore();
    expect(store.state.mcpServers).toBeNull();
    store.applyAll([live(mcp(servers), warning)]);
    expect(store.state.mcpServers).toEqual(servers);
    // The skipped server is in the thread through the engine's notice, once.
    expect(store.state.entries).toEqual([
      {
        type: 'notice',
        key: expect.any(Number),
        severity: 'warning',
        title: 'MCP server events was skipped',
        description: 'the agent does not take SSE servers',
      },
    ]);
    store.applyAll([live(mcp(servers.slice(0, 1)))]);
    expect(store.state.mcpServers?.map((s) => s.name)).toEqual(['files']);
  });

  it('is forgotten by a snapshot without it and by a stored transcript', () => {
    const store = new SessionStore();
    store.applyAll([live(mcp(servers))]);
    store.applyAll([{ snapshot: true, events: [text('hi')] }]);
    expect(store.state.mcpServers).toBeNull();
    // A stored session's servers were another run's: nothing runs for it now.
    store.showStored([mcp(servers), text('old')]);
    expect(store.state.mcpServers).toBeNull();
    store.applyAll([{ snapshot: true, events: [mcp(servers)] }]);
    expect(store.state.mcpServers).toEqual(servers);
  });
});
