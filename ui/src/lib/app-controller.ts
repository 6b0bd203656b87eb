// The window's logic, without Svelte: opening folders (menu, command line and drops all come
// through `openFolder`), the open sessions and which one is shown, prompting (a prompt sent
// while the agent starts waits for it), stopping, answering permissions, drafts, the window's
// title, and the menu items the window acts on (`onMenu`).
import type {
  Backend,
  MenuAction,
  OpenSessionEntry,
  ProjectFiles,
  PromptPart,
  RestoredSidebar,
  Theme,
  UiError,
  Unsubscribe,
} from './backend-types';
import { toUiError } from './backend-types';
import { AgentsController, type AgentListing } from './agents';
import type {
  AgentPromptEvent,
  ElicitationAnswer,
  ElicitationEvent,
  PermissionResolution,
  SessionInfo,
  StreamEvent,
  StreamFrame,
} from './generated/ipc';
import { baseName, isInside, relativePath } from './paths';
import { SessionStore } from './session-store';
import { closeNeedsConfirm, sentence, waitingCount } from './status';

export interface AppView {
  ready: boolean;
  /** Every agent the shell lists; null until the first listing arrives (after the window is
   * up: detection never holds up its start). */
  agents: AgentListing | null;
  /** The agent new sessions start with. */
  agent: string;
  /** Why that one ("default_agent in settings", "--agent on the command line", ...). */
  agentReason: string;
  /** Open sessions, in the order they were opened (the sidebar's order). */
  sessions: SessionInfo[];
  /** The session shown, if any. */
  active: string | null;
  /** The last error to show in the banner, until dismissed or replaced. */
  error: UiError | null;
  dragging: boolean;
  opening: boolean;
  /** The session list is shown (the header's ☰, View → Toggle Sidebar). */
  sidebarOpen: boolean;
  /** View → Theme, as saved; the window applies it (`lib/theme.ts`). */
  theme: Theme;
  /** A busy session File → Close Session asks about before closing it. */
  confirmClose: string | null;
  /** The permission request a notification or the tray asked to show (its dialog shows it
   * first), until the user selects a session themselves. */
  shownRequest: string | null;
  /** Said once about the desktop (no notification service), until dismissed. */
  desktopNotice: string | null;
}

/** The webview's own editing commands, on the focused field (Edit → Undo / Redo). */
export type Edit = (command: 'undo' | 'redo') => void;

export const editInDocument: Edit = (command) => {
  // Deprecated, but still the only way to reach the field's own undo stack.
  document.execCommand(command);
};

/** What the composer held for a session when the user left it. */
export interface Draft {
  text: string;
  /** Files and images attached but not sent yet. */
  parts: PromptPart[];
}

/** Runs `fn` before the next paint; tests pass one that runs at once. */
export type Scheduler = (fn: () => void) => void;

export const animationFrame: Scheduler = (fn) => {
  requestAnimationFrame(() => fn());
};

type Listener = (v: AppView) => void;

/** A draft is saved to the history once typing has paused this long (and at once on send). */
export const DRAFT_SAVE_MS = 500;

/** How long the `@` picker's file list is reused before it is listed again. */
const FILES_TTL_MS = 30_000;

/** A prompt sent before its session's agent was ready: it goes out once the agent is. */
interface Held {
  parts: PromptPart[];
  /** Gives it back to the draft (the start failed, or the user took it back). */
  giveBack(note: string | null): void;
}

/** The window's title: the shown session's folder and how many permission requests and questions wait in
 * every session, e.g. `(1) proj — ACP Desk`. */
export function windowTitle(folder: string | null, waiting: number): string {
  const name = folder === null ? null : baseName(folder);
  return `${waiting > 0 ? `(${waiting}) ` : ''}${name ? `${name} — ` : ''}ACP Desk`;
}

export class AppController {
  private view: AppView = {
    ready: false,
    agents: null,
    agent: 'demo',
    agentReason: '',
    sessions: [],
    active: null,
    error: null,
    dragging: false,
    opening: false,
    sidebarOpen: true,
    theme: 'system',
    confirmClose: null,
    shownRequest: null,
    desktopNotice: null,
  };
  private listeners = new Set<Listener>();
  private unsubscribers: Unsubscribe[] = [];
  private stores = new Map<string, SessionStore>();
  /** Stores with frames applied but not yet announced (once per animation frame). */
  private dirty = new Set<SessionStore>();
  private scheduled = false;
  /** Permission requests answered from this window, by session and request id (a second click
   * is not sent again; request ids repeat across sessions, as agents reuse tool call ids). */
  private answered = new Set<string>();
  private drafts = new Map<string, Draft>();
  /** At most one per session: the composer sends no more while one waits. */
  private held = new Map<string, Held>();
  /** The last prompt sent in each session, for Retry. */
  private lastSent = new Map<string, PromptPart[]>();
  /** Why a session's last prompt was given back, until the user sends again or dismisses it. */
  private notes = new Map<string, string>();
  private title = '';
  private files = new Map<string, { at: number; list: Promise<ProjectFiles> }>();
  /** Each session's id in the history (drafts and the saved sidebar name sessions by it): a
   * restored session's from the last run, a live one's from its engine's first status. */
  private historyIds = new Map<string, string>();
  /** Drafts waiting for the history: the save timer per session, and the sessions whose
   * history id is not known yet (saved once it is). */
  private draftTimers = new Map<string, ReturnType<typeof setTimeout>>();
  private unsavedDrafts = new Set<string>();
  /** Restored sessions whose folder cannot be used, and why (naming it). */
  private folderProblems = new Map<string, string>();
  /** Restored sessions whose agent is being started. */
  private waking = new Map<string, Promise<string | null>>();
  /** The sidebar is saved only once the last run's is restored (else it would be erased). */
  private sidebarRestored = false;
  private savedSidebar = '';
  /** `--agent NAME` from the command line: new sessions use it until the user chooses. */
  private argvAgent: string | null = null;
  /** Settles once the agent for new sessions is known (the command line's, or the first
   * listing's default): a folder opened before that waits for it. */
  private agentKnown: Promise<void>;
  private knowAgent: () => void = () => undefined;
  /** The Agents view's logic; its listings feed `agents` and the new-session agent. */
  readonly agentsView: AgentsController;

  constructor(
    private backend: Backend,
    private schedule: Scheduler = animationFrame,
    /** Whether a point (CSS pixels) is over the composer: files dropped there are attachments. */
    private overComposer: (x: number, y: number) => boolean = () => false,
    private edit: Edit = editInDocument,
  ) {
    this.agentKnown = new Promise((resolve) => (this.knowAgent = resolve));
    this.agentsView = new AgentsController(backend, (l) => this.onListing(l));
  }

  /** A new listing: the picker shows it, and new sessions follow its default (unless the
   * command line named an agent). `null`: the first listing could not be read. */
  private onListing(listing: AgentListing | null): void {
    if (listing) {
      this.set({
        agents: listing,
        agent: this.argvAgent ?? listing.defaultAgent,
        agentReason: this.argvAgent ? '--agent on the command line' : listing.defaultReason,
      });
    } else if (!this.argvAgent) {
      this.set({ agent: 'demo', agentReason: 'the agents could not be listed' });
    }
    this.knowAgent();
  }

  get state(): AppView {
    return this.view;
  }

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    fn(this.view);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<AppView>): void {
    this.view = { ...this.view, ...patch };
    for (const fn of this.listeners) fn(this.view);
    this.showTitle();
    this.saveSidebar();
  }

  /** Sets the window's title when what it says changed (the shown session, requests waiting). */
  private showTitle(): void {
    let waiting = 0;
    for (const s of this.stores.values()) waiting += waitingCount(s.state);
    const title = windowTitle(this.activeSession?.folder ?? null, waiting);
    if (title === this.title) return;
    this.title = title;
    // A title that could not be set is no reason to bother the user.
    void this.backend.setTitle(title).catch(() => undefined);
  }

  /** The thread of an open session (a fresh empty one for an unknown id). */
  store(id: string): SessionStore {
    return this.stores.get(id) ?? new SessionStore();
  }

  get activeSession(): SessionInfo | null {
    return this.view.sessions.find((s) => s.id === this.view.active) ?? null;
  }

  async start(): Promise<void> {
    this.unsubscribers.push(
      await this.backend.onFolderChosen(
        (e) => void this.openFolder(e.path, undefined, e.agent ?? undefined),
      ),
      await this.backend.onPathsDropped((e) => void this.dropped(e.paths, e.x, e.y)),
      await this.backend.onDragHover((e) => this.set({ dragging: e.active })),
      await this.backend.onMenuAction((e) => this.onMenu(e)),
      await this.backend.onShowRequest((e) => this.showRequested(e.session, e.requestId ?? null)),
      await this.backend.onDesktopNotice((e) => this.set({ desktopNotice: e.message })),
    );
    // Not awaited: the window works while the agents are detected.
    void this.agentsView.refresh();
    try {
      const info = await this.backend.appInfo();
      this.argvAgent = info.initialAgent ?? null;
      if (this.argvAgent) {
        this.set({ agent: this.argvAgent, agentReason: '--agent on the command line' });
        this.knowAgent();
      }
      this.set({ ready: true, theme: info.theme });
      if (info.desktopNotice) this.set({ desktopNotice: info.desktopNotice });
      await this.restore();
      if (info.initialFolder) await this.openFolder(info.initialFolder);
    } catch (e) {
      this.set({ ready: true, error: toUiError(e) });
    }
  }

  stop(): void {
    for (const u of this.unsubscribers) u();
    this.unsubscribers = [];
  }

  /** A menu item the window acts on. */
  onMenu(action: MenuAction): void {
    switch (action.action) {
      case 'close-session':
        this.requestClose();
        break;
      case 'toggle-sidebar':
        this.setSidebar(!this.view.sidebarOpen);
        break;
      case 'undo':
      case 'redo':
        this.edit(action.action);
        break;
      case 'theme':
        this.set({ theme: action.theme });
        break;
    }
  }

  setSidebar(open: boolean): void {
    this.set({ sidebarOpen: open });
  }

  /** File → Close Session: closes the shown session, or first asks when it is busy (a turn,
   * a start or a permission request), as the sidebar's Close does. */
  requestClose(id: string | null = this.view.active): void {
    if (!id || !this.stores.has(id)) return;
    if (closeNeedsConfirm(this.store(id).state)) this.set({ confirmClose: id });
    else void this.close(id);
  }

  /** The answer to requestClose's question. */
  confirmClose(close: boolean): void {
    const id = this.view.confirmClose;
    this.set({ confirmClose: null });
    if (close && id) void this.close(id);
  }

  /** The picker's choice: remembered (the state file) for new sessions, in this run and the
   * next. */
  chooseAgent(id: string): void {
    this.argvAgent = null;
    this.set({ agent: id, agentReason: 'chosen in this window' });
    void this.agentsView.useForNewSessions(id);
  }

  /** A notification (its body, Show) or a tray item: the session is shown, so its permission
   * dialog opens on the request it named. A session closed since is no longer there to show. */
  showRequested(session: string, requestId: string | null): void {
    if (!this.stores.has(session)) return;
    this.select(session);
    this.set({ shownRequest: requestId });
  }

  dismissDesktopNotice(): void {
    this.set({ desktopNotice: null });
  }

  dismissError(): void {
    this.set({ error: null });
  }

  showError(error: UiError): void {
    this.set({ error });
  }

  async pickFolder(): Promise<void> {
    try {
      await this.backend.pickFolder();
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }

  /** Shows another open session; its draft comes back with it. */
  select(id: string): void {
    if (!this.stores.has(id)) return;
    this.set({ active: id, shownRequest: null });
    // Returning to a restored session starts its agent.
    void this.wake(id);
  }

  /** Drops: a folder anywhere opens it; over the composer, files are mentioned in the draft. */
  async dropped(paths: string[], x: number, y: number): Promise<void> {
    this.set({ dragging: false });
    const [first] = paths;
    if (first === undefined) return;
    const session = this.activeSession;
    if (session && this.overComposer(x, y)) {
      const inside = paths.filter((p) => isInside(p, session.folder));
      const outside = paths.length - inside.length;
      if (inside.length > 0) {
        const draft = this.draft(session.id);
        const have = new Set(draft.parts.flatMap((p) => (p.type === 'file' ? [p.path] : [])));
        const added = inside
          // The shell's file parts are `/`-separated, on every OS.
          .map((p) => relativePath(p, session.folder).replaceAll('\\', '/'))
          .filter((p) => p !== '.' && !have.has(p))
          .map((path): PromptPart => ({ type: 'file', path }));
        this.saveDraft(session.id, { ...draft, parts: [...draft.parts, ...added] });
      }
      if (outside > 0) {
        this.set({
          error: {
            code: 'invalid-input',
            message: `${outside === 1 ? 'That item is' : `${outside} items are`} outside ${session.folder}; only files inside the project can be attached.`,
          },
        });
      }
      return;
    }
    if (paths.length > 1) {
      this.set({
        error: {
          code: 'invalid-input',
          message: `${paths.length} items were dropped; drop one project folder.`,
        },
      });
      return;
    }
    await this.openFolder(first);
  }

  /** The one way a session opens: from the menu's dialog, the command line or a drop. */
  async openFolder(folder: string, replacing?: string, agent?: string): Promise<void> {
    if (this.view.opening) {
      this.set({
        error: {
          code: 'invalid-input',
          message: `Still opening the previous folder; open ${folder} again once it is open.`,
        },
      });
      return;
    }
    this.set({ opening: true, error: null });
    if (!agent) await this.agentKnown;
    await this.openInto(folder, agent ?? this.view.agent, replacing, false, true);
  }

  /**
   * Opens a session, in `replacing`'s place when given (its draft goes along). With `carry`,
   * the replaced session's stored transcript stays above the new one (a restored session
   * whose agent starts). Resolves with the new session's id, or null when it did not open.
   * `opening`: this is the window's one folder being opened (`AppView.opening`), over when
   * this returns.
   */
  private async openInto(
    folder: string,
    agent: string,
    replacing: string | undefined,
    carry: boolean,
    opening = false,
  ): Promise<string | null> {
    let opened: SessionInfo | null = null;
    let continued = false;
    try {
      const from = carry && replacing ? this.historyIds.get(replacing) : undefined;
      if (from) {
        try {
          opened = await this.backend.continueSession(from);
          continued = true;
        } catch (e) {
          // Not in the history any more, or not startable from what it kept: a new session.
          if (toUiError(e).code !== 'invalid-input') throw e;
        }
      }
      opened ??= await this.backend.openSession(folder, agent);
      const info = opened;
      if (carry && replacing && !this.stores.has(replacing)) {
        // Closed while its agent started: nothing to show it in.
        void this.backend.closeSession(info.id).catch(() => undefined);
        return null;
      }
      const store = new SessionStore();
      const old = replacing ? this.stores.get(replacing) : undefined;
      // Continued, the engine says how (`session-continued`, a notice when it could not).
      if (carry && old)
        store.showStored(
          continued ? [...old.storedEvents] : [...old.storedEvents, newSessionNotice()],
          true,
        );
      this.stores.set(info.id, store);
      const sessions = [...this.view.sessions];
      const at = replacing ? sessions.findIndex((s) => s.id === replacing) : -1;
      if (at >= 0) sessions.splice(at, 1, info);
      else sessions.push(info);
      if (replacing) {
        const draft = this.drafts.get(replacing);
        if (draft) this.drafts.set(info.id, draft);
        if (carry) this.moveDraft(replacing, info.id);
        this.forget(replacing);
      }
      // A session started in the background (at once, by the setting) is not shown for it.
      const shownElsewhere = replacing !== undefined && this.view.active !== replacing;
      this.set({ sessions, active: shownElsewhere ? this.view.active : info.id });
      await this.backend.attach(info.id, (frame) => this.onFrame(info.id, frame));
      return info.id;
    } catch (e) {
      if (opened && this.stores.has(opened.id)) {
        // Opened but not attached: it could never be shown, so do not leave it running.
        void this.backend.closeSession(opened.id).catch(() => undefined);
        this.remove(opened.id);
      }
      this.set({ error: toUiError(e) });
      return null;
    } finally {
      if (opening) this.set({ opening: false });
    }
  }

  /** Shows a session opened elsewhere (History's Continue): its thread starts from the stored
   * transcript `base`, then what the live session sends. */
  async adopt(info: SessionInfo, base: StreamEvent[]): Promise<void> {
    const store = new SessionStore();
    store.showStored(base, true);
    this.stores.set(info.id, store);
    this.set({ sessions: [...this.view.sessions, info], active: info.id, error: null });
    try {
      await this.backend.attach(info.id, (frame) => this.onFrame(info.id, frame));
    } catch (e) {
      void this.backend.closeSession(info.id).catch(() => undefined);
      this.remove(info.id);
      this.set({ error: toUiError(e) });
    }
  }

  /**
   * The sessions the last run had open, back in the sidebar in its order, the one shown then
   * shown again, each with its stored transcript and draft. No agent starts here: each starts
   * when the user returns to its session (shows it, or types in it), or all of them now when
   * the settings say `restored_sessions_start: "at_once"`.
   */
  private async restore(): Promise<void> {
    let restored: RestoredSidebar;
    try {
      restored = await this.backend.restoredSessions();
    } catch (e) {
      // The sidebar is then not saved this run: what the last run left stays for the next.
      this.set({ error: toUiError(e) });
      return;
    }
    const sessions: SessionInfo[] = [];
    restored.sessions.forEach((r, i) => {
      let id = r.sessionId ?? `restored-${i}`;
      if (this.stores.has(id)) id = `${id}-${i}`;
      const store = new SessionStore();
      store.showStored(r.events);
      if (r.historyProblem) store.addError(sentence(r.historyProblem));
      this.stores.set(id, store);
      if (r.sessionId) this.historyIds.set(id, r.sessionId);
      if (r.draft !== '') this.drafts.set(id, { text: r.draft, parts: [] });
      if (r.folderProblem) this.folderProblems.set(id, r.folderProblem);
      sessions.push({ id, folder: r.folder, agent: r.agent });
    });
    const shown = sessions[restored.shown ?? 0]?.id ?? null;
    this.sidebarRestored = true;
    this.set({ sessions: [...this.view.sessions, ...sessions], active: this.view.active ?? shown });
    if (restored.startAtOnce) for (const s of sessions) void this.wake(s.id);
  }

  /** Whether a session is one restored from the last run whose agent has not started. */
  isRestored(id: string): boolean {
    return this.stores.get(id)?.state.status === 'stored';
  }

  /** Why a restored session cannot continue in its folder (naming it), if it cannot. */
  folderProblem(id: string): string | null {
    return this.folderProblems.get(id) ?? null;
  }

  /**
   * Starts a restored session's agent, in its place in the sidebar, its transcript and draft
   * kept. Resolves with the session's new id (null: it is not a restored session, its folder
   * is gone, or the agent could not be started: the banner says why).
   */
  wake(id: string): Promise<string | null> {
    const waking = this.waking.get(id);
    if (waking) return waking;
    const session = this.view.sessions.find((s) => s.id === id);
    if (!session || !this.isRestored(id) || this.folderProblems.has(id))
      return Promise.resolve(null);
    // Its stored conversation continues when it has a history id (`continue_session`); else,
    // or when the history cannot continue it, a new session in its folder.
    const started = this.openInto(session.folder, session.agent, id, true).finally(() =>
      this.waking.delete(id),
    );
    this.waking.set(id, started);
    return started;
  }

  /** A restored session's draft goes to its new session: saved under the new history id once
   * known, and forgotten under the old one (which no longer has a composer). */
  private moveDraft(from: string, to: string): void {
    const old = this.historyIds.get(from);
    if (this.drafts.has(from)) this.unsavedDrafts.add(to);
    if (old && this.drafts.has(from)) void this.backend.saveDraft(old, '').catch(() => undefined);
  }

  /** Saves the sidebar for the next start when it changed: its sessions in order (by history
   * id) and the one shown. */
  private saveSidebar(): void {
    if (!this.sidebarRestored) return;
    const sessions: OpenSessionEntry[] = this.view.sessions.map((s) => ({
      sessionId: this.historyIds.get(s.id) ?? null,
      folder: s.folder,
      agent: s.agent,
    }));
    const at = this.view.sessions.findIndex((s) => s.id === this.view.active);
    const shown = at >= 0 ? at : null;
    const key = JSON.stringify([sessions, shown]);
    if (key === this.savedSidebar) return;
    this.savedSidebar = key;
    this.backend.setOpenSessions(sessions, shown).catch((e: unknown) => {
      this.savedSidebar = '';
      this.set({ error: toUiError(e) });
    });
  }

  /** Saves a session's draft to the history after a pause in typing. */
  private saveDraftLater(id: string): void {
    clearTimeout(this.draftTimers.get(id));
    this.draftTimers.set(
      id,
      setTimeout(() => {
        this.draftTimers.delete(id);
        this.saveDraftNow(id);
      }, DRAFT_SAVE_MS),
    );
  }

  private saveDraftNow(id: string): void {
    clearTimeout(this.draftTimers.get(id));
    this.draftTimers.delete(id);
    const historyId = this.historyIds.get(id);
    if (!historyId) {
      this.unsavedDrafts.add(id);
      return;
    }
    this.unsavedDrafts.delete(id);
    // Attached files and images are not kept: the history keeps a draft's text.
    const text = this.drafts.get(id)?.text ?? '';
    this.backend
      .saveDraft(historyId, text)
      .catch((e: unknown) => this.set({ error: toUiError(e) }));
  }

  /** A new session in the same folder, in the ended one's place. */
  async restart(id: string): Promise<void> {
    const old = this.view.sessions.find((s) => s.id === id);
    if (!old) return;
    // The same agent as the ended session, whatever new sessions default to now.
    await this.openFolder(old.folder, id, old.agent);
    if (!this.stores.has(id)) void this.backend.closeSession(id).catch(() => undefined);
  }

  /** Reconnect: a new agent process continuing the ended session in place; its progress
   * arrives as the session's events (the same store, the thread kept). */
  async reconnect(id: string): Promise<void> {
    if (!this.stores.has(id)) return;
    try {
      await this.backend.reconnectSession(id);
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }

  /** Retry: the shown session's last prompt sent again (after a rate or usage limit). A
   * window opened since has not sent it: the last prompt in the thread is sent instead. */
  async retry(): Promise<boolean> {
    const session = this.activeSession;
    const store = session ? this.stores.get(session.id) : undefined;
    if (!session || !store) return false;
    let parts = this.lastSent.get(session.id);
    if (!parts) {
      const entries = store.state.entries;
      let text = '';
      for (let i = entries.length - 1; i >= 0 && text === ''; i--) {
        const e = entries[i];
        if (e?.type === 'user') text = e.text;
      }
      if (text.trim() === '') return false;
      parts = [{ type: 'text', text }];
    }
    return this.send(parts);
  }

  /** Ends a session (its agent too) and removes it from the window. */
  async close(id: string): Promise<void> {
    this.remove(id);
    try {
      await this.backend.closeSession(id);
    } catch (e) {
      const err = toUiError(e);
      if (err.code !== 'session-unknown' && err.code !== 'session-ended') this.set({ error: err });
    }
  }

  private remove(id: string): void {
    if (this.view.confirmClose === id) this.set({ confirmClose: null });
    const sessions = this.view.sessions.filter((s) => s.id !== id);
    let active = this.view.active;
    if (active === id) {
      const at = this.view.sessions.findIndex((s) => s.id === id);
      active = (sessions[Math.min(at, sessions.length - 1)] ?? null)?.id ?? null;
    }
    this.forget(id);
    this.set({ sessions, active });
  }

  private forget(id: string): void {
    const held = this.held.get(id);
    this.held.delete(id);
    this.lastSent.delete(id);
    for (const key of this.answered)
      if (key.startsWith(answeredKey(id, ''))) this.answered.delete(key);
    const store = this.stores.get(id);
    if (store) this.dirty.delete(store);
    this.stores.delete(id);
    this.drafts.delete(id);
    this.notes.delete(id);
    this.files.delete(id);
    clearTimeout(this.draftTimers.get(id));
    this.draftTimers.delete(id);
    this.unsavedDrafts.delete(id);
    this.historyIds.delete(id);
    this.folderProblems.delete(id);
    // Its composer is gone with it: the send it waits for ends, with nothing to give back to.
    held?.giveBack(null);
  }

  private onFrame(session: string, frame: StreamFrame): void {
    const store = this.stores.get(session);
    if (!store) return;
    store.applyQuietly([frame]);
    if (frame.events.some((e) => e.kind === 'file-changed' && e.created))
      this.files.delete(session);
    this.learnHistoryId(session, frame);
    this.dirty.add(store);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      const stores = [...this.dirty];
      this.dirty.clear();
      for (const s of stores) s.notify();
      this.showTitle();
    });
  }

  /** A live session's history id is its engine's id, which its first status carries (the
   * app's own events carry the registry's id instead). */
  private learnHistoryId(session: string, frame: StreamFrame): void {
    if (this.historyIds.has(session)) return;
    let id: string | null = null;
    for (const e of frame.events)
      if (e.kind === 'session-status' && e.sessionId !== session) {
        id = e.sessionId;
        break;
      }
    if (id === null) return;
    this.historyIds.set(session, id);
    if (this.unsavedDrafts.has(session)) this.saveDraftNow(session);
    this.saveSidebar();
  }

  draft(id: string): Draft {
    return this.drafts.get(id) ?? { text: '', parts: [] };
  }

  saveDraft(id: string, draft: Draft): void {
    if (!this.stores.has(id)) return;
    const before = this.drafts.get(id)?.text ?? '';
    if (draft.text === '' && draft.parts.length === 0) this.drafts.delete(id);
    else this.drafts.set(id, draft);
    if (draft.text !== before) this.saveDraftLater(id);
    // Listeners re-read drafts (a drop over the composer changes the shown one).
    this.set({});
    // Typing in a restored session is returning to it: its agent starts.
    if (draft.text !== '' && draft.text !== before) void this.wake(id);
  }

  /** The project's files for the `@` picker; listed once and reused for a while. */
  listFiles(id: string): Promise<ProjectFiles> {
    // A restored session is being started by the typing that asked: list in the one it becomes.
    if (this.isRestored(id))
      return this.wake(id).then((live) =>
        live ? this.listFiles(live) : Promise.reject(new Error('the session is not running')),
      );
    const cached = this.files.get(id);
    if (cached && Date.now() - cached.at < FILES_TTL_MS) return cached.list;
    const list = this.backend.listFiles(id);
    const entry = { at: Date.now(), list };
    this.files.set(id, entry);
    // A failure forgets this listing only (a newer one may have replaced it meanwhile).
    list.catch(() => {
      if (this.files.get(id) === entry) this.files.delete(id);
    });
    return list;
  }

  /**
   * Sends a prompt to the shown session; while its agent is still starting, the prompt waits
   * and goes out once the agent is ready. Resolves false when it was not sent (nothing to send,
   * no session, the command failed before the turn started, the agent did not start, or the
   * user took it back): the prompt is then given back to the session's draft, before whatever
   * was typed since.
   */
  async send(parts: PromptPart[]): Promise<boolean> {
    const session = this.activeSession;
    let store = session ? this.stores.get(session.id) : undefined;
    const meaningful = parts.some((p) => p.type !== 'text' || p.text.trim() !== '');
    if (!session || !store) return false;
    let id = session.id;
    if (!meaningful || this.held.has(id)) {
      this.giveBack(id, parts);
      return false;
    }
    if (store.state.status === 'stored') {
      // Sent from a restored session before its agent started: start it, then send there.
      const woke = await this.wake(id);
      store = woke ? this.stores.get(woke) : undefined;
      if (!woke || !store) {
        this.giveBack(id, parts);
        return false;
      }
      id = woke;
    }
    this.drafts.delete(id);
    this.lastSent.set(id, parts);
    // Sent: the kept draft goes at once, not after the pause.
    this.saveDraftNow(id);
    if (this.notes.delete(id)) this.set({});
    const status = store.state.status;
    if (status === 'opening' || status === 'starting') {
      const ready = await this.waitForStart(id, store, parts);
      if (!ready) return false;
    }
    // The command resolves when the turn ends; its events show the progress. What matters
    // here is whether it was refused before the turn started.
    const refused = new Promise<boolean>((resolve) => {
      const unsubscribe = store.subscribe((v) => {
        if (v.turnRunning) {
          resolve(false);
          queueMicrotask(() => unsubscribe());
        }
      });
      this.backend.prompt(id, parts).then(
        () => {
          resolve(false);
          unsubscribe();
        },
        (e: unknown) => {
          this.set({ error: toUiError(e) });
          resolve(true);
          unsubscribe();
        },
      );
    });
    if (!(await refused)) return true;
    this.giveBack(id, parts);
    return false;
  }

  /** Keeps a held prompt for after the sign-in the session's start needs (the sign-in's
   * `sign_in_keep_prompt`); null: the prompt goes back to the draft, as for any failed start. */
  keepForSignIn: ((id: string, parts: PromptPart[]) => Promise<void>) | null = null;

  /** Holds a prompt until the session's agent is ready (true) or it was given back, or kept
   * by the shell for after a sign-in (false). */
  private waitForStart(id: string, store: SessionStore, parts: PromptPart[]): Promise<boolean> {
    return new Promise((resolve) => {
      let unsubscribe: (() => void) | null = null;
      let done = false;
      const finish = (ready: boolean, note: string | null, back = !ready) => {
        if (done) return;
        done = true;
        queueMicrotask(() => unsubscribe?.());
        this.held.delete(id);
        if (back) this.giveBack(id, parts, note);
        else {
          if (note) this.notes.set(id, note);
          this.set({});
        }
        resolve(ready);
      };
      this.held.set(id, { parts, giveBack: (note) => finish(false, note) });
      this.set({});
      unsubscribe = store.subscribe((v) => {
        if (v.status === 'ready' || v.status === 'prompting') finish(true, null);
        else if (v.status === 'dead' && v.authRequired && this.keepForSignIn) {
          // The agent wants a sign-in first: the shell keeps the prompt and sends it once the
          // session is signed in (the card above shows how); back in the draft if it cannot.
          const keep = this.keepForSignIn;
          if (done) return;
          keep(id, parts).then(
            () =>
              finish(
                false,
                'Kept: your message is sent once you are signed in (see above).',
                false,
              ),
            (e: unknown) =>
              finish(
                false,
                `Not sent: the agent needs you to sign in, and the message could not be kept for after it (${toUiError(e).message}). Your message is back here.`,
              ),
          );
        } else if (v.status === 'dead') {
          const why = (v.statusDetail ?? '').split('\n')[0]?.trim() || 'it ended';
          finish(false, `Not sent: the agent did not start (${why}). Your message is back here.`);
        }
      });
    });
  }

  /** Puts a prompt that was not sent back into its session's draft, before what is there now. */
  private giveBack(id: string, parts: PromptPart[], note: string | null = null): void {
    if (!this.stores.has(id)) return;
    const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    const chips = parts.filter((p) => p.type !== 'text');
    const now = this.draft(id);
    const same = (a: PromptPart, b: PromptPart) => JSON.stringify(a) === JSON.stringify(b);
    if (note) this.notes.set(id, note);
    this.saveDraft(id, {
      text: now.text === '' ? text : text === '' ? now.text : `${text}\n\n${now.text}`,
      parts: [...chips, ...now.parts.filter((p) => !chips.some((c) => same(c, p)))],
    });
  }

  /** Whether a prompt of this session waits for its agent to start. */
  isHeld(id: string): boolean {
    return this.held.has(id);
  }

  /** Why this session's last prompt was given back, if it was. */
  note(id: string): string | null {
    return this.notes.get(id) ?? null;
  }

  dismissNote(id: string): void {
    if (this.notes.delete(id)) this.set({});
  }

  /** Stops the shown session's turn; a prompt still waiting for the agent is given back. */
  async stopTurn(): Promise<void> {
    const session = this.activeSession;
    if (!session) return;
    const held = this.held.get(session.id);
    if (held) {
      held.giveBack(null);
      return;
    }
    await this.run(() => this.backend.cancel(session.id));
  }

  async setMode(modeId: string): Promise<void> {
    const session = this.activeSession;
    if (!session) return;
    await this.run(() => this.backend.setMode(session.id, modeId));
  }

  async setConfigOption(configId: string, value: string | boolean): Promise<void> {
    const session = this.activeSession;
    if (!session) return;
    await this.run(() => this.backend.setConfigOption(session.id, configId, value));
  }

  /** Opens a file the agent named (a tool call's location) in the user's app for it. */
  async openPath(path: string, line?: number | null): Promise<void> {
    const id = await this.liveActive();
    if (!id) return;
    await this.run(() => this.backend.openPath(id, path, line ?? null));
  }

  async revealPath(path: string): Promise<void> {
    const id = await this.liveActive();
    if (!id) return;
    await this.run(() => this.backend.revealPath(id, path));
  }

  /** The shown session's id for a command about its folder: a restored one is started first
   * (the shell knows only sessions that run), as returning to it would. */
  private async liveActive(): Promise<string | null> {
    const id = this.view.active;
    if (!id || !this.isRestored(id)) return id;
    return this.wake(id);
  }

  /** A link in agent text, clicked: the system browser opens it (never this window). */
  async openUrl(url: string): Promise<void> {
    await this.run(() => this.backend.openUrl(url));
  }

  /** "Open settings file": where an agent that cannot start is fixed. */
  async openSettingsFile(): Promise<void> {
    await this.run(() => this.backend.openSettingsFile());
  }

  private async run(command: () => Promise<void>): Promise<void> {
    try {
      await command();
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }

  /**
   * Answers the agent's question (`elicitation`) of the session that asks it. A question
   * settled meanwhile (Stop, the agent withdrew it) leaves the dialog with its settlement.
   */
  async answerQuestion(
    req: ElicitationEvent,
    answer: ElicitationAnswer,
  ): Promise<QuestionAnswered> {
    // The question itself, not its id: ids are numbered per session (`e1` in two sessions),
    // and an answer to the wrong one would reach another agent.
    const session = this.view.sessions.find((s) =>
      this.stores.get(s.id)?.state.elicitations.includes(req),
    );
    const id = session?.id ?? this.view.active;
    if (!id) return { ok: false, refused: null };
    try {
      await this.backend.elicitationAnswer(id, req.requestId, answer);
      return { ok: true };
    } catch (e) {
      const err = toUiError(e);
      if (err.code === 'invalid-answer') return { ok: false, refused: err.message };
      // Settled elsewhere in the meantime (Stop, the agent withdrew it): its settlement says so.
      if (err.code === 'elicitation-unknown') return { ok: true };
      this.set({ error: err });
      return { ok: false, refused: null };
    }
  }

  /** Asks the agent to stop one of the shown session's background tasks; the answer is the
   * error to show beside the task (its `settled` event comes on the stream). */
  async stopTask(taskId: string): Promise<TaskStopped> {
    const id = this.view.active;
    if (!id) return null;
    try {
      await this.backend.backgroundTaskStop(id, taskId);
      return null;
    } catch (e) {
      return toUiError(e);
    }
  }

  /**
   * Answers a permission request of the session that holds it. Resolves true when the answer
   * went out (or the request was settled elsewhere meanwhile), false when nothing was sent or the
   * command failed: the dialog then lets the user answer again.
   */
  async answer(req: AgentPromptEvent, resolution: PermissionResolution): Promise<boolean> {
    const session = this.view.sessions.find((s) =>
      this.stores.get(s.id)?.state.pending.includes(req),
    );
    const id = session?.id ?? this.view.active;
    if (!id) return false;
    // The seed's `agent-prompt` names the permission request's id `toolCallId`.
    const requestId = req.toolCallId;
    const key = answeredKey(id, requestId);
    if (this.answered.has(key)) return true;
    this.answered.add(key);
    try {
      await this.backend.respondPermission(id, requestId, resolution);
      return true;
    } catch (e) {
      const err = toUiError(e);
      // Settled elsewhere in the meantime (Stop, a rule, the agent): nothing to say.
      if (err.code === 'permission-unknown') return true;
      this.answered.delete(key);
      this.set({ error: err });
      return false;
    }
  }
}

/** Said above a restored session's new turns when it could not be continued (the history no
 * longer has it, or cannot start its agent again): its agent started afresh, without the
 * stored conversation. */
function newSessionNotice(): StreamEvent {
  return {
    kind: 'notice',
    sessionId: '',
    severity: 'info',
    source: 'client',
    title: 'The agent was started again in a new session',
    description:
      'The conversation above is from the last run, kept by ACP Desk; the agent does not have it.',
  };
}

/** How an answer to the agent's question went: sent (or the question was settled meanwhile),
 * refused by the engine's checks (`invalid-answer`: its message, shown in the dialog, which
 * stays), or failed otherwise (the banner says why; the dialog lets the user answer again). */
export type QuestionAnswered = { ok: true } | { ok: false; refused: string | null };

/** How stopping a background task went: null when the agent was asked, else why not. */
export type TaskStopped = UiError | null;

function answeredKey(session: string, requestId: string): string {
  return `${session}\n${requestId}`;
}
