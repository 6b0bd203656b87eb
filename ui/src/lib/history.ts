// The History view's logic: past sessions grouped by project folder, the search over every
// stored transcript (debounced, the latest query wins), and a stored session opened from the
// store into the same SessionStore that renders live sessions. Plain TypeScript: no Svelte,
// no Tauri, so tests drive it directly.
import type { UiError, Unsubscribe } from './backend-types';
import { toUiError } from './backend-types';
import type {
  AgentSession,
  ExportFormat,
  HistoryEvents,
  HistoryHit,
  HistoryNotice,
  HistorySession,
  HistoryStatus,
  SessionInfo,
  StreamEvent,
  TurnEnd,
} from './generated/ipc';
import { baseName } from './paths';
import { SessionStore } from './session-store';

export type {
  AgentSession,
  ExportFormat,
  HistoryHit,
  HistoryNotice,
  HistorySession,
  HistoryStatus,
};

/** What the History view needs from the shell (backend.ts implements it; tests fake it). */
export interface HistoryBackend {
  historyStatus(): Promise<HistoryStatus>;
  historyList(): Promise<HistorySession[]>;
  historySearch(text: string): Promise<HistoryHit[]>;
  historyEvents(id: string): Promise<HistoryEvents>;
  /** The UI asks the user first. */
  /** Says where it was deleted (the history; the agent too, or why not). */
  historyDelete(id: string): Promise<string>;
  /** Shows the save dialog; the written file's path, or null when the user cancelled. */
  historyExport(id: string, format: ExportFormat): Promise<string | null>;
  historyCopyId(id: string): Promise<void>;
  /** Continues a stored session with its agent: a new session of the window (attach it). */
  historyContinue(id: string): Promise<SessionInfo>;
  /** Sends a stored session's transcript to a running session as context (one turn). */
  historySendContext(session: string, stored: string): Promise<TurnEnd>;
  /** The agent's own sessions in a folder (`session/list`). */
  historyAgentSessions(agent: string, folder: string): Promise<AgentSession[]>;
  /** Opens one of them (load: its replay becomes the transcript; resume only: not shown). */
  historyImport(agent: string, folder: string, acpSessionId: string): Promise<SessionInfo>;
  onHistoryNotice(cb: (n: HistoryNotice) => void): Promise<Unsubscribe>;
}

/** Past sessions of one project folder. */
export interface FolderGroup {
  folder: string;
  name: string;
  sessions: HistorySession[];
}

/** Sessions grouped by folder: each group's sessions newest first, the group with the most
 * recent session first. */
export function groupByFolder(sessions: readonly HistorySession[]): FolderGroup[] {
  const groups = new Map<string, HistorySession[]>();
  for (const s of sessions) {
    const list = groups.get(s.folder);
    if (list) list.push(s);
    else groups.set(s.folder, [s]);
  }
  const out: FolderGroup[] = [];
  for (const [folder, list] of groups) {
    list.sort((a, b) => b.updatedMs - a.updatedMs || a.id.localeCompare(b.id));
    out.push({ folder, name: baseName(folder) || folder, sessions: list });
  }
  out.sort(
    (a, b) =>
      (b.sessions[0]?.updatedMs ?? 0) - (a.sessions[0]?.updatedMs ?? 0) ||
      a.folder.localeCompare(b.folder),
  );
  return out;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "just now", "5 min ago", "3 h ago", "yesterday", "4 days ago", then the date. */
export function relativeTime(ms: number, now: number): string {
  const d = now - ms;
  if (d < MINUTE) return 'just now';
  if (d < HOUR) return `${Math.floor(d / MINUTE)} min ago`;
  if (d < DAY) return `${Math.floor(d / HOUR)} h ago`;
  if (d < 2 * DAY) return 'yesterday';
  if (d < 7 * DAY) return `${Math.floor(d / DAY)} days ago`;
  const date = new Date(ms);
  const sameYear = date.getFullYear() === new Date(now).getFullYear();
  return date.toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    ...(sameYear ? {} : { year: 'numeric' }),
  });
}

/** The store's words start in lower case (they follow "acp-desk-cli: " on the CLI). */
export function sentence(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The exact time, for the tooltip. */
export function exactTime(ms: number): string {
  return new Date(ms).toLocaleString(undefined, {
    dateStyle: 'full',
    timeStyle: 'medium',
  });
}

/** How a past session ended, in words. */
export interface PastStatus {
  key: 'open' | 'closed' | 'ended' | 'cut-off' | 'stopped';
  label: string;
  /** More, for the tooltip. */
  detail: string;
}

export function pastStatus(s: HistorySession): PastStatus {
  if (s.open) return { key: 'open', label: 'Open', detail: 'Open in the sidebar now' };
  const detail = s.statusDetail?.split('\n')[0] ?? '';
  switch (s.status) {
    case 'dead':
      return /^session closed/i.test(detail)
        ? { key: 'closed', label: 'Closed', detail: 'Closed by the user' }
        : { key: 'ended', label: 'Ended', detail: detail || 'The agent stopped' };
    case 'prompting':
      return {
        key: 'cut-off',
        label: 'Cut off',
        detail: 'ACP Desk stopped in the middle of a turn',
      };
    default:
      return {
        key: 'stopped',
        label: 'Stopped',
        detail: 'ACP Desk stopped before the session was closed',
      };
  }
}

/** The name shown for a session's agent. */
export function agentName(s: HistorySession): string {
  return s.agentIdentity?.title ?? s.agentIdentity?.name ?? s.agent;
}

/** The agents of a folder's sessions that said they list their own sessions (`session/list`). */
export function listingAgents(g: FolderGroup): { agent: string; name: string }[] {
  const out = new Map<string, string>();
  for (const s of g.sessions) {
    if (s.agentIdentity?.sessionMethods?.list && !out.has(s.agent)) out.set(s.agent, agentName(s));
  }
  return [...out].map(([agent, name]) => ({ agent, name }));
}

/** The title shown for a session. */
export function sessionTitle(s: Pick<HistorySession, 'title'>): string {
  return s.title?.trim() || 'Untitled session';
}

/**
 * The index in the rendered thread of the entry that stored row `seq` made: the events are
 * applied up to that row (the row's own entry is then the last one, or its tool call's card),
 * then the rest; entry keys stay, so the entry is found again by key. `null` when no row has
 * that number (deleted, or unreadable) or the row made no entry (a status change).
 */
export function openAt(
  events: readonly StreamEvent[],
  seqs: readonly number[],
  seq: number | null,
): { store: SessionStore; index: number | null } {
  const store = new SessionStore();
  const at = seq === null ? -1 : seqs.indexOf(seq);
  if (at < 0) {
    store.applyAll([{ snapshot: true, events: [...events] }]);
    return { store, index: null };
  }
  store.applyQuietly([{ snapshot: true, events: events.slice(0, at + 1) }]);
  const ev = events[at];
  const sofar = store.state.entries;
  const toolId =
    ev && 'toolCallId' in ev && typeof ev.toolCallId === 'string' ? ev.toolCallId : null;
  const entry = toolId
    ? sofar.find((e) => e.type === 'tool' && e.toolCallId === toolId)
    : sofar.at(-1);
  store.applyQuietly([{ snapshot: false, events: events.slice(at + 1) }]);
  store.notify();
  if (!entry) return { store, index: null };
  const index = store.state.entries.findIndex((e) => e.key === entry.key);
  return { store, index: index < 0 ? null : index };
}

/** How long typing must pause before a search runs. */
export const SEARCH_DEBOUNCE_MS = 250;

/** A stored session opened in the window. */
export interface OpenPast {
  session: HistorySession;
  store: SessionStore;
  /** The entry to scroll to and mark (a search hit's), if any. */
  focus: number | null;
  /** Rows this build could not read. */
  unreadable: number;
  /** The stored events (a continued session starts from them). */
  events: StreamEvent[];
}

export interface HistoryView {
  /** The list has been read at least once. */
  loaded: boolean;
  loading: boolean;
  sessions: HistorySession[];
  groups: FolderGroup[];
  query: string;
  /** `null`: no search (the query is empty). */
  hits: HistoryHit[] | null;
  searching: boolean;
  status: HistoryStatus | null;
  /** Notices not dismissed. */
  notices: HistoryNotice[];
  error: UiError | null;
  /** Why the list could not be read (shown in its place, with Try again). */
  listError: UiError | null;
  open: OpenPast | null;
  /** Opening a session (its id) is under way. */
  opening: string | null;
  /** An agent's own sessions, asked for one folder. */
  agentSessions: {
    folder: string;
    agent: string;
    name: string;
    sessions: AgentSession[] | null;
    error: UiError | null;
  } | null;
  /** Continuing the open session with its agent is under way. */
  continuing: boolean;
  /** Waiting for the user to confirm deleting this session. */
  confirmDelete: string | null;
  /** What the last action did ("Copied", "Exported to …"), shown briefly. */
  said: string | null;
}

type Listener = (v: HistoryView) => void;
export type Timer = (fn: () => void, ms: number) => () => void;
const realTimer: Timer = (fn, ms) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

export class HistoryController {
  private view: HistoryView = {
    loaded: false,
    loading: false,
    sessions: [],
    groups: [],
    query: '',
    hits: null,
    searching: false,
    status: null,
    notices: [],
    error: null,
    listError: null,
    open: null,
    opening: null,
    continuing: false,
    agentSessions: null,
    confirmDelete: null,
    said: null,
  };
  private listeners = new Set<Listener>();
  private pending: (() => void) | null = null;
  /** Bumped per search and per open: only the latest one's answer is shown. */
  private searchSeq = 0;
  private openSeq = 0;
  private unlisten: Unsubscribe | null = null;

  constructor(
    private backend: HistoryBackend,
    private timer: Timer = realTimer,
  ) {}

  get state(): HistoryView {
    return this.view;
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    fn(this.view);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<HistoryView>): void {
    this.view = { ...this.view, ...patch };
    for (const fn of this.listeners) fn(this.view);
  }

  /** Reads whether history is on (the window shows a notice when it is not) and listens for
   * notices from then on. */
  async start(): Promise<void> {
    try {
      this.unlisten = await this.backend.onHistoryNotice((n) =>
        this.set({ notices: [...this.view.notices, n] }),
      );
      const status = await this.backend.historyStatus();
      this.set({ status, notices: [...status.notices, ...this.view.notices] });
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }

  stop(): void {
    this.unlisten?.();
    this.unlisten = null;
    this.pending?.();
  }

  dismissNotice(i: number): void {
    this.set({ notices: this.view.notices.filter((_, k) => k !== i) });
  }

  dismissError(): void {
    this.set({ error: null });
  }

  /** Reads the list again (when the view is shown, after a delete). */
  async refresh(): Promise<void> {
    this.set({ loading: true });
    try {
      const sessions = await this.backend.historyList();
      this.set({
        sessions,
        groups: groupByFolder(sessions),
        loaded: true,
        loading: false,
        listError: null,
      });
    } catch (e) {
      this.set({ loading: false, loaded: true, listError: toUiError(e) });
    }
  }

  /** The search box changed: the search runs once typing pauses. */
  setQuery(query: string): void {
    this.pending?.();
    this.pending = null;
    const seq = ++this.searchSeq;
    if (query.trim() === '') {
      this.set({ query, hits: null, searching: false });
      return;
    }
    this.set({ query, searching: true });
    this.pending = this.timer(() => {
      this.pending = null;
      void this.search(query, seq);
    }, SEARCH_DEBOUNCE_MS);
  }

  private async search(query: string, seq: number): Promise<void> {
    try {
      const hits = await this.backend.historySearch(query);
      if (seq === this.searchSeq) this.set({ hits, searching: false });
    } catch (e) {
      if (seq === this.searchSeq) this.set({ hits: [], searching: false, error: toUiError(e) });
    }
  }

  /** Opens a stored session: its transcript from the store, scrolled to `seq`'s entry when a
   * search hit opened it. */
  async openSession(id: string, seq: number | null = null): Promise<void> {
    const n = ++this.openSeq;
    this.set({ opening: id, confirmDelete: null, said: null });
    try {
      const stored = await this.backend.historyEvents(id);
      if (n !== this.openSeq) return;
      const { store, index } = openAt(stored.events, stored.seqs, seq);
      this.set({
        open: {
          session: stored.session,
          store,
          focus: index,
          unreadable: stored.unreadable,
          events: stored.events,
        },
        opening: null,
      });
    } catch (e) {
      if (n === this.openSeq) this.set({ opening: null, error: toUiError(e) });
    }
  }

  /** Back to the list. */
  closeSession(): void {
    this.openSeq++;
    this.set({ open: null, opening: null, confirmDelete: null, said: null });
  }

  /** Continues the open stored session: the new live session and the transcript it starts
   * from, or null when it could not (the error is shown). */
  async continueSession(): Promise<{ info: SessionInfo; events: StreamEvent[] } | null> {
    const open = this.view.open;
    if (!open || this.view.continuing) return null;
    this.set({ continuing: true, said: null });
    try {
      const info = await this.backend.historyContinue(open.session.id);
      this.set({ continuing: false, open: null });
      return { info, events: open.events };
    } catch (e) {
      this.set({ continuing: false, error: toUiError(e) });
      return null;
    }
  }

  /** Asks `agent` for its own sessions in `folder`. */
  async showAgentSessions(folder: string, agent: string, name: string): Promise<void> {
    this.set({ agentSessions: { folder, agent, name, sessions: null, error: null } });
    try {
      const sessions = await this.backend.historyAgentSessions(agent, folder);
      if (this.view.agentSessions?.folder === folder && this.view.agentSessions.agent === agent)
        this.set({ agentSessions: { folder, agent, name, sessions, error: null } });
    } catch (e) {
      if (this.view.agentSessions?.folder === folder && this.view.agentSessions.agent === agent)
        this.set({ agentSessions: { folder, agent, name, sessions: [], error: toUiError(e) } });
    }
  }

  hideAgentSessions(): void {
    this.set({ agentSessions: null });
  }

  /** Opens one of the agent's own sessions: the new live session, or null (error shown). */
  async importSession(acpSessionId: string): Promise<SessionInfo | null> {
    const shown = this.view.agentSessions;
    if (!shown) return null;
    try {
      const info = await this.backend.historyImport(shown.agent, shown.folder, acpSessionId);
      this.set({ agentSessions: null });
      return info;
    } catch (e) {
      this.set({ error: toUiError(e) });
      return null;
    }
  }

  askDelete(id: string): void {
    this.set({ confirmDelete: id, said: null });
  }

  cancelDelete(): void {
    this.set({ confirmDelete: null });
  }

  /** Deletes the session the user confirmed. */
  async confirmDeleteNow(): Promise<void> {
    const id = this.view.confirmDelete;
    if (!id) return;
    try {
      const where = await this.backend.historyDelete(id);
      const sessions = this.view.sessions.filter((s) => s.id !== id);
      const hits = this.view.hits?.filter((h) => h.sessionId !== id) ?? null;
      const open = this.view.open?.session.id === id ? null : this.view.open;
      this.set({
        sessions,
        groups: groupByFolder(sessions),
        hits,
        open,
        confirmDelete: null,
        said: where,
      });
    } catch (e) {
      this.set({ confirmDelete: null, error: toUiError(e) });
    }
  }

  async copyId(id: string): Promise<void> {
    try {
      await this.backend.historyCopyId(id);
      this.set({ said: 'Session id copied' });
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }

  async export(id: string, format: ExportFormat): Promise<void> {
    try {
      const path = await this.backend.historyExport(id, format);
      if (path) this.set({ said: `Exported to ${path}` });
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }
}
