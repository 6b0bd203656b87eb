// What the UI needs from the Rust side. The app uses the Tauri implementation (backend.ts, the
// only module that imports @tauri-apps/*); tests hand in their own.
import type {
  AppInfo,
  DragHover,
  FolderChosen,
  IpcError,
  PathsDropped,
  PermissionResolution,
  SessionInfo,
  StreamFrame,
  TurnEnd,
} from './generated/ipc';

export type Unsubscribe = () => void;

// TEMPORARY local declarations: the Rust side (src-tauri/src/ipc.rs) will define these and the
// generated ipc.ts will then provide them; these lines become re-exports.
/** One piece of a prompt as the composer builds it; the shell turns it into ACP content blocks. */
export type PromptPart =
  | { type: 'text'; text: string }
  /** A project file the user picked with `@`: relative to the session folder, `/`-separated.
   * Sent as a `resource_link`, or as an embedded `resource` when the agent advertises
   * `embeddedContext`. */
  | { type: 'file'; path: string }
  /** A pasted or dropped image, base64 without the `data:` prefix. */
  | { type: 'image'; mimeType: string; data: string; name?: string | null };

/** The project's files for the `@` picker (gitignore honoured), relative and `/`-separated. */
export interface ProjectFiles {
  files: string[];
  /** More files exist than were listed (the listing is capped). */
  truncated: boolean;
}

/** An error as the UI shows it: a command's IpcError, or something that went wrong on the way. */
export type UiError = IpcError | { code: 'internal'; message: string };

export interface Backend {
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
  /** `session/set_mode`; the change arrives as a `current-mode` event. */
  setMode(session: string, modeId: string): Promise<void>;
  /** `session/set_config_option`; the new options arrive as a `config-options` event. */
  setConfigOption(session: string, configId: string, value: string | boolean): Promise<void>;
  listFiles(session: string): Promise<ProjectFiles>;
  /** Opens a file (inside the session's folders) in the user's default app for it. */
  openPath(session: string, path: string, line?: number | null): Promise<void>;
  /** Shows a file (inside the session's folders) in the system's file manager. */
  revealPath(session: string, path: string): Promise<void>;
  /** Opens an http(s) or mailto link in the system browser; anything else is refused. */
  openUrl(url: string): Promise<void>;
  /** Shows the folder picker; the choice arrives through onFolderChosen. */
  pickFolder(): Promise<void>;
  onFolderChosen(cb: (e: FolderChosen) => void): Promise<Unsubscribe>;
  onPathsDropped(cb: (e: PathsDropped) => void): Promise<Unsubscribe>;
  onDragHover(cb: (e: DragHover) => void): Promise<Unsubscribe>;
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
  return { code: 'internal', message: `Something went wrong inside ACP Desk: ${message}` };
}
