// The sidebar across a restart and the composer's drafts, against the controller alone.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppController, DRAFT_SAVE_MS } from './app-controller';
import type { StreamEvent, StreamFrame } from './generated/ipc';
import { FakeBackend } from '../test/fake-backend';

const now = (fn: () => void) => fn();
const flush = () => new Promise<void>((r) => setTimeout(r, 0));

const said = (sessionId: string, text: string): StreamEvent => ({
  kind: 'text-delta',
  sessionId,
  text,
});
const status = (sessionId: string, s: 'starting' | 'ready'): StreamFrame => ({
  snapshot: false,
  events: [{ kind: 'session-status', sessionId, status: s }],
});

function restoredBackend(): FakeBackend {
  const backend = new FakeBackend();
  backend.restored = {
    sessions: [
      {
        sessionId: 'hA',
        folder: '/p/a',
        agent: 'demo',
        draft: '',
        events: [
          {
            kind: 'turn-start',
            sessionId: 'hA',
            prompt: [{ type: 'text', text: 'first question' }],
          },
          said('hA', 'the stored answer'),
          { kind: 'turn-end', sessionId: 'hA', reason: 'completed', stopReason: 'end_turn' },
        ],
      },
      { sessionId: 'hB', folder: '/p/b', agent: 'demo', draft: 'half typed', events: [] },
    ],
    shown: 1,
    startAtOnce: false,
  };
  return backend;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('restored sessions', () => {
  it('come back in order with the shown one, transcripts and drafts, and no agent started', async () => {
    const backend = restoredBackend();
    const app = new AppController(backend, now);
    await app.start();
    expect(app.state.sessions.map((s) => [s.id, s.folder])).toEqual([
      ['hA', '/p/a'],
      ['hB', '/p/b'],
    ]);
    expect(app.state.active).toBe('hB');
    expect(app.draft('hB').text).toBe('half typed');
    const a = app.store('hA').state;
    expect(a.status).toBe('stored');
    expect(a.entries.map((e) => e.type)).toEqual(['user', 'agent', 'turn-end']);
    expect(backend.called('openSession')).toEqual([]);
    // Restoring saves nothing new: the same sidebar.
    expect(backend.called('setOpenSessions').at(-1)).toEqual([
      [
        { sessionId: 'hA', folder: '/p/a', agent: 'demo' },
        { sessionId: 'hB', folder: '/p/b', agent: 'demo' },
      ],
      1,
    ]);
  });

  it('starts the agent when the user returns to it, keeping its place and the stored transcript', async () => {
    const backend = restoredBackend();
    const app = new AppController(backend, now);
    await app.start();
    app.select('hA');
    await flush();
    // Its stored conversation is continued, under its history id.
    expect(backend.called('continueSession')).toEqual([['hA']]);
    expect(backend.called('openSession')).toEqual([]);
    expect(app.state.sessions.map((s) => s.id)).toEqual(['s1', 'hB']);
    expect(app.state.active).toBe('s1');
    // The snapshot of the continued session rebuilds on top of the stored transcript.
    backend.frame('s1', status('hA', 'ready'));
    const v = app.store('s1').state;
    expect(v.status).toBe('ready');
    expect(v.entries.map((e) => e.type)).toEqual(['user', 'agent', 'turn-end']);
    expect(v.entries[1]).toMatchObject({ text: 'the stored answer' });
    // The sidebar is saved in the same place, under the same history id.
    await flush();
    expect(backend.called('setOpenSessions').at(-1)).toEqual([
      [
        { sessionId: 'hA', folder: '/p/a', agent: 'demo' },
        { sessionId: 'hB', folder: '/p/b', agent: 'demo' },
      ],
      0,
    ]);
  });

  it('starts the agent of the shown one when the user types in it', async () => {
    const backend = restoredBackend();
    const app = new AppController(backend, now);
    await app.start();
    app.saveDraft('hB', { text: 'half typed!', parts: [] });
    await flush();
    expect(backend.called('continueSession')).toEqual([['hB']]);
    expect(app.draft('s1').text).toBe('half typed!');
  });

  it('starts a new session, saying so, when the history cannot continue it', async () => {
    const backend = restoredBackend();
    backend.continueError = { code: 'invalid-input', message: 'no stored session has the id' };
    const app = new AppController(backend, now);
    await app.start();
    app.select('hA');
    await flush();
    expect(backend.called('openSession')).toEqual([['/p/a', 'demo']]);
    backend.frame('s1', status('eng-1', 'ready'));
    const v = app.store('s1').state;
    expect(v.entries.map((e) => e.type)).toEqual(['user', 'agent', 'turn-end', 'notice']);
    await flush();
    expect(backend.called('setOpenSessions').at(-1)?.[0]).toEqual([
      { sessionId: 'eng-1', folder: '/p/a', agent: 'demo' },
      { sessionId: 'hB', folder: '/p/b', agent: 'demo' },
    ]);
  });

  it('a file link in a restored transcript starts its session, then opens in it', async () => {
    const backend = restoredBackend();
    const app = new AppController(backend, now);
    await app.start();
    await app.openPath('notes.md');
    expect(backend.called('continueSession')).toEqual([['hB']]);
    expect(backend.called('openPath')).toEqual([['s1', 'notes.md', null]]);
  });

  it('start all at once when the settings say so, the shown one staying shown', async () => {
    const backend = restoredBackend();
    backend.restored.startAtOnce = true;
    const app = new AppController(backend, now);
    await app.start();
    await flush();
    expect(backend.called('continueSession')).toEqual([['hA'], ['hB']]);
    expect(app.state.sessions.map((s) => s.folder)).toEqual(['/p/a', '/p/b']);
    expect(app.state.sessions.find((s) => s.id === app.state.active)?.folder).toBe('/p/b');
  });

  it('a session whose folder is gone says so, is never started, and can be removed', async () => {
    const backend = restoredBackend();
    const [gone] = backend.restored.sessions;
    if (gone) gone.folderProblem = 'The folder /p/a is gone (moved or deleted?).';
    const app = new AppController(backend, now);
    await app.start();
    app.select('hA');
    await flush();
    expect(app.folderProblem('hA')).toMatch('/p/a');
    expect(backend.called('openSession')).toEqual([]);
    expect(await app.send([{ type: 'text', text: 'hi' }])).toBe(false);
    await app.close('hA');
    expect(app.state.sessions.map((s) => s.id)).toEqual(['hB']);
  });
});

describe('drafts', () => {
  it('are saved to the history once typing pauses, and cleared at once on send', async () => {
    vi.useFakeTimers();
    const backend = new FakeBackend();
    const app = new AppController(backend, now);
    await app.start();
    await app.openFolder('/p/a');
    backend.frame('s1', status('eng-1', 'ready'));
    app.saveDraft('s1', { text: 'h', parts: [] });
    app.saveDraft('s1', { text: 'he', parts: [] });
    vi.advanceTimersByTime(DRAFT_SAVE_MS - 1);
    expect(backend.called('saveDraft')).toEqual([]);
    app.saveDraft('s1', { text: 'hel', parts: [] });
    vi.advanceTimersByTime(DRAFT_SAVE_MS - 1);
    expect(backend.called('saveDraft')).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(backend.called('saveDraft')).toEqual([['eng-1', 'hel']]);
    // The composer empties its draft, then sends: cleared without waiting for the pause.
    app.saveDraft('s1', { text: '', parts: [] });
    void app.send([{ type: 'text', text: 'hel' }]);
    expect(backend.called('saveDraft')).toEqual([
      ['eng-1', 'hel'],
      ['eng-1', ''],
    ]);
    vi.advanceTimersByTime(DRAFT_SAVE_MS * 2);
    expect(backend.called('saveDraft').length).toBe(2);
  });

  it('of a session whose agent has not said its id yet are saved once it does', async () => {
    vi.useFakeTimers();
    const backend = new FakeBackend();
    const app = new AppController(backend, now);
    await app.start();
    await app.openFolder('/p/a');
    app.saveDraft('s1', { text: 'early', parts: [] });
    vi.advanceTimersByTime(DRAFT_SAVE_MS);
    expect(backend.called('saveDraft')).toEqual([]);
    // The app's own events carry the registry's id, not a history id.
    backend.frame('s1', status('s1', 'starting'));
    expect(backend.called('saveDraft')).toEqual([]);
    backend.frame('s1', status('eng-9', 'ready'));
    expect(backend.called('saveDraft')).toEqual([['eng-9', 'early']]);
  });
});
