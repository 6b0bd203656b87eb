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
});
