// A Backend for tests: records calls, lets the test push frames and app events, and answers
// commands with what the test set up.
import type { Backend, ProjectFiles, PromptPart, UiError, Unsubscribe } from '../lib/backend-types';
import type { AgentListing, CheckReport, InstallProgress, RegistryImported } from '../lib/agents';
import type { LoginBackend } from '../lib/login';
import type { SignInBackend, SignInTarget } from '../lib/sign-in';
import type {
  AgentIdentity,
  ElicitationAnswer,
  AppInfo,
  AuthAction,
  DesktopNotice,
  DragHover,
  FolderChosen,
  IpcError,
  LoginFrame,
  LoginStarted,
  LoginTarget,
  MenuAction,
  PathsDropped,
  OpenSessionEntry,
  PermissionResolution,
  RestoredSidebar,
  SessionInfo,
  ShowRequest,
  SignInAnswer,
  StreamEvent,
  StreamFrame,
  TurnEnd,
} from '../lib/generated/ipc';

export const appInfo = (over: Partial<AppInfo> = {}): AppInfo => ({
  version: '0.1.0',
  initialAgent: null,
  configDir: '/cfg',
  dataDir: '/data',
  theme: 'system',
  ...over,
});

/** A listing like the shell's: the demo agent, a built-in one missing, registry agents. */
export const agentListing = (over: Partial<AgentListing> = {}): AgentListing => ({
  agents: [
    {
      id: 'demo',
      name: 'ACP Desk demo agent',
      description: 'Scripted, no model: say “hello” to see what it can show.',
      source: 'builtin',
      alsoDefinedIn: [],
      command: '/x/acp-desk-demo-agent',
      envNames: [],
      status: 'found',
      installable: false,
      problems: [],
    },
    {
      id: 'gemini',
      name: 'Gemini CLI',
      source: 'builtin',
      alsoDefinedIn: [],
      command: 'gemini --acp',
      envNames: [],
      status: 'missing',
      hint: 'Install Gemini CLI with `npm install -g @google/gemini-cli`.',
      installCommand: 'npm install -g @google/gemini-cli',
      installable: false,
      problems: [],
    },
    {
      id: 'fast-agent',
      name: 'fast-agent',
      description: 'Define, prompt and test MCP enabled agents.',
      version: '0.3.1',
      source: 'registry',
      alsoDefinedIn: [],
      origin: 'ACP registry snapshot 2026-11-20 (abc1234)',
      command: 'uvx fast-agent-acp',
      envNames: [],
      status: 'downloads',
      installable: false,
      problems: [],
    },
    {
      id: 'kimi',
      name: 'Kimi CLI',
      description: "Moonshot AI's coding agent.",
      version: '1.2.0',
      source: 'registry',
      alsoDefinedIn: [],
      origin: 'ACP registry snapshot 2026-11-20 (abc1234)',
      command: 'kimi acp',
      envNames: [],
      status: 'not-installed',
      installable: true,
      problems: [],
    },
  ],
  defaultAgent: 'demo',
  defaultReason: 'the demo agent: nothing else is installed',
  settingsFile: '/cfg/settings.json',
  problems: [],
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
  private showRequests: Handler<ShowRequest>[] = [];
  private desktopNotices: Handler<DesktopNotice>[] = [];
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

  /** What agentsList answers (or rejects with). */
  listing: AgentListing = agentListing();
  listError: IpcError | null = null;
  /** While set, agentsList waits for it (detection still running). */
  listGate: Promise<void> | null = null;
  async agentsList(): Promise<AgentListing> {
    this.calls.push(['agentsList']);
    if (this.listGate) await this.listGate;
    if (this.listError) throw this.listError;
    return this.listing;
  }
  /** What agentCheck answers per agent id (an IpcError rejects); default: a passed check. */
  checks = new Map<string, CheckReport | IpcError>();
  async agentCheck(id: string): Promise<CheckReport> {
    this.calls.push(['agentCheck', id]);
    const r = this.checks.get(id);
    if (r && 'code' in r) throw r;
    return (
      r ?? {
        agent: id,
        ok: true,
        steps: [
          { name: 'start', millis: 4, ok: true },
          { name: 'initialize', millis: 31, ok: true },
        ],
        agentName: 'acp-desk-demo',
        agentTitle: 'ACP Desk Demo',
        agentVersion: '0.1.0',
        protocolVersion: 1,
        capabilities: { loadSession: true, promptCapabilities: { image: true, audio: false } },
        authMethods: [],
        differences: [],
        warnings: [],
      }
    );
  }
  /** The progress agentInstall reports, then its failure if set. */
  installSteps: InstallProgress[] = [
    { agent: 'kimi', phase: 'downloading', downloaded: 500_000, total: 1_000_000 },
    { agent: 'kimi', phase: 'verifying', downloaded: 1_000_000 },
  ];
  installError: IpcError | null = null;
  async agentInstall(id: string, onProgress: (p: InstallProgress) => void): Promise<AgentListing> {
    this.calls.push(['agentInstall', id]);
    for (const p of this.installSteps) onProgress(p);
    if (this.installError) throw this.installError;
    this.listing = {
      ...this.listing,
      agents: this.listing.agents.map((a) =>
        a.id === id ? { ...a, status: 'found', installable: false } : a,
      ),
    };
    return this.listing;
  }
  async agentsUseForNewSessions(id: string): Promise<AgentListing> {
    this.calls.push(['agentsUseForNewSessions', id]);
    this.listing = {
      ...this.listing,
      defaultAgent: id,
      defaultReason: 'last chosen in the window',
    };
    return this.listing;
  }
  async agentsOpenSettings(): Promise<void> {
    this.calls.push(['agentsOpenSettings']);
  }
  async agentsOpenManifest(id: string): Promise<void> {
    this.calls.push(['agentsOpenManifest', id]);
  }
  /** What the import gives: the registry imported, or null (the dialog was cancelled). */
  imported: RegistryImported | null = null;
  async agentsImportRegistry(): Promise<RegistryImported | null> {
    this.calls.push(['agentsImportRegistry']);
    if (this.imported) this.listing = this.imported.listing;
    return this.imported;
  }
  async agentsCopyInstallCommand(id: string): Promise<void> {
    this.calls.push(['agentsCopyInstallCommand', id]);
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
  /** What elicitationAnswer / backgroundTaskStop reject with, if anything. */
  elicitationError: UiError | null = null;
  stopError: UiError | null = null;
  async elicitationAnswer(
    sessionId: string,
    requestId: string,
    answer: ElicitationAnswer,
  ): Promise<void> {
    this.calls.push(['elicitationAnswer', sessionId, requestId, answer]);
    if (this.elicitationError) throw this.elicitationError;
  }
  async backgroundTaskStop(sessionId: string, taskId: string): Promise<void> {
    this.calls.push(['backgroundTaskStop', sessionId, taskId]);
    if (this.stopError) throw this.stopError;
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

  async onShowRequest(cb: Handler<ShowRequest>): Promise<Unsubscribe> {
    this.showRequests.push(cb);
    return () => {
      this.showRequests = this.showRequests.filter((h) => h !== cb);
    };
  }
  /** A notification or a tray item asked to show a session. */
  showRequest(e: ShowRequest): void {
    for (const cb of this.showRequests) cb(e);
  }
  async onDesktopNotice(cb: Handler<DesktopNotice>): Promise<Unsubscribe> {
    this.desktopNotices.push(cb);
    return () => {
      this.desktopNotices = this.desktopNotices.filter((h) => h !== cb);
    };
  }
  /** The shell found something about the desktop to say (no notification service). */
  desktopNotice(e: DesktopNotice): void {
    for (const cb of this.desktopNotices) cb(e);
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
  /** `folder-chosen`: the folder picker, File → Open Recent or a second launch (with its agent). */
  chooseFolder(path: string, agent?: string): void {
    for (const cb of this.folderChosen) cb(agent === undefined ? { path } : { path, agent });
  }
  drop(paths: string[], x = 10, y = 10): void {
    for (const cb of this.dropped) cb({ paths, x, y });
  }
  called(name: string): unknown[][] {
    return this.calls.filter((c) => c[0] === name).map((c) => c.slice(1));
  }
}

/** The demo agent's sign-in methods, as the engine classifies them (one of each kind). */
export const demoAuthMethods = (): AuthAction[] => [
  {
    methodId: 'demo-terminal',
    name: 'Demo login',
    description: 'Reads a code from its terminal',
    how: { via: 'terminal', args: ['login'] },
  },
  {
    methodId: 'demo-login-meta',
    name: 'Demo login (its own program)',
    how: {
      via: 'terminal-command',
      command: '/opt/demo/demo-login',
      args: ['--code'],
      env: { DEMO_LOGIN_MODE: 'tty' },
      label: 'Log in with the demo program',
    },
  },
  { methodId: 'demo-api-key', name: 'Demo API key', how: { via: 'api-key', provider: 'google' } },
  { methodId: 'demo-agent', name: 'Demo account', how: { via: 'agent' } },
];

/** The agent's identity once `initialize` answered, with its sign-in methods. */
export const identity = (over: Partial<AgentIdentity> = {}): AgentIdentity => ({
  launchName: 'demo',
  name: 'acp-desk-demo',
  title: 'ACP Desk Demo',
  authMethods: demoAuthMethods(),
  ...over,
});

/** The events of a start `session/new` refused for want of a sign-in (-32000), as the engine
 * sends them: initialize answered (the methods), the error, the session dead. */
export function authRequiredStart(sessionId: string): StreamEvent[] {
  const detail =
    'the agent needs you to sign in: it answered "Authentication required". Sign in with "Demo login" (a login in a terminal), "Demo login (its own program)" (a program it names, in a terminal), "Demo API key" (an API key), "Demo account" (the agent signs you in), then try again.';
  return [
    { kind: 'session-status', sessionId, status: 'starting', agent: identity() },
    { kind: 'error', sessionId, error: { message: detail, kind: 'auth-required' } },
    { kind: 'session-status', sessionId, status: 'dead', detail, agent: identity() },
  ];
}

/** A turn the agent refused for want of a sign-in (a prompt answered -32000). */
export function authRequiredTurn(sessionId: string, text: string): StreamEvent[] {
  return [
    { kind: 'turn-start', sessionId, prompt: [{ type: 'text', text }] },
    {
      kind: 'error',
      sessionId,
      error: {
        message:
          'the agent needs you to sign in: it answered "Authentication required". Sign in with "Demo login" (a login in a terminal), "Demo login (its own program)" (a program it names, in a terminal), "Demo API key" (an API key), "Demo account" (the agent signs you in), then try again.',
        kind: 'auth-required',
      },
    },
    { kind: 'turn-end', sessionId, reason: 'error' },
  ];
}

/** The sign-in commands (src-tauri/src/sign_in.rs) over a FakeBackend's sessions, as the shell
 * does them: a key goes to the (fake) keychain only and no answer holds it; a session target
 * answers at once and restarts (its events: starting, then ready, or dead when `refuseStart`
 * says the agent refuses the new start) and the kept prompt is sent again once ready. */
export class FakeSignIn implements SignInBackend {
  calls: [string, ...unknown[]][] = [];
  /** The keychain: `agent-auth/<agent>/<method>` → the key. */
  keychain = new Map<string, string>();
  /** What a sign-in rejects with (the method is not offered, the keychain is locked), when set. */
  error: IpcError | null = null;
  /** While set, a sign-in without a session waits for it (the agent has the browser open). */
  gate: Promise<void> | null = null;
  /** The agent refuses the restarted session's start with this (auth-required again). */
  refuseStart: string | null = null;
  /** The prompt each session keeps (it hit the sign-in); sent again after the restart. */
  kept = new Map<string, string>();

  constructor(private backend: FakeBackend) {}

  private restart(sessionId: string): SignInAnswer {
    const resends = this.kept.has(sessionId);
    const events: StreamEvent[] = [
      { kind: 'session-status', sessionId, status: 'starting', agent: identity() },
    ];
    if (this.refuseStart) {
      events.push(
        { kind: 'error', sessionId, error: { message: this.refuseStart, kind: 'auth-required' } },
        {
          kind: 'session-status',
          sessionId,
          status: 'dead',
          detail: this.refuseStart,
          agent: identity(),
        },
      );
    } else {
      events.push({
        kind: 'session-status',
        sessionId,
        status: 'ready',
        agent: identity({ acpSessionId: `acp-${sessionId}` }),
      });
      const kept = this.kept.get(sessionId);
      if (kept !== undefined) {
        this.kept.delete(sessionId);
        events.push(
          {
            kind: 'notice',
            sessionId,
            severity: 'info',
            title: 'Signed in: your prompt was sent again.',
            source: 'client',
          },
          { kind: 'turn-start', sessionId, prompt: [{ type: 'text', text: kept }] },
          { kind: 'text-delta', sessionId, text: `Signed in. You said: ${kept}` },
          { kind: 'turn-end', sessionId, reason: 'completed', stopReason: 'end_turn' },
        );
      }
    }
    // The shell answers before the new start's events arrive.
    queueMicrotask(() => this.backend.frame(sessionId, { snapshot: false, events }));
    return {
      session: { id: sessionId, folder: '/p', agent: 'demo' },
      resendsPrompt: resends,
      message: resends
        ? 'Signing in to demo; your prompt is sent again once it is ready.'
        : 'Signing in to demo…',
      actions: [],
    };
  }

  private alone(agent: string): SignInAnswer {
    return {
      resendsPrompt: false,
      message: `Signed in to ${agent}.`,
      actions: demoAuthMethods(),
    };
  }

  async signInAgent(sessionId: string, methodId: string): Promise<SignInAnswer> {
    this.calls.push(['signInAgent', sessionId, methodId]);
    if (this.error) throw this.error;
    return this.restart(sessionId);
  }

  async signInApiKey(target: SignInTarget, methodId: string, key: string): Promise<SignInAnswer> {
    // The call is recorded without the key, as the shell's logs are.
    this.calls.push(['signInApiKey', target, methodId]);
    if (this.error) throw this.error;
    const agent = 'agent' in target ? target.agent : 'demo';
    this.keychain.set(`agent-auth/${agent}/${methodId}`, key);
    if ('sessionId' in target) return this.restart(target.sessionId);
    if (this.gate) await this.gate;
    return this.alone(agent);
  }

  async agentSignIn(agent: string, methodId: string): Promise<SignInAnswer> {
    this.calls.push(['agentSignIn', agent, methodId]);
    if (this.gate) await this.gate;
    if (this.error) throw this.error;
    return this.alone(agent);
  }

  async signInKeepPrompt(sessionId: string, parts: PromptPart[]): Promise<void> {
    this.calls.push(['signInKeepPrompt', sessionId, parts]);
    if (this.error) throw this.error;
    const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
    if (parts.length === 0) this.kept.delete(sessionId);
    else this.kept.set(sessionId, text);
  }

  called(name: string): unknown[][] {
    return this.calls.filter((c) => c[0] === name).map((c) => c.slice(1));
  }
}

/** The shell's terminal-login commands for tests (lib/login.ts's LoginBackend): records every
 * call, keeps each login's frame handler so a test can play the program's output and its end,
 * and refuses a start with `refuseStart` when set. */
export class FakeLoginBackend implements LoginBackend {
  calls: [string, ...unknown[]][] = [];
  refuseStart: IpcError | null = null;
  /** login_start answers only once this resolves (a slow start), when set. */
  gate: Promise<void> | null = null;
  private frames = new Map<string, (f: LoginFrame) => void>();
  private counter = 0;

  async loginStart(
    target: LoginTarget,
    methodId: string,
    cols: number,
    rows: number,
    consent: boolean,
    onFrame: (f: LoginFrame) => void,
  ): Promise<LoginStarted> {
    this.calls.push(['loginStart', target, methodId, cols, rows, consent]);
    if (this.gate) await this.gate;
    if (this.refuseStart) throw this.refuseStart;
    const loginId = `login-${++this.counter}`;
    this.frames.set(loginId, onFrame);
    return {
      loginId,
      label: 'Log in to the demo agent',
      commandShown: 'acp-desk-demo-agent login',
    };
  }
  async loginInput(loginId: string, data: string): Promise<void> {
    this.calls.push(['loginInput', loginId, data]);
  }
  async loginResize(loginId: string, cols: number, rows: number): Promise<void> {
    this.calls.push(['loginResize', loginId, cols, rows]);
  }
  async loginCancel(loginId: string): Promise<void> {
    this.calls.push(['loginCancel', loginId]);
  }
  /** The program printed `data`. */
  output(loginId: string, data: string): void {
    this.frames.get(loginId)?.({ kind: 'output', data });
  }
  /** The program ended. */
  exit(loginId: string, end: Omit<Extract<LoginFrame, { kind: 'exit' }>, 'kind'>): void {
    this.frames.get(loginId)?.({ kind: 'exit', ...end });
    this.frames.delete(loginId);
  }
}
