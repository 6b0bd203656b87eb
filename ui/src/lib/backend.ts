// The one module that talks to Tauri. Everything else uses the Backend interface.
import { Channel, invoke } from '@tauri-apps/api/core';
import { listen } from '@tauri-apps/api/event';
import { getCurrentWindow } from '@tauri-apps/api/window';
import type { Backend } from './backend-types';
import type { HistoryBackend } from './history';
import type { McpServersListing, SecretsBackend, SecretsListing } from './secrets';
import type { ProjectMcpBackend } from './project-mcp';
import type { SignInBackend } from './sign-in';
import type { LoginBackend } from './login';
import type { CheckpointsBackend } from './checkpoints';
import type { AgentListing, CheckReport, InstallProgress, RegistryImported } from './agents';
import { toUiError } from './backend-types';
import type {
  AgentSession,
  AppEvent,
  AppInfo,
  Changes,
  CheckpointListing,
  CommandName,
  DesktopNotice,
  DragHover,
  FileVersions,
  FolderChosen,
  HistoryEvents,
  HistoryHit,
  HistoryNotice,
  HistorySession,
  HistoryStatus,
  LoginFrame,
  LoginStarted,
  MenuAction,
  PathsDropped,
  ProjectFiles,
  ProjectMcpOffer,
  RestoredSidebar,
  RevertOutcome,
  SessionInfo,
  ShowRequest,
  SignInAnswer,
  StreamFrame,
  TurnEnd,
} from './generated/ipc';

// Commands by `CommandName`, generated from the Rust list that registers them: a misspelt name
// fails the type check.
async function call<T>(cmd: CommandName, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    throw toUiError(e);
  }
}

async function run(cmd: CommandName, args?: Record<string, unknown>): Promise<void> {
  await call<unknown>(cmd, args);
}

export function tauriBackend(): Backend {
  return {
    appInfo: () => call<AppInfo>('app_info'),
    openSession: (folder, agent) => call<SessionInfo>('open_session', { folder, agent }),
    attach: async (session, onFrame) => {
      const channel = new Channel<StreamFrame>();
      channel.onmessage = onFrame;
      await run('attach', { session, onFrame: channel });
    },
    prompt: (session, parts) => call<TurnEnd>('prompt', { session, parts }),
    cancel: (session) => run('cancel', { session }),
    respondPermission: (session, requestId, resolution) =>
      run('respond_permission', { session, requestId, resolution }),
    elicitationAnswer: (session, requestId, answer) =>
      run('elicitation_answer', { session, requestId, answer }),
    backgroundTaskStop: (session, taskId) => run('background_task_stop', { session, taskId }),
    closeSession: (session) => run('close_session', { session }),
    reconnectSession: (session) => call<SessionInfo>('reconnect_session', { session }),
    setMode: (session, modeId) => run('set_mode', { session, modeId }),
    setConfigOption: (session, configId, value) =>
      run('set_config_option', { session, configId, value }),
    listFiles: (session) => call<ProjectFiles>('list_files', { session }),
    openPath: (session, path, line) => run('open_path', { session, path, line: line ?? null }),
    revealPath: (session, path) => run('reveal_path', { session, path }),
    openUrl: (url) => run('open_url', { url }),
    openSettingsFile: () => run('open_settings_file'),
    pickFolder: () => run('pick_folder'),
    setTitle: async (title) => {
      // The page's too: where no shell runs (the Playwright mock) it is the title there is.
      document.title = title;
      try {
        await getCurrentWindow().setTitle(title);
      } catch (e) {
        throw toUiError(e);
      }
    },
    onFolderChosen: (cb) =>
      listen<FolderChosen>('folder-chosen' satisfies AppEvent, (e) => cb(e.payload)),
    onPathsDropped: (cb) =>
      listen<PathsDropped>('paths-dropped' satisfies AppEvent, (e) => cb(e.payload)),
    onDragHover: (cb) => listen<DragHover>('drag-hover' satisfies AppEvent, (e) => cb(e.payload)),
    onMenuAction: (cb) =>
      listen<MenuAction>('menu-action' satisfies AppEvent, (e) => cb(e.payload)),
    onShowRequest: (cb) =>
      listen<ShowRequest>('show-request' satisfies AppEvent, (e) => cb(e.payload)),
    onDesktopNotice: (cb) =>
      listen<DesktopNotice>('desktop-notice' satisfies AppEvent, (e) => cb(e.payload)),
    restoredSessions: () => call<RestoredSidebar>('restored_sessions'),
    setOpenSessions: (sessions, shown) => run('set_open_sessions', { sessions, shown }),
    saveDraft: (sessionId, text) => run('save_draft', { sessionId, text }),
    continueSession: (sessionId) => call<SessionInfo>('continue_session', { sessionId }),
    agentsList: () => call<AgentListing>('agents_list'),
    agentCheck: (id) => call<CheckReport>('agent_check', { id }),
    agentInstall: (id, onProgress) => {
      const channel = new Channel<InstallProgress>();
      channel.onmessage = onProgress;
      return call<AgentListing>('agent_install', { id, onProgress: channel });
    },
    agentsUseForNewSessions: (id) => call<AgentListing>('agents_use_for_new_sessions', { id }),
    agentsOpenSettings: () => run('agents_open_settings'),
    agentsOpenManifest: (id) => run('agents_open_manifest', { id }),
    agentsImportRegistry: () => call<RegistryImported | null>('agents_import_registry'),
    agentsCopyInstallCommand: (id) => run('agents_copy_install_command', { id }),
  };
}

/** The MCP servers & secrets view's commands (src-tauri/src/secrets.rs). The value handed to
 * `secret_set` goes to the keychain; no command gives one back. */
export function tauriSecretsBackend(): SecretsBackend {
  return {
    secretsList: () => call<SecretsListing>('secrets_list'),
    secretSet: (name, value) => call<SecretsListing>('secret_set', { name, value }),
    secretDelete: (name) => call<SecretsListing>('secret_delete', { name }),
    mcpServersList: () => call<McpServersListing>('mcp_servers_list'),
    openSettings: () => run('agents_open_settings'),
  };
}

/** The History view's commands (src-tauri/src/history.rs). */
export function tauriHistoryBackend(): HistoryBackend {
  return {
    historyStatus: () => call<HistoryStatus>('history_status'),
    historyList: () => call<HistorySession[]>('history_list'),
    historySearch: (text) => call<HistoryHit[]>('history_search', { text }),
    historyEvents: (id) => call<HistoryEvents>('history_events', { id }),
    historyDelete: (id) => call<string>('history_delete', { id }),
    historyExport: (id, format) => call<string | null>('history_export', { id, format }),
    historyCopyId: (id) => run('history_copy_id', { id }),
    historyContinue: (id) => call<SessionInfo>('history_continue', { id }),
    historyAgentSessions: (agent, folder) =>
      call<AgentSession[]>('history_agent_sessions', { agent, folder }),
    historyImport: (agent, folder, acpSessionId) =>
      call<SessionInfo>('history_import', { agent, folder, acpSessionId }),
    historySendContext: (session, stored) =>
      call<TurnEnd>('history_send_context', { session, stored }),
    onHistoryNotice: (cb) =>
      listen<HistoryNotice>('history-notice' satisfies AppEvent, (e) => cb(e.payload)),
  };
}

/** A project's own MCP config: the offer and the decisions (src-tauri/src/project_mcp.rs). */
export function tauriProjectMcpBackend(): ProjectMcpBackend {
  return {
    projectMcpOffer: (folder) => call<ProjectMcpOffer | null>('project_mcp_offer', { folder }),
    projectMcpDecide: (folder, file, digest, decision) =>
      run('project_mcp_decide', { folder, file, digest, decision }),
    projectMcpRestart: (session) => call<SessionInfo>('project_mcp_restart', { session }),
  };
}

/** Signing in to an agent (src-tauri/src/sign_in.rs). The key handed to `sign_in_api_key` goes
 * to the keychain; no command gives it back. */
export function tauriSignInBackend(): SignInBackend {
  return {
    signInAgent: (sessionId, methodId) =>
      call<SignInAnswer>('sign_in_agent', { sessionId, methodId }),
    signInApiKey: (target, methodId, key) =>
      call<SignInAnswer>('sign_in_api_key', { target, methodId, key }),
    agentSignIn: (agent, methodId) => call<SignInAnswer>('agent_sign_in', { agent, methodId }),
    signInKeepPrompt: (sessionId, parts) => run('sign_in_keep_prompt', { sessionId, parts }),
  };
}

/** Terminal logins (src-tauri/src/login.rs): the program's output on a channel, the keys typed
 * in the window's terminal to it. */
export function tauriLoginBackend(): LoginBackend {
  return {
    loginStart: (target, methodId, cols, rows, consent, onFrame) => {
      const output = new Channel<LoginFrame>();
      output.onmessage = onFrame;
      return call<LoginStarted>('login_start', { target, methodId, cols, rows, consent, output });
    },
    loginInput: (loginId, data) => run('login_input', { loginId, data }),
    loginResize: (loginId, cols, rows) => run('login_resize', { loginId, cols, rows }),
    loginCancel: (loginId) => run('login_cancel', { loginId }),
  };
}

/** Review and undo over a session's checkpoints (src-tauri/src/commands.rs). */
export function tauriCheckpointsBackend(): CheckpointsBackend {
  return {
    checkpointList: (session) => call<CheckpointListing>('checkpoint_list', { session }),
    checkpointChanges: (session, turn) => call<Changes>('checkpoint_changes', { session, turn }),
    checkpointFile: (session, turn, path, oldPath) =>
      call<FileVersions>('checkpoint_file', { session, turn, path, oldPath }),
    checkpointRevert: (session, turn, file, force) =>
      call<RevertOutcome>('checkpoint_revert', { session, turn, file, force }),
    checkpointRestore: (session, turn, force) =>
      call<RevertOutcome>('checkpoint_restore', { session, turn, force }),
  };
}
