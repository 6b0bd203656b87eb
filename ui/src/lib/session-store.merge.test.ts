// A view that attaches late (a reload, a second window) gets the engine's compacted snapshot; a
// view that was there all along got every live event. Both must show the same thread. The
// fixture is made by the engine itself (crates/acp-desk-core/tests/tool_call_merge.rs: its thread
// turns an agent's updates into events, its compactor makes the snapshots) and checked against
// the engine on every CI run, so this compares the real Rust merge with the store's.
import { describe, expect, it } from 'vitest';
import type { StreamEvent, StreamFrame } from './generated/ipc';
import { SessionStore, type SessionView } from './session-store';

const files = import.meta.glob('../../../tests/fixtures/tool-call-merge.json', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

interface Fixture {
  live: StreamEvent[];
  snapshot: StreamEvent[];
  attach: { after: number; snapshot: StreamEvent[] }[];
}

function fixture(): Fixture {
  const text = Object.values(files)[0];
  if (text === undefined) throw new Error('tests/fixtures/tool-call-merge.json is missing');
  return JSON.parse(text) as Fixture;
}

/** What the window shows: the view without the keys the store numbers its entries with. */
function shown(store: SessionStore): unknown {
  const v: SessionView = store.state;
  return {
    ...v,
    entries: v.entries.map((e) =>
      Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'key')),
    ),
  };
}

const live = (events: StreamEvent[]): StreamFrame[] =>
  events.map((e) => ({ snapshot: false, events: [e] }));

function viewOf(frames: StreamFrame[]): SessionStore {
  const store = new SessionStore();
  store.applyAll(frames);
  return store;
}

describe('a late view and a live view of one turn', () => {
  const f = fixture();
  const whole = viewOf(live(f.live));

  it('the fixture holds the turn the test is about', () => {
    const edits = f.live.filter((e) => e.kind === 'tool-call' && e.toolCallId === 'toolu_edit');
    expect(edits.length).toBeGreaterThanOrEqual(4);
    expect(edits[0]).toMatchObject({ arguments: {}, isUpdate: false });
    expect(edits.slice(1).some((e) => e.kind === 'tool-call' && e.toolName === '')).toBe(true);
    expect(f.live.some((e) => e.kind === 'agent-prompt')).toBe(true);
    expect(f.live.some((e) => e.kind === 'terminal-output')).toBe(true);
  });

  it('show the same thread: the snapshot made by the compactor, and every live event', () => {
    const late = viewOf([{ snapshot: true, events: f.snapshot }]);
    expect(shown(late)).toEqual(shown(whole));
  });

  it('show the edit with its input and title, though later updates carried neither', () => {
    const edit = whole.state.entries.find(
      (e) => e.type === 'tool' && e.toolCallId === 'toolu_edit',
    );
    expect(edit).toMatchObject({
      title: 'Edit `src/lib.rs`',
      status: 'completed',
      rawInput: { file_path: '/project/src/lib.rs' },
    });
  });

  it('show the same thread when the view attaches mid-turn, then gets the rest live', () => {
    expect(f.attach.length).toBeGreaterThan(0);
    for (const { after, snapshot } of f.attach) {
      const late = viewOf([{ snapshot: true, events: snapshot }, ...live(f.live.slice(after))]);
      expect(shown(late), `attached after event ${after}`).toEqual(shown(whole));
    }
  });

  it('show the same thread when live events come batched in one frame', () => {
    expect(shown(viewOf([{ snapshot: false, events: f.live }]))).toEqual(shown(whole));
  });

  it('a mid-turn view shows the request waiting, as a live one did at that point', () => {
    const atPrompt = f.attach[0];
    if (!atPrompt) throw new Error('no mid-turn attach in the fixture');
    const late = viewOf([{ snapshot: true, events: atPrompt.snapshot }]);
    const there = viewOf(live(f.live.slice(0, atPrompt.after)));
    expect(late.state.pending.map((p) => p.toolCallId)).toEqual(['toolu_edit#1']);
    expect(shown(late)).toEqual(shown(there));
  });
});
