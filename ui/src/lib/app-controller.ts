// The window's logic, without Svelte: opening folders (menu, command line and drops all come
// through `openFolder`), the current session, prompting, stopping, answering permissions.
import type { Backend, UiError, Unsubscribe } from './backend-types';
import { toUiError } from './backend-types';
import type {
  AgentListing,
  AgentPromptEvent,
  PermissionResolution,
  SessionInfo,
  StreamFrame,
} from './generated/ipc';
import { SessionStore } from './session-store';

export interface AppView {
  ready: boolean;
  agents: AgentListing | null;
  agent: string;
  session: SessionInfo | null;
  /** The last error to show in the banner, until dismissed or replaced. */
  error: UiError | null;
  dragging: boolean;
  opening: boolean;
}

/** Runs `fn` before the next paint; tests pass one that runs at once. */
export type Scheduler = (fn: () => void) => void;

export const animationFrame: Scheduler = (fn) => {
  requestAnimationFrame(() => fn());
};

type Listener = (v: AppView) => void;

export class AppController {
  readonly store = new SessionStore();
  private view: AppView = {
    ready: false,
    agents: null,
    agent: 'demo',
    session: null,
    error: null,
    dragging: false,
    opening: false,
  };
  private listeners = new Set<Listener>();
  private unsubscribers: Unsubscribe[] = [];
  private scheduled = false;
  /** Permission requests answered from this window (a second click is not sent again). */
  private answered = new Set<string>();
  /** Frames for sessions other than the current one are dropped (a replaced session). */
  private attachedTo: string | null = null;

  constructor(
    private backend: Backend,
    private schedule: Scheduler = animationFrame,
    /** Whether a point (CSS pixels) is over the composer: files dropped there are attachments. */
    private overComposer: (x: number, y: number) => boolean = () => false,
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
  }

  async start(): Promise<void> {
    this.unsubscribers.push(
      await this.backend.onFolderChosen((e) => void this.openFolder(e.path)),
      await this.backend.onPathsDropped((e) => void this.dropped(e.paths, e.x, e.y)),
      await this.backend.onDragHover((e) => this.set({ dragging: e.active })),
    );
    try {
      const info = await this.backend.appInfo();
      this.set({ ready: true, agents: info.agents, agent: info.initialAgent });
      if (info.initialFolder) await this.openFolder(info.initialFolder);
    } catch (e) {
      this.set({ ready: true, error: toUiError(e) });
    }
  }

  stop(): void {
    for (const u of this.unsubscribers) u();
    this.unsubscribers = [];
  }

  chooseAgent(id: string): void {
    this.set({ agent: id });
  }

  dismissError(): void {
    this.set({ error: null });
  }

  async pickFolder(): Promise<void> {
    try {
      await this.backend.pickFolder();
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }

  /** Drops: a folder anywhere opens it; over the composer, files will attach (not yet). */
  async dropped(paths: string[], x: number, y: number): Promise<void> {
    this.set({ dragging: false });
    const [first] = paths;
    if (first === undefined) return;
    if (this.view.session && this.overComposer(x, y)) {
      this.set({
        error: {
          code: 'invalid-input',
          message:
            'Attaching dropped files to a prompt is not supported yet. Mention the file by name instead.',
        },
      });
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
  async openFolder(folder: string): Promise<void> {
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
      opened = await this.backend.openSession(folder, this.view.agent);
      const info = opened;
      const previous = this.view.session;
      this.attachedTo = info.id;
      this.store.applyAll([{ snapshot: true, events: [] }]);
      this.answered.clear();
      this.set({ session: info });
      await this.backend.attach(info.id, (frame) => this.onFrame(info.id, frame));
      if (previous) {
        // One session per window for now: the new folder replaces the old one.
        void this.backend.closeSession(previous.id).catch(() => undefined);
      }
    } catch (e) {
      if (opened && this.view.session?.id === opened.id) {
        // Opened but not attached: it could never be shown, so do not leave it running.
        void this.backend.closeSession(opened.id).catch(() => undefined);
        this.attachedTo = null;
        this.set({ session: null });
      }
      this.set({ error: toUiError(e) });
    } finally {
      this.set({ opening: false });
    }
  }

  private onFrame(session: string, frame: StreamFrame): void {
    if (session !== this.attachedTo) return;
    this.store.applyQuietly([frame]);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      this.store.notify();
    });
  }

  /**
   * Sends a prompt. Resolves false when it was refused (nothing to send, no session, or the
   * command failed before the turn started), so the composer can give the draft back.
   */
  async send(text: string): Promise<boolean> {
    const session = this.view.session;
    if (!session || text.trim() === '') return false;
    // The command resolves when the turn ends; its events show the progress. What matters
    // here is whether it was refused before the turn started.
    const refused = new Promise<boolean>((resolve) => {
      const unsubscribe = this.store.subscribe((v) => {
        if (v.turnRunning) {
          resolve(false);
          queueMicrotask(() => unsubscribe());
        }
      });
      this.backend.prompt(session.id, text).then(
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
    return !(await refused);
  }

  async stopTurn(): Promise<void> {
    const session = this.view.session;
    if (!session) return;
    try {
      await this.backend.cancel(session.id);
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }

  async answer(req: AgentPromptEvent, resolution: PermissionResolution): Promise<void> {
    const session = this.view.session;
    if (!session || this.answered.has(req.toolCallId)) return;
    this.answered.add(req.toolCallId);
    try {
      await this.backend.respondPermission(session.id, req.toolCallId, resolution);
    } catch (e) {
      const err = toUiError(e);
      // Settled elsewhere in the meantime (Stop, a rule, the agent): nothing to say.
      if (err.code === 'permission-unknown') return;
      this.answered.delete(req.toolCallId);
      this.set({ error: err });
    }
  }
}
