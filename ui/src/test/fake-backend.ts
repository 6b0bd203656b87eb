// A Backend for tests: records calls, lets the test push frames and app events, and answers
// commands with what the test set up.
import type { Backend, ProjectFiles, PromptPart, Unsubscribe } from '../lib/backend-types';
import type {
  AgentEntry,
  AppInfo,
  DragHover,
  FolderChosen,
  IpcError,
  MenuAction,
  PathsDropped,
  OpenSessionEntry,
  PermissionResolution,
  RestoredSidebar,
  SessionInfo,
  StreamFrame,
  TurnEnd,
} from '../lib/generated/ipc';

export const agentEntry = (over: Partial<AgentEntry> & { id: string }): AgentEntry => ({
  name: over.id,
  source: 'builtin',
  alsoDefinedIn: [],
  command: over.id,
  envNames: [],
  status: 'found',
  installable: false,
  problems: [],
  ...over,
});

export const appInfo = (over: Partial<AppInfo> = {}): AppInfo => ({
  version: '0.1.0',
  initialAgent: 'demo',
  agents: {
    agents: [
      agentEntry({ id: 'demo', command: '/x/acp-desk-demo-agent', status: 'found' }),
      agentEntry({
        id: 'gemini',
        name: 'Gemini CLI',
        command: 'gemini --acp',
        status: 'missing',
        hint: 'Install Gemini CLI with `npm install -g @google/gemini-cli`.',
        installCommand: 'npm install -g @google/gemini-cli',
      }),
    ],
    defaultAgent: 'demo',
    defaultReason: 'the demo agent: nothing else is installed',
    settingsFile: '/cfg/settings.json',
    problems: [],
  },
  configDir: '/cfg',
  dataDir: '/data',
  theme: 'system',
  ...over,
});

type Handler<T> = (e: T) => void;

export class FakeBackend implements Backend {
  calls: [string, ...unknown[]][] = [];
  info: AppInfo = appInfo();
  /** Folders that openSession refuses, with the error it gives. */
  refuse = new Map<string, IpcError>();
  private frameHandlers = new Map<string, Handler<StreamFrame>>();
  private folderChosen: Handler<FolderChosen>[] = [];
  private dropped: Handler<PathsDropped>[] = [];
  private hover: Handler<DragHover>[] = [];
  private menuActions: Handler<MenuAction>[] = [];
  private counter = 0;
  promptResult: Promise<TurnEnd> = new Promise(() => undefined);
  /** What respondPermission rejects with, if anything. */
  respondError: IpcError | null = null;

  async appInfo(): Promise<AppInfo> {
    this.calls.push(['appInfo']);
    return this.info;
  }
  async openSession(folder: string, agent: string): Promise<SessionInfo> {
    this.calls.push(['openSession', folder, agent]);
    const refused = this.refuse.get(folder);
    if (refused) throw refused;
    this.counter += 1;
    return { id: `s${this.counter}`, folder, agent };
  }
  async attach(session: string, onFrame: (f: StreamFrame) => void): Promise<void> {
    this.calls.push(['attach', session]);
    this.frameHandlers.set(session, onFrame);
    onFrame({ snapshot: true, events: [] });
  }
  prompt(session: string, parts: PromptPart[]): Promise<TurnEnd> {
    this.calls.push(['prompt', session, parts]);
    return this.promptResult;
  }
  /** What listFiles answers. */
  projectFiles: ProjectFiles = {
    files: ['README.md', 'src/main.rs', 'src/lib.rs'],
    truncated: false,
  };
  async listFiles(session: string): Promise<ProjectFiles> {
    this.calls.push(['listFiles', session]);
    return this.projectFiles;
  }
  async setMode(session: string, modeId: string): Promise<void> {
    this.calls.push(['setMode', session, modeId]);
  }
  async setConfigOption(session: string, configId: string, value: string | boolean): Promise<void> {
    this.calls.push(['setConfigOption', session, configId, value]);
  }
  async openPath(session: string, path: string, line?: number | null): Promise<void> {
    this.calls.push(['openPath', session, path, line ?? null]);
  }
  async revealPath(session: string, path: string): Promise<void> {
    this.calls.push(['revealPath', session, path]);
  }
  async openUrl(url: string): Promise<void> {
    this.calls.push(['openUrl', url]);
  }
  async openSettingsFile(): Promise<void> {
    this.calls.push(['openSettingsFile']);
  }
  async cancel(session: string): Promise<void> {
    this.calls.push(['cancel', session]);
  }
  async respondPermission(
    session: string,
    requestId: string,
    resolution: PermissionResolution,
  ): Promise<void> {
    this.calls.push(['respondPermission', session, requestId, resolution]);
    if (this.respondError) throw this.respondError;
  }
  async closeSession(session: string): Promise<void> {
    this.calls.push(['closeSession', session]);
  }
  /** What `reconnectSession` rejects with, when set. */
  reconnectError: IpcError | null = null;
  async reconnectSession(session: string): Promise<SessionInfo> {
    this.calls.push(['reconnectSession', session]);
    if (this.reconnectError) throw this.reconnectError;
    return { id: session, folder: '/p', agent: 'demo' };
  }
  async pickFolder(): Promise<void> {
    this.calls.push(['pickFolder']);
  }
  /** The window's title, as last set. */
  title: string | null = null;
  async setTitle(title: string): Promise<void> {
    this.calls.push(['setTitle', title]);
    this.title = title;
  }
  async onFolderChosen(cb: Handler<FolderChosen>): Promise<Unsubscribe> {
    this.folderChosen.push(cb);
    return () => undefined;
  }
  async onPathsDropped(cb: Handler<PathsDropped>): Promise<Unsubscribe> {
    this.dropped.push(cb);
    return () => undefined;
  }
  async onDragHover(cb: Handler<DragHover>): Promise<Unsubscribe> {
    this.hover.push(cb);
    return () => undefined;
  }

  async onMenuAction(cb: Handler<MenuAction>): Promise<Unsubscribe> {
    this.menuActions.push(cb);
    return () => {
      this.menuActions = this.menuActions.filter((h) => h !== cb);
    };
  }
  /** A menu item the window acts on was chosen. */
  menu(action: MenuAction): void {
    for (const cb of this.menuActions) cb(action);
  }

  /** What restoredSessions answers: the last run's sidebar (none by default). */
  restored: RestoredSidebar = { sessions: [], shown: null, startAtOnce: false };
  async restoredSessions(): Promise<RestoredSidebar> {
    this.calls.push(['restoredSessions']);
    return this.restored;
  }
  async setOpenSessions(sessions: OpenSessionEntry[], shown: number | null): Promise<void> {
    this.calls.push(['setOpenSessions', sessions, shown]);
  }
  /** What continueSession rejects with (null: it continues, as a registry id of its own). */
  continueError: IpcError | null = null;
  async continueSession(sessionId: string): Promise<SessionInfo> {
    this.calls.push(['continueSession', sessionId]);
    if (this.continueError) throw this.continueError;
    const r = this.restored.sessions.find((s) => s.sessionId === sessionId);
    this.counter += 1;
    return { id: `s${this.counter}`, folder: r?.folder ?? '/p', agent: r?.agent ?? 'demo' };
  }
  async saveDraft(sessionId: string, text: string): Promise<void> {
    this.calls.push(['saveDraft', sessionId, text]);
  }

  /** The Rust side sends a frame to a session's view. */
  frame(session: string, frame: StreamFrame): void {
    const h = this.frameHandlers.get(session);
    if (!h) throw new Error(`no view attached to ${session}`);
    h(frame);
  }
  chooseFolder(path: string): void {
    for (const cb of this.folderChosen) cb({ path });
  }
  drop(paths: string[], x = 10, y = 10): void {
    for (const cb of this.dropped) cb({ paths, x, y });
  }
  called(name: string): unknown[][] {
    return this.calls.filter((c) => c[0] === name).map((c) => c.slice(1));
  }
}
