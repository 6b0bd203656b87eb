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
  private queued: StreamFrame[] = [];
  private scheduled = false;
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
    if (this.view.opening) return;
    this.set({ opening: true, error: null });
    try {
      const info = await this.backend.openSession(folder, this.view.agent);
      const previous = this.view.session;
      this.attachedTo = info.id;
      this.queued = [];
      this.store.applyAll([{ snapshot: true, events: [] }]);
      this.set({ session: info });
      await this.backend.attach(info.id, (frame) => this.onFrame(info.id, frame));
      if (previous) {
        // One session per window for now: the new folder replaces the old one.
        void this.backend.closeSession(previous.id).catch(() => undefined);
      }
    } catch (e) {
      this.set({ error: toUiError(e) });
    } finally {
      this.set({ opening: false });
    }
  }

  private onFrame(session: string, frame: StreamFrame): void {
    if (session !== this.attachedTo) return;
    this.queued.push(frame);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      const frames = this.queued;
      this.queued = [];
      this.store.applyAll(frames);
    });
  }

  /** Sends a prompt; false when there was nothing to send or it could not be sent. */
  async send(text: string): Promise<boolean> {
    const session = this.view.session;
    if (!session || text.trim() === '') return false;
    const sent = this.backend.prompt(session.id, text);
    // The turn's events show its progress; the promise settles when it ends.
    sent.catch((e: unknown) => {
      const err = toUiError(e);
      this.set({ error: err });
    });
    return true;
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
    if (!session) return;
    try {
      await this.backend.respondPermission(session.id, req.toolCallId, resolution);
    } catch (e) {
      this.set({ error: toUiError(e) });
    }
  }
}
