import { describe, expect, it } from 'vitest';
import type { HistoryEvents, HistoryHit, StreamEvent } from './generated/ipc';
import {
  HistoryController,
  SEARCH_DEBOUNCE_MS,
  groupByFolder,
  listingAgents,
  openAt,
  pastStatus,
  relativeTime,
  type HistoryBackend,
  type HistorySession,
  type Timer,
} from './history';
import { SessionStore } from './session-store';

const session = (over: Partial<HistorySession>): HistorySession => ({
  id: 's1',
  agent: 'demo',
  folder: '/p/ledger',
  title: 'Fix the parser',
  createdMs: 0,
  updatedMs: 1000,
  status: 'dead',
  statusDetail: 'Session closed.',
  rows: 3,
  open: false,
  ...over,
});

const sid = 's1';
const events: StreamEvent[] = [
  { kind: 'session-status', sessionId: sid, status: 'ready' },
  { kind: 'turn-start', sessionId: sid, prompt: [{ type: 'text', text: 'find session_info' }] },
  { kind: 'text-delta', sessionId: sid, text: 'Looking.' },
  {
    kind: 'tool-call',
    sessionId: sid,
    toolCallId: 't1',
    toolName: 'grep session_info',
    arguments: {},
    isUpdate: false,
    status: 'pending',
  },
  { kind: 'text-delta', sessionId: sid, text: 'Found it in src/lib.rs.' },
  {
    kind: 'tool-call',
    sessionId: sid,
    toolCallId: 't1',
    toolName: 'grep session_info',
    arguments: {},
    isUpdate: true,
    status: 'completed',
  },
  { kind: 'turn-end', sessionId: sid, reason: 'completed', stopReason: 'end_turn' },
];
const seqs = [1, 2, 3, 4, 5, 6, 7];

/** A timer the test fires by hand. */
function manualTimer(): { timer: Timer; fire: () => void; waiting: () => number } {
  let queue: { fn: () => void; ms: number }[] = [];
  return {
    timer: (fn, ms) => {
      const t = { fn, ms };
      queue.push(t);
      return () => (queue = queue.filter((q) => q !== t));
    },
    fire: () => {
      const now = queue;
      queue = [];
      for (const t of now) {
        expect(t.ms).toBe(SEARCH_DEBOUNCE_MS);
        t.fn();
      }
    },
    waiting: () => queue.length,
  };
}

class Fake implements HistoryBackend {
  calls: string[] = [];
  sessions: HistorySession[] = [];
  answers = new Map<string, (v: HistoryHit[]) => void>();
  async historyStatus() {
    return { recording: true, readOnly: false, file: '/d/history.sqlite3', notices: [] };
  }
  async historyList() {
    this.calls.push('list');
    return this.sessions;
  }
  historySearch(text: string): Promise<HistoryHit[]> {
    this.calls.push(`search:${text}`);
    return new Promise((resolve) => this.answers.set(text, resolve));
  }
  async historyEvents(id: string): Promise<HistoryEvents> {
    this.calls.push(`events:${id}`);
    const s = this.sessions.find((x) => x.id === id);
    if (!s) throw { code: 'session-unknown', message: `no stored session has the id \`${id}\`` };
    return { session: s, seqs, events, unreadable: 0 };
  }
  async historyDelete(id: string) {
    this.calls.push(`delete:${id}`);
    return 'Deleted from the history, not at the agent (demo): it does not offer session/delete';
  }
  async historyExport(id: string, format: string) {
    this.calls.push(`export:${id}:${format}`);
    return `/home/me/${id}.md`;
  }
  async historyCopyId(id: string) {
    this.calls.push(`copy:${id}`);
  }
  async historyContinue(id: string) {
    this.calls.push(`continue:${id}`);
    if (id === 'gone-folder')
      throw {
        code: 'folder-missing',
        message: 'the folder /p/gone of session gone-folder is gone',
      };
    return { id: 'r1', folder: '/p/ledger', agent: 'demo' };
  }
  async historySendContext(session: string, stored: string) {
    this.calls.push(`context:${session}:${stored}`);
    return { reason: 'completed' as const, stopReason: 'end_turn' as const };
  }
  async historyAgentSessions(agent: string, folder: string) {
    this.calls.push(`list:${agent}:${folder}`);
    return [{ acpSessionId: 'a-1', title: 'Old chat', updatedAt: '2026-11-30T10:00:00Z' }];
  }
  async historyImport(agent: string, folder: string, acp: string) {
    this.calls.push(`import:${agent}:${folder}:${acp}`);
    return { id: 'r2', folder, agent };
  }
  async onHistoryNotice() {
    return () => undefined;
  }
}

const hit = (sessionId: string, seq: number): HistoryHit => ({
  sessionId,
  seq,
  kind: 'text-delta',
  snippet: [{ text: 'session_info', hit: true }],
  agent: 'demo',
  folder: '/p/ledger',
  updatedMs: 0,
});

describe('groupByFolder', () => {
  it('groups by folder, newest session first in each, the most recent folder first', () => {
    const groups = groupByFolder([
      session({ id: 'a', folder: '/p/old', updatedMs: 100 }),
      session({ id: 'b', folder: '/p/ledger', updatedMs: 300 }),
      session({ id: 'c', folder: '/p/old', updatedMs: 500 }),
      session({ id: 'd', folder: '/p/ledger', updatedMs: 200 }),
    ]);
    expect(groups.map((g) => [g.name, g.sessions.map((s) => s.id)])).toEqual([
      ['old', ['c', 'a']],
      ['ledger', ['b', 'd']],
    ]);
    expect(groupByFolder([])).toEqual([]);
  });
});

describe('times and status', () => {
  it('says how long ago, then the date', () => {
    const now = Date.UTC(2026, 11, 1, 12);
    expect(relativeTime(now - 10_000, now)).toBe('just now');
    expect(relativeTime(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(relativeTime(now - 30 * 3_600_000, now)).toBe('yesterday');
    expect(relativeTime(now - 4 * 86_400_000, now)).toBe('4 days ago');
    expect(relativeTime(now - 40 * 86_400_000, now)).toMatch(/2026|Oct|10/);
  });

  it('names how a session ended', () => {
    expect(pastStatus(session({})).key).toBe('closed');
    expect(pastStatus(session({ open: true })).label).toBe('Open');
    const died = pastStatus(session({ statusDetail: 'The agent exited with code 3.\nmore' }));
    expect([died.key, died.detail]).toEqual(['ended', 'The agent exited with code 3.']);
    expect(pastStatus(session({ status: 'prompting', statusDetail: null })).key).toBe('cut-off');
  });
});

describe('openAt', () => {
  it('finds the entry a stored row made: a message, a tool call updated later, none', () => {
    const text = openAt(events, seqs, 5);
    const entries = text.store.state.entries;
    expect(entries[text.index ?? -1]).toMatchObject({
      type: 'agent',
      text: 'Found it in src/lib.rs.',
    });
    const tool = openAt(events, seqs, 6);
    expect(entries.length).toBe(tool.store.state.entries.length);
    expect(tool.store.state.entries[tool.index ?? -1]).toMatchObject({
      type: 'tool',
      toolCallId: 't1',
      status: 'completed',
    });
    const prompt = openAt(events, seqs, 2);
    expect(prompt.store.state.entries[prompt.index ?? -1]).toMatchObject({ type: 'user' });
    // The whole thread is there either way.
    expect(openAt(events, seqs, null)).toMatchObject({ index: null });
    expect(openAt(events, seqs, 99).store.state.entries.length).toBe(entries.length);
  });
});

describe('HistoryController', () => {
  it('debounces the search, and only the latest query answers', async () => {
    const b = new Fake();
    const t = manualTimer();
    const h = new HistoryController(b, t.timer);
    h.setQuery('ses');
    h.setQuery('session');
    expect(h.state).toMatchObject({ query: 'session', searching: true, hits: null });
    expect(t.waiting()).toBe(1);
    t.fire();
    expect(b.calls).toEqual(['search:session']);
    h.setQuery('session_info');
    t.fire();
    b.answers.get('session')?.([hit('old', 1)]);
    await Promise.resolve();
    expect(h.state.hits).toBeNull();
    b.answers.get('session_info')?.([hit('s1', 5)]);
    await Promise.resolve();
    expect(h.state).toMatchObject({ searching: false, hits: [{ sessionId: 's1', seq: 5 }] });
    h.setQuery('  ');
    expect(h.state).toMatchObject({ hits: null, searching: false });
  });

  it('opens a hit at its entry, deletes after the confirmation, says what copy and export did', async () => {
    const b = new Fake();
    b.sessions = [session({ id: 's1' }), session({ id: 's2', folder: '/p/other' })];
    const h = new HistoryController(b, manualTimer().timer);
    await h.refresh();
    expect(h.state.groups.map((g) => g.name)).toEqual(['ledger', 'other']);
    await h.openSession('s1', 4);
    expect(h.state.open?.focus).toBe(2);
    expect(h.state.open?.store.state.entries[2]).toMatchObject({ type: 'tool' });
    await h.confirmDeleteNow();
    expect(b.calls).not.toContain('delete:s1');
    h.askDelete('s1');
    h.cancelDelete();
    expect(h.state.confirmDelete).toBeNull();
    h.askDelete('s1');
    await h.confirmDeleteNow();
    expect(b.calls).toContain('delete:s1');
    expect(h.state).toMatchObject({
      open: null,
      said: 'Deleted from the history, not at the agent (demo): it does not offer session/delete',
    });
    expect(h.state.sessions.map((s) => s.id)).toEqual(['s2']);
    await h.copyId('s2');
    expect(h.state.said).toBe('Session id copied');
    await h.export('s2', 'jsonl');
    expect(b.calls.at(-1)).toBe('export:s2:jsonl');
    expect(h.state.said).toBe('Exported to /home/me/s2.md');
    await h.openSession('gone');
    expect(h.state.error).toMatchObject({ code: 'session-unknown' });
  });

  it('continues the open session: the new live session starts from the stored transcript', async () => {
    const b = new Fake();
    b.sessions = [session({ id: 's1' }), session({ id: 'gone-folder' })];
    const h = new HistoryController(b, manualTimer().timer);
    expect(await h.continueSession()).toBeNull();
    await h.openSession('s1');
    const r = await h.continueSession();
    expect(r?.info.id).toBe('r1');
    expect(r?.events).toEqual(events);
    expect(h.state).toMatchObject({ open: null, continuing: false });
    // The live store shows the stored thread, then what the live session says.
    const store = new SessionStore();
    store.showStored(r?.events ?? [], true);
    store.applyAll([
      { snapshot: true, events: [{ kind: 'session-status', sessionId: sid, status: 'starting' }] },
      {
        snapshot: false,
        events: [
          { kind: 'session-continued', sessionId: sid, mode: 'continue', outcome: 'new' },
          { kind: 'session-status', sessionId: sid, status: 'ready' },
        ],
      },
    ]);
    expect(store.state.entries.map((e) => e.type)).toEqual(
      openAt(events, seqs, null).store.state.entries.map((e) => e.type),
    );
    expect(store.state).toMatchObject({
      status: 'ready',
      turnRunning: false,
      continued: { sessionId: sid, outcome: 'new' },
    });
    await h.openSession('gone-folder');
    expect(await h.continueSession()).toBeNull();
    expect(h.state.error).toMatchObject({ code: 'folder-missing' });
  });

  it('asks an agent that lists its sessions for its own, and opens one', async () => {
    const lists = {
      launchName: 'claude',
      title: 'Claude Code',
      sessionMethods: { load: true, resume: true, list: true, close: false, delete: false },
    };
    const groups = groupByFolder([
      session({ id: 'a', agent: 'claude', agentIdentity: lists }),
      session({ id: 'b', agent: 'claude', agentIdentity: lists }),
      session({ id: 'c', agent: 'demo' }),
    ]);
    expect(listingAgents(groups[0] ?? { folder: '', name: '', sessions: [] })).toEqual([
      { agent: 'claude', name: 'Claude Code' },
    ]);
    const b = new Fake();
    const h = new HistoryController(b, manualTimer().timer);
    expect(await h.importSession('a-1')).toBeNull();
    await h.showAgentSessions('/p/ledger', 'claude', 'Claude Code');
    expect(h.state.agentSessions?.sessions?.map((x) => x.acpSessionId)).toEqual(['a-1']);
    const info = await h.importSession('a-1');
    expect(info?.id).toBe('r2');
    expect(b.calls).toContain('import:claude:/p/ledger:a-1');
    expect(h.state.agentSessions).toBeNull();
  });
});
