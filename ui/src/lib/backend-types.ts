// What the UI needs from the Rust side. The app uses the Tauri implementation (backend.ts, the
// only module that imports @tauri-apps/*); tests hand in their own.
import type {
  AppInfo,
  ElicitationAnswer,
  ConfigValue,
  DesktopNotice,
  DragHover,
  FolderChosen,
  IpcError,
  MenuAction,
  OpenSessionEntry,
  PathsDropped,
  PermissionResolution,
  ProjectFiles,
  PromptPart,
  RestoredSidebar,
  SessionInfo,
  ShowRequest,
  StreamFrame,
  TurnEnd,
} from './generated/ipc';

import type { AgentsBackend } from './agents';

export type Unsubscribe = () => void;

// Generated from the Rust types (src-tauri/src/ipc.rs): one piece of a prompt as the composer
// builds it, and the project's files for the `@` picker.
export type {
  ConfigValue,
  MenuAction,
  OpenSessionEntry,
  ProjectFiles,
  PromptPart,
  RestoredSession,
  RestoredSidebar,
  Theme,
} from './generated/ipc';

/** An error as the UI shows it: a command's IpcError. Whatever else a command rejects with
 * (Tauri's own failures, a broken answer) is `internal` too: ACP Desk failed, not the user. */
export type UiError = IpcError;

/** The agents' commands (`AgentsBackend`) are the Agents view's, and the picker's. */
export interface Backend extends AgentsBackend {
  appInfo(): Promise<AppInfo>;
  openSession(folder: string, agent: string): Promise<SessionInfo>;
  /** Frames arrive in order: first the thread so far (`snapshot: true`), then live ones. */
  attach(session: string, onFrame: (frame: StreamFrame) => void): Promise<void>;
  prompt(session: string, parts: PromptPart[]): Promise<TurnEnd>;
  cancel(session: string): Promise<void>;
  respondPermission(
    session: string,
    requestId: string,
    resolution: PermissionResolution,
  ): Promise<void>;
  closeSession(session: string): Promise<void>;
  /** Reconnect: a new agent process for a session whose agent ended, continuing it in place
   * (the same id; its events keep arriving on the attached channel). */
  reconnectSession(session: string): Promise<SessionInfo>;
  /** `session/set_mode`; the change arrives as a `current-mode` event. */
  setMode(session: string, modeId: string): Promise<void>;
  /** `session/set_config_option`; the new options arrive as a `config-options` event. */
  setConfigOption(session: string, configId: string, value: ConfigValue): Promise<void>;
  listFiles(session: string): Promise<ProjectFiles>;
  /** Opens a file (inside the session's folders) in the user's default app for it. */
  openPath(session: string, path: string, line?: number | null): Promise<void>;
  /** Shows a file (inside the session's folders) in the system's file manager. */
  revealPath(session: string, path: string): Promise<void>;
  /** Opens an http(s) or mailto link in the system browser; anything else is refused. */
  openUrl(url: string): Promise<void>;
  /** The window's title (the shell's window, and the page's for a browser). */
  setTitle(title: string): Promise<void>;
  /** Opens the user's settings file (or, while there is none, the folder it goes in). */
  openSettingsFile(): Promise<void>;
  /** Shows the folder picker; the choice arrives through onFolderChosen. */
  pickFolder(): Promise<void>;
  onFolderChosen(cb: (e: FolderChosen) => void): Promise<Unsubscribe>;
  onPathsDropped(cb: (e: PathsDropped) => void): Promise<Unsubscribe>;
  onDragHover(cb: (e: DragHover) => void): Promise<Unsubscribe>;
  /** Menu items the window acts on (the Rust side does the others). */
  onMenuAction(cb: (e: MenuAction) => void): Promise<Unsubscribe>;
  /** A notification or the tray asked to show a session (on its permission dialog). */
  onShowRequest(cb: (e: ShowRequest) => void): Promise<Unsubscribe>;
  /** Something about the desktop to say once (no notification service). */
  onDesktopNotice(cb: (e: DesktopNotice) => void): Promise<Unsubscribe>;
  /** The sidebar as the last run left it: sessions with their stored transcripts and drafts. */
  restoredSessions(): Promise<RestoredSidebar>;
  /** Answers the agent's question (`elicitation`); an accept the engine finds invalid is
   * refused with `invalid-answer` and its fields' errors. */
  elicitationAnswer(session: string, requestId: string, answer: ElicitationAnswer): Promise<void>;
  /** Asks the agent to stop a background task (`task-not-stoppable` when it said it cannot). */
  backgroundTaskStop(session: string, taskId: string): Promise<void>;
  /** Saves the sidebar (its sessions in order, the index of the one shown) for the next start. */
  setOpenSessions(sessions: OpenSessionEntry[], shown: number | null): Promise<void>;
  /** Starts a restored session's agent again, continuing its stored conversation (resume,
   * load or, when the agent can do neither, a new session: `session-continued` says which). */
  continueSession(sessionId: string): Promise<SessionInfo>;
  /** Keeps a draft in the history under the session's history id ('' forgets it). */
  saveDraft(sessionId: string, text: string): Promise<void>;
}

// A Record, so the compiler fails when the Rust side adds a code this list lacks.
const IPC_CODES: Record<IpcError['code'], true> = {
  'folder-missing': true,
  'not-a-folder': true,
  'folder-unreadable': true,
  'agent-unknown': true,
  'agent-unavailable': true,
  'agent-failed': true,
  'auth-required': true,
  'session-unknown': true,
  'session-starting': true,
  'session-ended': true,
  'turn-in-progress': true,
  'permission-unknown': true,
  'invalid-input': true,
  'agent-refused': true,
  'path-outside': true,
  'history-unavailable': true,
  'keychain-unavailable': true,
  'project-config-changed': true,
  'consent-needed': true,
  'invalid-answer': true,
  'elicitation-unknown': true,
  'task-not-stoppable': true,
  'checkpoints-off': true,
  'folder-busy': true,
  'step-unknown': true,
  'checkpoint-failed': true,
  'checkpoint-partial': true,
  internal: true,
};
/** Whatever a command rejected with, as a UiError. */
export function toUiError(e: unknown): UiError {
  if (typeof e === 'object' && e !== null && 'code' in e && 'message' in e) {
    const { code, message } = e as { code: unknown; message: unknown };
    if (typeof code === 'string' && typeof message === 'string' && Object.hasOwn(IPC_CODES, code)) {
      return { code, message } as IpcError;
    }
  }
  const message = e instanceof Error ? e.message : typeof e === 'string' ? e : JSON.stringify(e);
  return { code: 'internal', message };
}

/** The words shown for an error. `internal` is ACP Desk's own failure, never the user's input
 * or the agent's doing: it says so and asks for a report. */
export function errorText(e: UiError): string {
  return e.code === 'internal' ? `ACP Desk failed: ${e.message} — please report it.` : e.message;
}
