// The window's logic, without Svelte: opening folders (menu, command line and drops all come
// through `openFolder`), the open sessions and which one is shown, prompting (a prompt sent
// while the agent starts waits for it), stopping, answering permissions, drafts, the window's
// title, and the menu items the window acts on (`onMenu`).
import type {
  Backend,
  MenuAction,
  ProjectFiles,
  PromptPart,
  Theme,
  UiError,
  Unsubscribe,
} from './backend-types';
import { toUiError } from './backend-types';
import type {
  AgentListing,
  AgentPromptEvent,
  PermissionResolution,
  SessionInfo,
  StreamEvent,
  StreamFrame,
} from './generated/ipc';
import { baseName, isInside, relativePath } from './paths';
import { SessionStore } from './session-store';
import { closeNeedsConfirm } from './status';

export interface AppView {
  ready: boolean;
  agents: AgentListing | null;
  /** The agent new sessions start with. */
  agent: string;
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

/** How long the `@` picker's file list is reused before it is listed again. */
const FILES_TTL_MS = 30_000;

/** A prompt sent before its session's agent was ready: it goes out once the agent is. */
interface Held {
  parts: PromptPart[];
  /** Gives it back to the draft (the start failed, or the user took it back). */
  giveBack(note: string | null): void;
}

/** The window's title: the shown session's folder and how many permission requests wait in
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
    sessions: [],
    active: null,
    error: null,
    dragging: false,
    opening: false,
    sidebarOpen: true,
    theme: 'system',
    confirmClose: null,
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

  constructor(
    private backend: Backend,
    private schedule: Scheduler = animationFrame,
    /** Whether a point (CSS pixels) is over the composer: files dropped there are attachments. */
    private overComposer: (x: number, y: number) => boolean = () => false,
    private edit: Edit = editInDocument,
  ) {}

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
  }

  /** Sets the window's title when what it says changed (the shown session, requests waiting). */
  private showTitle(): void {
    let waiting = 0;
    for (const s of this.stores.values()) waiting += s.state.pending.length;
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
      await this.backend.onFolderChosen((e) => void this.openFolder(e.path)),
      await this.backend.onPathsDropped((e) => void this.dropped(e.paths, e.x, e.y)),
      await this.backend.onDragHover((e) => this.set({ dragging: e.active })),
      await this.backend.onMenuAction((e) => this.onMenu(e)),
    );
    try {
      const info = await this.backend.appInfo();
      this.set({ ready: true, agents: info.agents, agent: info.initialAgent, theme: info.theme });
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

  chooseAgent(id: string): void {
    this.set({ agent: id });
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
    if (this.stores.has(id)) this.set({ active: id });
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
    let opened: SessionInfo | null = null;
    try {
      opened = await this.backend.openSession(folder, agent ?? this.view.agent);
      const info = opened;
      const store = new SessionStore();
      this.stores.set(info.id, store);
      const sessions = [...this.view.sessions];
      const at = replacing ? sessions.findIndex((s) => s.id === replacing) : -1;
      if (at >= 0) sessions.splice(at, 1, info);
      else sessions.push(info);
      if (replacing) {
        const draft = this.drafts.get(replacing);
        if (draft) this.drafts.set(info.id, draft);
        this.forget(replacing);
      }
      this.set({ sessions, active: info.id });
      await this.backend.attach(info.id, (frame) => this.onFrame(info.id, frame));
    } catch (e) {
      if (opened && this.stores.has(opened.id)) {
        // Opened but not attached: it could never be shown, so do not leave it running.
        void this.backend.closeSession(opened.id).catch(() => undefined);
        this.remove(opened.id);
      }
      this.set({ error: toUiError(e) });
    } finally {
      this.set({ opening: false });
    }
  }

  /** Shows a session opened elsewhere (History's Continue): its thread starts from the stored
   * transcript `base`, then what the live session sends. */
  async adopt(info: SessionInfo, base: StreamEvent[]): Promise<void> {
    const store = new SessionStore();
    store.setBase(base);
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
    // Its composer is gone with it: the send it waits for ends, with nothing to give back to.
    held?.giveBack(null);
  }

  private onFrame(session: string, frame: StreamFrame): void {
    const store = this.stores.get(session);
    if (!store) return;
    store.applyQuietly([frame]);
    if (frame.events.some((e) => e.kind === 'file-changed' && e.created))
      this.files.delete(session);
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

  draft(id: string): Draft {
    return this.drafts.get(id) ?? { text: '', parts: [] };
  }

  saveDraft(id: string, draft: Draft): void {
    if (!this.stores.has(id)) return;
    if (draft.text === '' && draft.parts.length === 0) this.drafts.delete(id);
    else this.drafts.set(id, draft);
    // Listeners re-read drafts (a drop over the composer changes the shown one).
    this.set({});
  }

  /** The project's files for the `@` picker; listed once and reused for a while. */
  listFiles(id: string): Promise<ProjectFiles> {
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
    const store = session ? this.stores.get(session.id) : undefined;
    const meaningful = parts.some((p) => p.type !== 'text' || p.text.trim() !== '');
    if (!session || !store) return false;
    const id = session.id;
    if (!meaningful || this.held.has(id)) {
      this.giveBack(id, parts);
      return false;
    }
    this.drafts.delete(id);
    this.lastSent.set(id, parts);
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

  /** Holds a prompt until the session's agent is ready (true) or it was given back (false). */
  private waitForStart(id: string, store: SessionStore, parts: PromptPart[]): Promise<boolean> {
    return new Promise((resolve) => {
      let unsubscribe: (() => void) | null = null;
      let done = false;
      const finish = (ready: boolean, note: string | null) => {
        if (done) return;
        done = true;
        queueMicrotask(() => unsubscribe?.());
        this.held.delete(id);
        if (!ready) this.giveBack(id, parts, note);
        else this.set({});
        resolve(ready);
      };
      this.held.set(id, { parts, giveBack: (note) => finish(false, note) });
      this.set({});
      unsubscribe = store.subscribe((v) => {
        if (v.status === 'ready' || v.status === 'prompting') finish(true, null);
        else if (v.status === 'dead') {
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
    const session = this.activeSession;
    if (!session) return;
    await this.run(() => this.backend.openPath(session.id, path, line ?? null));
  }

  async revealPath(path: string): Promise<void> {
    const session = this.activeSession;
    if (!session) return;
    await this.run(() => this.backend.revealPath(session.id, path));
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

function answeredKey(session: string, requestId: string): string {
  return `${session}\n${requestId}`;
}
