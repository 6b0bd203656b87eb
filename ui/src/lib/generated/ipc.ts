/* Generated from ipc.schema.json by ui/scripts/gen-types.mjs: do not edit.
 * The Rust types in src-tauri/src/ipc.rs and crates/acp-desk-core, and the command list in
 * src-tauri/src/command_names.rs, are the source. */

/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "StreamEvent".
 */
export type StreamEvent =
  | {
      kind: 'text-delta';
      sessionId: string;
      text: string;
      content?: ContentBlock | null;
      messageId?: string | null;
    }
  | {
      kind: 'thought';
      sessionId: string;
      text: string;
      content?: ContentBlock | null;
      messageId?: string | null;
    }
  | (ToolCallEvent & {
      kind: 'tool-call';
    })
  | {
      kind: 'tool-result';
      sessionId: string;
      toolCallId: string;
      /**
       * `{content, rawOutput}` of the call as it stood when it completed or failed.
       */
      result: {
        [k: string]: unknown;
      };
      isError?: boolean | null;
    }
  | (AgentPromptEvent & {
      kind: 'agent-prompt';
    })
  | {
      kind: 'agent-prompt-settled';
      sessionId: string;
      /**
       * The permission request's id (not the ACP tool call's): the `agent-prompt`'s that this
       * settles. `toolCallId` on the wire, as in `agent-prompt`.
       */
      toolCallId: string;
      /**
       * `{optionId}` or `{cancelled: true}`.
       */
      outcome:
        | {
            optionId: string;
            feedback?: string | null;
          }
        | {
            cancelled: True;
          };
      by: SettledBy;
      /**
       * Feedback the user gave with a rejection; sent to the agent at the head of the next
       * prompt.
       */
      feedback?: string | null;
    }
  | {
      kind: 'turn-start';
      sessionId: string;
      prompt: ContentBlock[];
    }
  | {
      kind: 'turn-end';
      sessionId: string;
      reason: TurnEndReason;
      /**
       * The agent's own stop reason (`end_turn`, `max_tokens`, `refusal`, ...), when it gave one.
       */
      stopReason?: StopReason | null;
    }
  | {
      kind: 'error';
      sessionId?: string | null;
      error: ErrorInfo;
    }
  | {
      kind: 'plan';
      sessionId: string;
      title?: string | null;
      entries: PlanEntry[];
    }
  | {
      kind: 'usage_update';
      sessionId: string;
      /**
       * The context window, in tokens (ACP `size`).
       */
      size: number;
      /**
       * Tokens in the context now (ACP `used`).
       */
      used: number;
      /**
       * The session's cost so far, when the agent says (ACP `cost`).
       */
      cost?: Cost | null;
      /**
       * Never produced: the seed names it, but ACP's `usage_update` carries no token counts
       * (the schema has them only in a prompt's response, behind its unstable
       * `unstable_end_turn_token_usage` feature, which we do not enable).
       */
      tokensIn?: number | null;
      /**
       * Never produced, as `tokensIn`.
       */
      tokensOut?: number | null;
      /**
       * The model, from `_meta["_claude/model"]` (claude-agent-acp) when present.
       */
      model?: string | null;
      /**
       * Never produced: the seed's host sets it when it replaces a guessed `size`; ACP does
       * not say whether `size` is a guess, and we pass `size` on as the agent sent it.
       */
      sizeInferred?: boolean | null;
      /**
       * Never produced, for the same reason: we never replace `size`, so there is no other
       * size to keep.
       */
      reportedSize?: number | null;
      /**
       * Who started the cycle this usage closes, from `_meta["_claude/origin"].kind`
       * (claude-agent-acp) when present.
       */
      origin?: string | null;
      _meta?: {
        [k: string]: unknown;
      } | null;
    }
  | {
      kind: 'checkpoint';
      sessionId: string;
      phase: CheckpointPhase;
      /**
       * The step's number; absent when no checkpoint could be taken.
       */
      turn?: number | null;
      summary?: ChangeSummary | null;
      notes?: string[];
      /**
       * Why there is no checkpoint (the turn ran anyway and cannot be undone here).
       */
      error?: string | null;
      /**
       * How long the prompt waited for the `before` checkpoint.
       */
      waitedMs?: number | null;
    }
  | {
      kind: 'background-task';
      sessionId: string;
      phase: BackgroundTaskPhase;
      task: BackgroundTaskInfo;
    }
  | (ElicitationEvent & {
      kind: 'elicitation';
    })
  | {
      kind: 'elicitation-settled';
      sessionId: string;
      requestId: string;
      action: ElicitationAction;
      by: SettledBy;
      /**
       * A url-mode request accepted: the page is the user's to finish; an
       * `elicitation-complete` says when the agent heard it was.
       */
      awaitingCompletion?: boolean | null;
    }
  | {
      kind: 'elicitation-complete';
      sessionId: string;
      requestId: string;
    }
  | {
      kind: 'available-commands';
      sessionId: string;
      commands: CommandInfo[];
    }
  | {
      kind: 'user-message-delta';
      sessionId: string;
      text: string;
      content?: ContentBlock | null;
      messageId?: string | null;
    }
  | {
      kind: 'session-status';
      sessionId: string;
      status: SessionState;
      /**
       * Why the session is in this state, for people ("the agent exited with code 3: ...").
       */
      detail?: string | null;
      agent?: AgentIdentity | null;
    }
  | {
      kind: 'modes';
      sessionId: string;
      currentModeId: string;
      availableModes: SessionMode[];
    }
  | {
      kind: 'current-mode';
      sessionId: string;
      currentModeId: string;
    }
  | {
      kind: 'config-options';
      sessionId: string;
      configOptions: SessionConfigOption[];
    }
  | {
      kind: 'session-info';
      sessionId: string;
      /**
       * Absent: unchanged. `null`: cleared.
       */
      title?: string | null;
      updatedAt?: string | null;
    }
  | {
      kind: 'notice';
      sessionId: string;
      severity: NoticeSeverity;
      title: string;
      description?: string | null;
      source: NoticeSource;
    }
  | {
      kind: 'unknown-update';
      sessionId: string;
      /**
       * The `update` object exactly as the agent sent it.
       */
      update: {
        [k: string]: unknown;
      };
    }
  | {
      kind: 'terminal-output';
      sessionId: string;
      terminalId: string;
      /**
       * New text only; a multi-byte character is never split across events.
       */
      data: string;
      exitStatus?: TerminalExitStatus | null;
      /**
       * `true` once more output came than the terminal keeps: its start was dropped.
       */
      truncated?: boolean | null;
      /**
       * The most output the terminal keeps, in bytes (the agent's `outputByteLimit`, or our
       * default, capped): on the terminal's first event only.
       */
      outputByteLimit?: number | null;
    }
  | {
      kind: 'file-changed';
      sessionId: string;
      /**
       * The canonical path written.
       */
      path: string;
      /**
       * This write created it. The watcher says so when the file appeared during the turn
       * (a new directory entry, or a file in a new folder); a file renamed into place over
       * nothing is reported `false`, since a rename cannot tell whether it replaced a file.
       */
      created: boolean;
      /**
       * How we learned of the change; absent in events from before the field existed.
       */
      via?: FileChangeVia | null;
      /**
       * The tool call that wrote it, when a call of this turn names the path
       * ([`crate::thread::paths_named`]): the running one, else the latest. The watcher
       * reports a change after its call may have finished and the next begun, so a front
       * end places the change with this call rather than where the event arrives.
       */
      toolCallId?: string | null;
    }
  | {
      kind: 'mcp-servers';
      sessionId: string;
      servers: McpServerReport[];
    }
  | {
      kind: 'session-continued';
      sessionId: string;
      mode: ContinuationMode;
      outcome: ContinuationOutcome;
      /**
       * The agent's session id now in use (a new one when `outcome` is `new`).
       */
      acpSessionId?: string | null;
      /**
       * Why it is not the first choice (what the agent answered, or what it does not offer).
       */
      detail?: string | null;
    };
/**
 * Content blocks represent displayable information in the Agent Client Protocol.
 *
 * Content blocks appear in:
 * - User prompts sent via `session/prompt`
 * - Language model output streamed through `session/update` notifications
 * - Progress updates and results from tool calls
 *
 * This structure is compatible with the Model Context Protocol (MCP), so agents can
 * forward content from MCP tool outputs without transformation.
 *
 * See protocol docs: [Content](https://agentclientprotocol.com/protocol/v1/content)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ContentBlock".
 */
export type ContentBlock =
  | (TextContent & {
      type: 'text';
    })
  | (ImageContent & {
      type: 'image';
    })
  | (AudioContent & {
      type: 'audio';
    })
  | (ResourceLink & {
      type: 'resource_link';
    })
  | (EmbeddedResource & {
      type: 'resource';
    });
/**
 * The sender or recipient of messages and data in a conversation.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "Role".
 */
export type Role = 'assistant' | 'user';
/**
 * Categories of tools that can be invoked.
 *
 * Tool kinds help clients choose appropriate icons and optimize how they
 * display tool execution progress.
 *
 * See protocol docs: [Creating](https://agentclientprotocol.com/protocol/v1/tool-calls#creating)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ToolKind".
 */
export type ToolKind =
  | 'read'
  | 'edit'
  | 'delete'
  | 'move'
  | 'search'
  | 'execute'
  | 'think'
  | 'fetch'
  | 'switch_mode'
  | 'other';
/**
 * Execution status of a tool call.
 *
 * Tool calls progress through different statuses during their lifecycle.
 *
 * See protocol docs: [Status](https://agentclientprotocol.com/protocol/v1/tool-calls#status)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ToolCallStatus".
 */
export type ToolCallStatus = 'pending' | 'in_progress' | 'completed' | 'failed';
/**
 * Content produced by a tool call.
 *
 * Tool calls can produce different types of content including
 * standard content blocks (text, images) or file diffs.
 *
 * See protocol docs: [Content](https://agentclientprotocol.com/protocol/v1/tool-calls#content)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ToolCallContent".
 */
export type ToolCallContent =
  | (Content & {
      type: 'content';
    })
  | (Diff & {
      type: 'diff';
    })
  | (Terminal & {
      type: 'terminal';
    })
  | (SessionReference & {
      type: 'session';
    });
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "True".
 */
export type True = true;
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SettledBy".
 */
export type SettledBy = 'user' | 'rule' | 'stop' | 'agent' | 'watchdog';
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "TurnEndReason".
 */
export type TurnEndReason = 'completed' | 'cancelled' | 'max_turns' | 'error' | 'watchdog-timeout';
/**
 * Reasons why an agent stops processing a prompt turn.
 *
 * See protocol docs: [Stop Reasons](https://agentclientprotocol.com/protocol/v1/prompt-turn#stop-reasons)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "StopReason".
 */
export type StopReason = 'end_turn' | 'max_tokens' | 'max_turn_requests' | 'refusal' | 'cancelled';
/**
 * What kind of error this is, for front ends to act on (`kind` on the wire, kebab case).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ErrorKind".
 */
export type ErrorKind =
  | 'auth-required'
  | 'rate-limit'
  | 'usage-limit'
  | 'unavailable'
  | 'context-too-long'
  | 'agent-exited'
  | 'agent-unresponsive'
  | 'start-failed'
  | 'protocol'
  | 'other';
/**
 * Which side of a turn a checkpoint was taken on.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CheckpointPhase".
 */
export type CheckpointPhase = 'before' | 'after';
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "BackgroundTaskPhase".
 */
export type BackgroundTaskPhase = 'started' | 'updated' | 'settled';
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "BackgroundTaskStatus".
 */
export type BackgroundTaskStatus = 'running' | 'paused' | 'completed' | 'failed' | 'stopped';
/**
 * Who settled a background task.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "TaskSettledBy".
 */
export type TaskSettledBy = 'agent' | 'session-end';
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ElicitationModeKind".
 */
export type ElicitationModeKind = 'form' | 'url';
/**
 * What a field asks for.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FieldType".
 */
export type FieldType =
  ('string' | 'number' | 'integer' | 'boolean') | 'select' | 'multi-select' | 'unsupported';
/**
 * A string field's `format`.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FieldFormat".
 */
export type FieldFormat = 'email' | 'uri' | 'date' | 'date-time';
/**
 * The answer's action, as `elicitation-settled` and the audit log say it.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ElicitationAction".
 */
export type ElicitationAction = 'accept' | 'decline' | 'cancel';
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionState".
 */
export type SessionState = 'starting' | 'ready' | 'prompting' | 'dead';
/**
 * How an [`AuthAction`] is carried out. The env maps are what the agent sent (never a secret
 * of the user's: those stay in the launch's env, read at spawn time).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AuthHow".
 */
export type AuthHow =
  | {
      via: 'terminal';
      args?: string[];
      env?: {
        [k: string]: string;
      };
    }
  | {
      via: 'terminal-command';
      command: string;
      args?: string[];
      env?: {
        [k: string]: string;
      };
      /**
       * The agent's label for it ("Claude Code Login").
       */
      label?: string | null;
    }
  | {
      via: 'api-key';
      /**
       * `_meta["api-key"].provider` ("google"), when the agent named one.
       */
      provider?: string | null;
    }
  | {
      via: 'agent';
    };
/**
 * A session configuration option selector and its current state.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigOption".
 */
export type SessionConfigOption = {
  /**
   * Unique identifier for the configuration option.
   */
  id: string;
  /**
   * Human-readable label for the option.
   */
  name: string;
  /**
   * Optional description for the Client to display to the user.
   */
  description?: string | null;
  /**
   * Optional semantic category for this option (UX only).
   */
  category?: SessionConfigOptionCategory | null;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
} & SessionConfigOption1;
/**
 * Semantic category for a session configuration option.
 *
 * This is intended to help Clients distinguish broadly common selectors (e.g. model selector vs
 * session mode selector vs thought/reasoning level) for UX purposes (keyboard shortcuts, icons,
 * placement). It MUST NOT be required for correctness. Clients MUST handle missing or unknown
 * categories gracefully.
 *
 * Category names beginning with `_` are free for custom use, like other ACP extension methods.
 * Category names that do not begin with `_` are reserved for the ACP spec.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigOptionCategory".
 */
export type SessionConfigOptionCategory =
  'mode' | 'model' | 'model_config' | 'thought_level' | string;
export type SessionConfigOption1 =
  | (SessionConfigSelect & {
      type: 'select';
    })
  | (SessionConfigBoolean & {
      type: 'boolean';
    });
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "NoticeSeverity".
 */
export type NoticeSeverity = 'info' | 'warning' | 'error';
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "NoticeSource".
 */
export type NoticeSource = 'agent' | 'client';
/**
 * How a `file-changed` came to be known.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FileChangeVia".
 */
export type FileChangeVia = 'fs-write' | 'watcher';
/**
 * A server's transport, as reported.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "McpTransportKind".
 */
export type McpTransportKind = 'stdio' | 'http' | 'sse';
/**
 * Where a reported server comes from.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "McpSourceKind".
 */
export type McpSourceKind = 'settings' | 'manifest' | 'project';
/**
 * What a `session-continued` opening was asked to do.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ContinuationMode".
 */
export type ContinuationMode = 'continue' | 'import';
/**
 * How the agent took it.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ContinuationOutcome".
 */
export type ContinuationOutcome = 'resumed' | 'loaded' | 'new';
/**
 * What a command failed with. Crosses as `{code, message}`; the UI matches on `code`, never
 * on the text, and shows `message` (which says what happened and what to do).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "IpcError".
 */
export type IpcError =
  | {
      code: 'folder-missing';
      message: string;
    }
  | {
      code: 'not-a-folder';
      message: string;
    }
  | {
      code: 'folder-unreadable';
      message: string;
    }
  | {
      code: 'agent-unknown';
      message: string;
    }
  | {
      code: 'agent-unavailable';
      message: string;
    }
  | {
      code: 'agent-failed';
      message: string;
    }
  | {
      code: 'auth-required';
      message: string;
    }
  | {
      code: 'session-unknown';
      message: string;
    }
  | {
      code: 'session-starting';
      message: string;
    }
  | {
      code: 'session-ended';
      message: string;
    }
  | {
      code: 'turn-in-progress';
      message: string;
    }
  | {
      code: 'permission-unknown';
      message: string;
    }
  | {
      code: 'invalid-answer';
      message: string;
    }
  | {
      code: 'elicitation-unknown';
      message: string;
    }
  | {
      code: 'task-not-stoppable';
      message: string;
    }
  | {
      code: 'invalid-input';
      message: string;
    }
  | {
      code: 'agent-refused';
      message: string;
    }
  | {
      code: 'path-outside';
      message: string;
    }
  | {
      code: 'history-unavailable';
      message: string;
    }
  | {
      code: 'keychain-unavailable';
      message: string;
    }
  | {
      code: 'project-config-changed';
      message: string;
    }
  | {
      code: 'consent-needed';
      message: string;
    }
  | {
      code: 'checkpoints-off';
      message: string;
    }
  | {
      code: 'folder-busy';
      message: string;
    }
  | {
      code: 'step-unknown';
      message: string;
    }
  | {
      code: 'checkpoint-failed';
      message: string;
    }
  | {
      code: 'checkpoint-partial';
      message: string;
    }
  | {
      code: 'internal';
      message: string;
    };
/**
 * The seed's `AcpPermissionResolution`: `{optionId, feedback?}` or `{cancelled: true}`.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PermissionResolution".
 */
export type PermissionResolution =
  | {
      optionId: string;
      feedback?: string | null;
    }
  | {
      cancelled: True;
    };
/**
 * What the user (or a policy) answers an elicitation with.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ElicitationAnswer".
 */
export type ElicitationAnswer =
  | {
      action: 'accept';
      content?: {
        [k: string]: unknown;
      } | null;
    }
  | {
      action: 'decline';
    }
  | {
      action: 'cancel';
    };
/**
 * A menu item the window acts on (the others are done in Rust). Payload of `menu-action`.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "MenuAction".
 */
export type MenuAction =
  | {
      action: 'close-session';
    }
  | {
      action: 'toggle-sidebar';
    }
  | {
      action: 'undo';
    }
  | {
      action: 'redo';
    }
  | {
      action: 'theme';
      theme: Theme;
    };
/**
 * The window's colours. A value this build does not know (a newer ACP Desk's) reads as
 * `system`, rather than making the whole file unreadable.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "Theme".
 */
export type Theme = ('light' | 'dark') | 'system';
/**
 * The app-wide Tauri events (DESIGN.md: app-wide notices are events; a session's stream is its
 * channel). Their names reach the UI through the generated types, never typed twice.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AppEvent".
 */
export type AppEvent =
  | 'paths-dropped'
  | 'drag-hover'
  | 'folder-chosen'
  | 'menu-action'
  | 'history-notice'
  | 'show-request'
  | 'desktop-notice';
/**
 * One piece of a prompt as the composer builds it; the shell turns each into an ACP content
 * block (`prompt`).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PromptPart".
 */
export type PromptPart =
  | {
      type: 'text';
      text: string;
    }
  | {
      type: 'file';
      path: string;
    }
  | {
      type: 'image';
      mimeType: string;
      data: string;
      name?: string | null;
    };
/**
 * A config option's new value: a select's value id, or a boolean's state.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ConfigValue".
 */
export type ConfigValue = boolean | string;
/**
 * The name of a command the webview may call (src-tauri/src/command_names.rs).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CommandName".
 */
export type CommandName =
  | 'app_info'
  | 'open_session'
  | 'attach'
  | 'prompt'
  | 'cancel'
  | 'respond_permission'
  | 'elicitation_answer'
  | 'background_task_stop'
  | 'checkpoint_list'
  | 'checkpoint_changes'
  | 'checkpoint_file'
  | 'checkpoint_revert'
  | 'checkpoint_restore'
  | 'close_session'
  | 'reconnect_session'
  | 'pick_folder'
  | 'set_mode'
  | 'set_config_option'
  | 'list_files'
  | 'open_path'
  | 'reveal_path'
  | 'open_url'
  | 'open_settings_file'
  | 'history_status'
  | 'history_list'
  | 'history_search'
  | 'history_events'
  | 'history_delete'
  | 'history_export'
  | 'history_copy_id'
  | 'history_continue'
  | 'history_send_context'
  | 'history_agent_sessions'
  | 'history_import'
  | 'restored_sessions'
  | 'set_open_sessions'
  | 'save_draft'
  | 'continue_session'
  | 'agents_list'
  | 'agent_check'
  | 'agent_install'
  | 'agents_use_for_new_sessions'
  | 'agents_open_settings'
  | 'agents_open_manifest'
  | 'agents_import_registry'
  | 'agents_copy_install_command'
  | 'secrets_list'
  | 'secret_set'
  | 'secret_delete'
  | 'mcp_servers_list'
  | 'project_mcp_offer'
  | 'project_mcp_decide'
  | 'project_mcp_restart'
  | 'sign_in_agent'
  | 'sign_in_api_key'
  | 'agent_sign_in'
  | 'sign_in_keep_prompt'
  | 'login_start'
  | 'login_input'
  | 'login_resize'
  | 'login_cancel';
/**
 * How a session is exported.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ExportFormat".
 */
export type ExportFormat = 'markdown' | 'jsonl';
/**
 * Where an agent definition came from.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AgentSource".
 */
export type AgentSource = 'builtin' | 'registry' | 'settings' | 'manifest';
/**
 * Whether an agent can be started, and if not, why.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AgentStatus".
 */
export type AgentStatus =
  'found' | 'downloads' | 'missing' | 'not-installed' | 'unavailable' | 'unsupported' | 'invalid';
/**
 * Which kind of source, for the UI.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "RegistrySourceKind".
 */
export type RegistrySourceKind = 'snapshot' | 'imported';
/**
 * The kind of a Check failure, for front ends to show (kebab case on the wire).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CheckFailureKind".
 */
export type CheckFailureKind =
  | 'not-installed'
  | 'not-executable'
  | 'exited'
  | 'not-json'
  | 'no-answer'
  | 'protocol-version'
  | 'invalid-answer'
  | 'refused'
  | 'other';
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "InstallPhase".
 */
export type InstallPhase = ('downloading' | 'verifying' | 'extracting') | 'installed';
/**
 * What the user decided about one file: use its servers in this folder's sessions, or do not
 * ask again (about these bytes).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ProjectMcpChoice".
 */
export type ProjectMcpChoice = 'use' | 'ignore';
/**
 * Who a sign-in is for: an open session (its agent is restarted signed in, the thread kept),
 * or an agent of the Agents view (checked with a start of its own, no session).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SignInTarget".
 */
export type SignInTarget =
  | {
      sessionId: string;
    }
  | {
      agent: string;
    };
/**
 * Whom a login signs in.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "LoginTarget".
 */
export type LoginTarget =
  | {
      sessionId: string;
    }
  | {
      agent: string;
    };
/**
 * What a login's channel carries, in order: `output`s, then one `exit`.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "LoginFrame".
 */
export type LoginFrame =
  | {
      kind: 'output';
      data: string;
    }
  | {
      kind: 'exit';
      /**
       * Its exit code, when it exited (0 is success, nothing else is).
       */
      exitCode?: number | null;
      /**
       * The signal that ended it ("SIGTERM"), when one did.
       */
      signal?: string | null;
      /**
       * `login_cancel` ended it (or the app did).
       */
      cancelled: boolean;
      /**
       * A session target whose login exited 0: the session was restarted signed in.
       */
      restarted: boolean;
      /**
       * Why that restart failed, when it did (the login itself succeeded).
       */
      restartError?: IpcError | null;
    };
/**
 * What a step is.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "StepKind".
 */
export type StepKind = 'turn' | 'revert' | 'restore';
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FileStatus".
 */
export type FileStatus = ('added' | 'modified' | 'deleted' | 'renamed') | 'typeChanged';
/**
 * How a revert or restore went.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "RevertOutcome".
 */
export type RevertOutcome =
  | {
      outcome: 'done';
      step: number;
      /**
       * The files written or deleted.
       */
      files: string[];
      /**
       * Files left as they are: submodules.
       */
      skipped?: string[];
    }
  | {
      outcome: 'conflicts';
      conflicts: RevertConflict[];
    }
  | {
      outcome: 'unchanged';
    };
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ConflictReason".
 */
export type ConflictReason = 'changed' | 'deleted' | 'created';
/**
 * Resource content that can be embedded in a message.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "EmbeddedResourceResource".
 */
export type EmbeddedResourceResource = TextResourceContents | BlobResourceContents;
/**
 * Typed identifier used for terminal values on the wire.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "TerminalId".
 */
export type TerminalId = string;
/**
 * A unique identifier for a conversation session between a client and agent.
 *
 * Each session has its own context, conversation history, and state, so one
 * agent can run several independent sessions.
 *
 * See protocol docs: [Session ID](https://agentclientprotocol.com/protocol/v1/session-setup#session-id)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionId".
 */
export type SessionId = string;
/**
 * Unique identifier for a permission option.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PermissionOptionId".
 */
export type PermissionOptionId = string;
/**
 * The type of permission option being presented to the user.
 *
 * Helps clients choose appropriate icons and UI treatment.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PermissionOptionKind".
 */
export type PermissionOptionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';
/**
 * Priority levels for plan entries.
 *
 * Used to indicate the relative importance or urgency of different
 * tasks in the execution plan.
 * See protocol docs: [Plan Entries](https://agentclientprotocol.com/protocol/v1/agent-plan#plan-entries)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PlanEntryPriority".
 */
export type PlanEntryPriority = 'high' | 'medium' | 'low';
/**
 * Status of a plan entry in the execution flow.
 *
 * Tracks the lifecycle of each task from planning through completion.
 * See protocol docs: [Plan Entries](https://agentclientprotocol.com/protocol/v1/agent-plan#plan-entries)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PlanEntryStatus".
 */
export type PlanEntryStatus = 'pending' | 'in_progress' | 'completed';
/**
 * Unique identifier for a Session Mode.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionModeId".
 */
export type SessionModeId = string;
/**
 * Unique identifier for a session configuration option.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigId".
 */
export type SessionConfigId = string;
/**
 * Unique identifier for a session configuration option value.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigValueId".
 */
export type SessionConfigValueId = string;
/**
 * Possible values for a session configuration option.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigSelectOptions".
 */
export type SessionConfigSelectOptions = SessionConfigSelectOption[] | SessionConfigSelectGroup[];
/**
 * Unique identifier for a session configuration option value group.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigGroupId".
 */
export type SessionConfigGroupId = string;
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ProblemSeverity".
 */
export type ProblemSeverity = 'error' | 'warning';

/**
 * The root of the generated schema: one field per type the UI needs, so one schema (and one
 * generated TypeScript file) holds them all.
 */
export interface IpcTypes {
  appInfo: AppInfo;
  sessionInfo: SessionInfo;
  streamFrame: StreamFrame;
  turnEnd: TurnEnd;
  ipcError: IpcError;
  permissionResolution: PermissionResolution;
  elicitationAnswer: ElicitationAnswer;
  fieldError: FieldError;
  pathsDropped: PathsDropped;
  dragHover: DragHover;
  folderChosen: FolderChosen;
  showRequest: ShowRequest;
  desktopNotice: DesktopNotice;
  menuAction: MenuAction;
  theme: Theme;
  appEvent: AppEvent;
  promptPart: PromptPart;
  projectFiles: ProjectFiles;
  configValue: ConfigValue;
  commandName: CommandName;
  historyStatus: HistoryStatus;
  historySession: HistorySession;
  historyHit: HistoryHit;
  historyEvents: HistoryEvents;
  exportFormat: ExportFormat;
  agentSession: AgentSession;
  restoredSidebar: RestoredSidebar;
  openSessionEntry: OpenSessionEntry;
  agentListing: AgentListing;
  checkReport: CheckReport;
  installProgress: InstallProgress;
  registryImported: RegistryImported;
  secretsListing: SecretsListing;
  mcpServersListing: McpServersListing;
  projectMcpOffer: ProjectMcpOffer;
  projectMcpChoice: ProjectMcpChoice;
  signInTarget: SignInTarget;
  signInAnswer: SignInAnswer;
  loginTarget: LoginTarget;
  loginStarted: LoginStarted;
  loginFrame: LoginFrame;
  checkpointListing: CheckpointListing;
  checkpointChanges: Changes;
  fileVersions: FileVersions;
  revertOutcome: RevertOutcome;
}
/**
 * What the window needs to start: the agents to offer and the folder to open, if any.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AppInfo".
 */
export interface AppInfo {
  version: string;
  /**
   * The folder given on the command line, opened at start.
   */
  initialFolder?: string | null;
  /**
   * An agent named on the command line (`--agent NAME`); without one, new sessions use
   * the default of the listing (`agents_list`, asked once the window is up).
   */
  initialAgent?: string | null;
  configDir: string;
  dataDir: string;
  /**
   * The theme chosen with View → Theme (saved in the app's state file); later changes arrive
   * as `menu-action` `theme`.
   */
  theme: ('light' | 'dark') | 'system';
  /**
   * Something about the desktop to say once (the platform has no notification service), if
   * it was known when the window asked; later it arrives as `desktop-notice`.
   */
  desktopNotice?: string | null;
}
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionInfo".
 */
export interface SessionInfo {
  /**
   * The app's id for the session: pass it to every session command.
   */
  id: string;
  /**
   * The folder, resolved (absolute, symlinks followed).
   */
  folder: string;
  /**
   * The agent's name as `resolve` takes it.
   */
  agent: string;
}
/**
 * What a view receives: the thread so far (`snapshot: true`, replacing whatever the view
 * held), then live frames in order.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "StreamFrame".
 */
export interface StreamFrame {
  snapshot: boolean;
  events: StreamEvent[];
}
/**
 * Text provided to or from an LLM.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "TextContent".
 */
export interface TextContent {
  /**
   * Optional annotations that help clients decide how to display or route this content.
   */
  annotations?: Annotations | null;
  /**
   * Text payload carried by this content block.
   */
  text: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * Optional annotations for the client. The client can use annotations to inform how objects are used or displayed
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "Annotations".
 */
export interface Annotations {
  /**
   * Intended recipients for this content, such as the user or assistant.
   */
  audience?: Role[] | null;
  /**
   * Timestamp indicating when the underlying resource was last modified.
   */
  lastModified?: string | null;
  /**
   * Relative importance of this content when clients choose what to surface.
   */
  priority?: number | null;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * An image provided to or from an LLM.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ImageContent".
 */
export interface ImageContent {
  /**
   * Optional annotations that help clients decide how to display or route this content.
   */
  annotations?: Annotations | null;
  /**
   * Base64-encoded media payload.
   */
  data: string;
  /**
   * MIME type describing the encoded media payload.
   */
  mimeType: string;
  /**
   * URI associated with this resource or media payload.
   */
  uri?: string | null;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * Audio provided to or from an LLM.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AudioContent".
 */
export interface AudioContent {
  /**
   * Optional annotations that help clients decide how to display or route this content.
   */
  annotations?: Annotations | null;
  /**
   * Base64-encoded media payload.
   */
  data: string;
  /**
   * MIME type describing the encoded media payload.
   */
  mimeType: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * A resource that the server is capable of reading, included in a prompt or tool call result.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ResourceLink".
 */
export interface ResourceLink {
  /**
   * Optional annotations that help clients decide how to display or route this content.
   */
  annotations?: Annotations | null;
  /**
   * Optional human-readable details shown with this protocol object.
   */
  description?: string | null;
  /**
   * MIME type describing the encoded media payload.
   */
  mimeType?: string | null;
  /**
   * Human-readable name shown for this protocol object.
   */
  name: string;
  /**
   * Optional size of the linked resource in bytes, if known.
   */
  size?: number | null;
  /**
   * Optional display title for end-user UI.
   */
  title?: string | null;
  /**
   * URI associated with this resource or media payload.
   */
  uri: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * The contents of a resource, embedded into a prompt or tool call result.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "EmbeddedResource".
 */
export interface EmbeddedResource {
  /**
   * Optional annotations that help clients decide how to display or route this content.
   */
  annotations?: Annotations | null;
  /**
   * Embedded resource payload, either text or binary data.
   */
  resource: TextResourceContents | BlobResourceContents;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * Text resource contents embedded directly in the message.
 */
export interface TextResourceContents {
  /**
   * MIME type describing the encoded media payload.
   */
  mimeType?: string | null;
  /**
   * Text payload carried by this content block.
   */
  text: string;
  /**
   * URI associated with this resource or media payload.
   */
  uri: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * Binary resource contents embedded directly in the message.
 */
export interface BlobResourceContents {
  /**
   * Base64-encoded bytes for a binary resource payload.
   */
  blob: string;
  /**
   * MIME type describing the encoded media payload.
   */
  mimeType?: string | null;
  /**
   * URI associated with this resource or media payload.
   */
  uri: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * One `tool-call` event: the call's announcement or an update of it (`isUpdate`).
 *
 * # The merge rule
 *
 * A tool call is shown as its events merged in order, by [`ToolCallEvent::merge`]. The engine's
 * thread, the compactor (a snapshot holds each call once, merged) and the UI's session store
 * (`ui/src/lib/session-store.ts`, which applies the same rule and is tested against snapshots
 * this compactor made) all merge this way, so a view that attaches late shows each card as a
 * live one does. A later event's field replaces the merged one when it carries something:
 *
 * - `toolName`: when not `""` (an update without a title keeps the title);
 * - `arguments`: when it carries input: not `null` and not `{}` (claude-code-acp announces a
 *   call with `rawInput: {}` before its input streams; an empty object never hides an input
 *   already shown);
 * - `toolKind`, `status`, `rawOutput`, `_meta`: when present (and not `null`);
 * - `content`, `locations`: when present, the whole list (ACP sends them whole, not as deltas);
 * - `sessionId`, `toolCallId` and the first event's `isUpdate` stay.
 *
 * `tool-result` is not part of the merge: it repeats, once, what the call's `tool-call` events
 * carried when it finished (for consumers that want only results); a view takes nothing from it.
 * A consumer that does not keep `_meta` (the UI's cards) merges every other field alike.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ToolCallEvent".
 */
export interface ToolCallEvent {
  sessionId: string;
  toolCallId: string;
  /**
   * The title; `""` when the update carried none.
   */
  toolName: string;
  /**
   * The raw input; `null` when the update carried none. Any JSON value (an object for every
   * agent we know). See [`ToolCallEvent::input`].
   */
  arguments: unknown;
  isUpdate: boolean;
  toolKind?: ToolKind | null;
  status?: ToolCallStatus | null;
  /**
   * Replaces the previous list when present.
   */
  content?: ToolCallContent[] | null;
  /**
   * Replaces the previous list when present.
   */
  locations?: ToolCallLocation[] | null;
  rawOutput?: unknown;
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * Standard content block (text, images, resources).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "Content".
 */
export interface Content {
  /**
   * Content blocks represent displayable information in the Agent Client Protocol.
   *
   * Content blocks appear in:
   * - User prompts sent via `session/prompt`
   * - Language model output streamed through `session/update` notifications
   * - Progress updates and results from tool calls
   *
   * This structure is compatible with the Model Context Protocol (MCP), so agents can
   * forward content from MCP tool outputs without transformation.
   *
   * See protocol docs: [Content](https://agentclientprotocol.com/protocol/v1/content)
   */
  content:
    | (TextContent & {
        type: 'text';
      })
    | (ImageContent & {
        type: 'image';
      })
    | (AudioContent & {
        type: 'audio';
      })
    | (ResourceLink & {
        type: 'resource_link';
      })
    | (EmbeddedResource & {
        type: 'resource';
      });
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * A diff representing file modifications.
 *
 * Shows changes to files in a format suitable for display in the client UI.
 *
 * See protocol docs: [Content](https://agentclientprotocol.com/protocol/v1/tool-calls#content)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "Diff".
 */
export interface Diff {
  /**
   * The absolute file path being modified.
   */
  path: string;
  /**
   * The original content (omitted or `null` for new files).
   */
  oldText?: string | null;
  /**
   * The new content after modification.
   */
  newText: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * Embed a terminal created with `terminal/create` by its id.
 *
 * The terminal MUST be added before calling `terminal/release`.
 *
 * See protocol docs: [Terminal](https://agentclientprotocol.com/protocol/v1/terminals)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "Terminal".
 */
export interface Terminal {
  /**
   * Identifier of the terminal instance to embed in the content stream.
   */
  terminalId: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * A display-only reference to another session that this tool call operates on,
 * such as a subagent it created, delegated to, or is waiting on.
 *
 * The referenced session must already be known to the Client through ordinary
 * session setup or a `subagent_update` announcement. The reference does not
 * establish ownership, grant any Client-initiated controls, or report that the
 * referenced session received or finished any work.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionReference".
 */
export interface SessionReference {
  /**
   * The referenced session.
   */
  sessionId: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * A file location being accessed or modified by a tool.
 *
 * Enables clients to implement "follow-along" features that track
 * which files the agent is working with in real-time.
 *
 * See protocol docs: [Following the Agent](https://agentclientprotocol.com/protocol/v1/tool-calls#following-the-agent)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ToolCallLocation".
 */
export interface ToolCallLocation {
  /**
   * The absolute file path being accessed or modified.
   */
  path: string;
  /**
   * Optional 1-based line number within the file.
   */
  line?: number | null;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AgentPromptEvent".
 */
export interface AgentPromptEvent {
  sessionId: string;
  /**
   * The permission request's id (not the ACP tool call's: that is `targetToolCallId`): the
   * ACP tool call id plus a per-session counter, unique even when an agent asks twice about
   * one call. Pass it back to `respond_permission`. The seed names this wire field
   * `toolCallId`, a contract, so it keeps that name.
   */
  toolCallId: string;
  options: PermissionOption[];
  text?: string | null;
  toolName?: string | null;
  rawInput?: unknown;
  _meta?: {
    [k: string]: unknown;
  } | null;
  /**
   * The ACP tool call this request is about.
   */
  targetToolCallId: string;
  toolKind?: ToolKind | null;
  content?: ToolCallContent[] | null;
  locations?: ToolCallLocation[] | null;
}
/**
 * An option presented to the user when requesting permission.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PermissionOption".
 */
export interface PermissionOption {
  /**
   * Unique identifier for this permission option.
   */
  optionId: string;
  /**
   * Human-readable label to display to the user.
   */
  name: string;
  /**
   * Hint about the nature of this permission option.
   */
  kind: 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ErrorInfo".
 */
export interface ErrorInfo {
  code?: number | null;
  message: string;
  data?: unknown;
  /**
   * What kind of error it is ([`crate::error_kind`], the one classification): front ends
   * match this, never `message`. Always set by the engine and the app; absent in events
   * from before the field existed.
   */
  kind?: ErrorKind | null;
  /**
   * How the agent's process ended, when this error says it did (kind `agent-exited`, or a
   * start that failed because it exited).
   */
  exit?: AgentExit | null;
}
/**
 * How an agent's process ended, for the dead session's card: its exit code or the signal that
 * killed it, and the last lines of its stderr (shown to the user in the session; never logged
 * above `debug`, rule 24).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AgentExit".
 */
export interface AgentExit {
  /**
   * Its exit code, when it exited.
   */
  code?: number | null;
  /**
   * The signal that ended it, when one did.
   */
  signal?: number | null;
  /**
   * The last lines it wrote to stderr, oldest first (at most `process::STDERR_TAIL_LINES`,
   * each cut at `process::STDERR_LINE_MAX` bytes).
   */
  stderrTail?: string[];
}
/**
 * A single entry in the execution plan.
 *
 * Represents a task or goal that the assistant intends to accomplish
 * as part of fulfilling the user's request.
 * See protocol docs: [Plan Entries](https://agentclientprotocol.com/protocol/v1/agent-plan#plan-entries)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PlanEntry".
 */
export interface PlanEntry {
  /**
   * Human-readable description of what this task aims to accomplish.
   */
  content: string;
  /**
   * The relative importance of this task.
   * Used to indicate which tasks are most critical to the overall goal.
   */
  priority: 'high' | 'medium' | 'low';
  /**
   * Current execution status of this task.
   */
  status: 'pending' | 'in_progress' | 'completed';
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * Cost information for a session.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "Cost".
 */
export interface Cost {
  /**
   * Total cumulative cost for session.
   */
  amount: number;
  /**
   * Unit of `amount`: an ISO 4217 currency code (e.g., "USD", "EUR") for money, or another
   * unit such as "credits".
   */
  currency: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * Files changed, lines added and removed.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ChangeSummary".
 */
export interface ChangeSummary {
  files: number;
  added: number;
  removed: number;
}
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "BackgroundTaskInfo".
 */
export interface BackgroundTaskInfo {
  taskId: string;
  taskKind?: string | null;
  description?: string | null;
  outputFile?: string | null;
  status?: BackgroundTaskStatus | null;
  summary?: string | null;
  toolCallId?: string | null;
  /**
   * A short name for the task, when the agent gives one.
   */
  name?: string | null;
  /**
   * The agent says the task can be stopped (`SessionHandle::stop_background_task`).
   */
  canStop?: boolean | null;
  /**
   * Who settled it: absent until it is settled.
   */
  settledBy?: TaskSettledBy | null;
}
/**
 * An `elicitation` event: what the agent asks, as front ends draw it.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ElicitationEvent".
 */
export interface ElicitationEvent {
  sessionId: string;
  /**
   * Ours (`e1`, `e2`, ...): what `SessionHandle::answer_elicitation` takes.
   */
  requestId: string;
  mode: ElicitationModeKind;
  message: string;
  /**
   * The tool call the agent tied the question to, when it did.
   */
  toolCallId?: string | null;
  title?: string | null;
  description?: string | null;
  /**
   * Form mode: the fields, in the order the agent wrote them.
   */
  fields?: ElicitationField[] | null;
  /**
   * URL mode: the page the agent wants opened, and its host (shown before it is opened).
   */
  url?: string | null;
  host?: string | null;
}
/**
 * One field of a form elicitation, as front ends draw it.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ElicitationField".
 */
export interface ElicitationField {
  /**
   * The property's key: what the answer's `content` is keyed by.
   */
  name: string;
  type: FieldType;
  required: boolean;
  title?: string | null;
  description?: string | null;
  format?: FieldFormat | null;
  minLength?: number | null;
  maxLength?: number | null;
  /**
   * A regular expression the whole value must match (ECMA-262 in the schema; checked with
   * Rust's `regex`, which lacks look-around and back references: such a pattern is not
   * checked, and `note` says so).
   */
  pattern?: string | null;
  minimum?: number | null;
  maximum?: number | null;
  minItems?: number | null;
  maxItems?: number | null;
  /**
   * Select and multi-select: the choices, in the agent's order.
   */
  options?: FieldOption[] | null;
  /**
   * The agent's default, to prefill: text, a number, a boolean or a list of choices.
   */
  default?: string | number | boolean | string[] | null;
  /**
   * Why part of the field cannot be asked or checked, for the user.
   */
  note?: string | null;
}
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FieldOption".
 */
export interface FieldOption {
  value: string;
  title: string;
  description?: string | null;
}
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CommandInfo".
 */
export interface CommandInfo {
  name: string;
  description?: string | null;
  /**
   * `null` when the command takes no input, as the seed allows.
   */
  input?: CommandInput | null;
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CommandInput".
 */
export interface CommandInput {
  hint?: string | null;
}
/**
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AgentIdentity".
 */
export interface AgentIdentity {
  /**
   * Our name for the agent (`demo`, `claude`, or the command).
   */
  launchName: string;
  name?: string | null;
  title?: string | null;
  version?: string | null;
  /**
   * The agent's own session id (ours is `sessionId`).
   */
  acpSessionId?: string | null;
  /**
   * What the agent accepts in a prompt besides text (its `initialize` answer): front ends
   * offer images and embedded files only when it says so. Absent until `initialize` answers.
   */
  promptCapabilities?: PromptCapabilities | null;
  /**
   * Which session methods the agent advertised in its `initialize` answer: what the history
   * can offer for a stored session (continue it, find the agent's own sessions, close or
   * delete it at the agent too). Absent until `initialize` answers.
   */
  sessionMethods?: SessionMethods | null;
  /**
   * How the user can sign in to the agent (its `authMethods`, classified by
   * [`crate::auth::classify`]), for the sign-in actions. Absent until `initialize` answers;
   * empty when it asks for none.
   */
  authMethods?: AuthAction[] | null;
}
/**
 * Prompt capabilities supported by the agent in `session/prompt` requests.
 *
 * Baseline agent functionality requires support for `text`
 * and `resource_link` content blocks in prompt requests.
 *
 * Other variants must be explicitly opted in to.
 * Capabilities for different types of content in prompt requests.
 *
 * Indicates which content types beyond the baseline (text and resource links)
 * the agent can process.
 *
 * See protocol docs: [Prompt Capabilities](https://agentclientprotocol.com/protocol/v1/initialization#prompt-capabilities)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PromptCapabilities".
 */
export interface PromptCapabilities {
  /**
   * Agent supports `image` content blocks.
   */
  image?: boolean;
  /**
   * Agent supports `audio` content blocks.
   */
  audio?: boolean;
  /**
   * Agent supports embedded context in `session/prompt` requests.
   *
   * When enabled, the Client is allowed to include `resource` content blocks
   * in prompt requests for pieces of context that are referenced in the message.
   */
  embeddedContext?: boolean;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * The session methods an agent advertised (`initialize`): `session/load` from
 * `agentCapabilities.loadSession`, the others from `agentCapabilities.sessionCapabilities`.
 * Each is `true` only when advertised; a method ACP adds later is absent here until mapped.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionMethods".
 */
export interface SessionMethods {
  /**
   * `session/load`: the agent replays the stored conversation, then continues it.
   */
  load?: boolean;
  /**
   * `session/resume`: the agent continues the conversation without replaying it.
   */
  resume?: boolean;
  /**
   * `session/list`: the agent lists its own sessions.
   */
  list?: boolean;
  /**
   * `session/close`.
   */
  close?: boolean;
  /**
   * `session/delete`: the agent forgets a session it listed.
   */
  delete?: boolean;
}
/**
 * One way to sign in to the agent, as offered to the user.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AuthAction".
 */
export interface AuthAction {
  /**
   * The agent's `methodId`.
   */
  methodId: string;
  /**
   * The agent's name for it ("Log in with Claude Code").
   */
  name: string;
  description?: string | null;
  how: AuthHow;
}
/**
 * A mode the agent can operate in.
 *
 * See protocol docs: [Session Modes](https://agentclientprotocol.com/protocol/v1/session-modes)
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionMode".
 */
export interface SessionMode {
  /**
   * Stable identifier used to refer to this protocol object in later messages.
   */
  id: string;
  /**
   * Human-readable name shown for this protocol object.
   */
  name: string;
  /**
   * Optional human-readable details shown with this protocol object.
   */
  description?: string | null;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * A single-value selector (dropdown) session configuration option payload.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigSelect".
 */
export interface SessionConfigSelect {
  /**
   * The currently selected value.
   */
  currentValue: string;
  /**
   * The set of selectable options.
   */
  options: SessionConfigSelectOption[] | SessionConfigSelectGroup[];
}
/**
 * A possible value for a session configuration option.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigSelectOption".
 */
export interface SessionConfigSelectOption {
  /**
   * Unique identifier for this option value.
   */
  value: string;
  /**
   * Human-readable label for this option value.
   */
  name: string;
  /**
   * Optional description for this option value.
   */
  description?: string | null;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * A group of possible values for a session configuration option.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigSelectGroup".
 */
export interface SessionConfigSelectGroup {
  /**
   * Unique identifier for this group.
   */
  group: string;
  /**
   * Human-readable label for this group.
   */
  name: string;
  /**
   * The set of option values in this group.
   */
  options: SessionConfigSelectOption[];
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * A boolean on/off toggle session configuration option payload.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SessionConfigBoolean".
 */
export interface SessionConfigBoolean {
  /**
   * The current value of the boolean option.
   */
  currentValue: boolean;
}
/**
 * Exit status of a terminal command.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "TerminalExitStatus".
 */
export interface TerminalExitStatus {
  /**
   * The process exit code (may be null if terminated by signal).
   */
  exitCode?: number | null;
  /**
   * The signal that terminated the process (may be null if exited normally).
   */
  signal?: string | null;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * One configured server as the `mcp-servers` event reports it: whether the agent got it,
 * and if not, why. Names, commands and URLs as shown ([`shown_url`]); never a value of an
 * env variable, a header or a secret.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "McpServerReport".
 */
export interface McpServerReport {
  name: string;
  transport: McpTransportKind;
  source: McpSourceKind;
  /**
   * The manifest's name, or the project's config file.
   */
  sourceDetail?: string | null;
  /**
   * stdio: the command as written (no arguments); http and sse: the URL as shown.
   */
  target: string;
  /**
   * The agent got it (in `session/new`, `session/load` or `session/resume`).
   */
  passed: boolean;
  /**
   * Why it was skipped, said for a person, with what to do.
   */
  reason?: string | null;
  /**
   * The keychain entry its headers come from (http and sse), by name.
   */
  credential?: string | null;
  /**
   * What else to know (a `credentialRef` ignored on a stdio server, headers replaced).
   */
  notes?: string[];
}
/**
 * How a turn ended (the same as its `turn-end` event).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "TurnEnd".
 */
export interface TurnEnd {
  reason: TurnEndReason;
  stopReason?: StopReason | null;
}
/**
 * A field the answer got wrong, and why (for people).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FieldError".
 */
export interface FieldError {
  field: string;
  message: string;
}
/**
 * Paths dropped on the window (Tauri's native drag-drop), with where they landed (CSS
 * pixels), so the UI can route them: a folder on the window opens it; files on the composer
 * (later) attach them.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "PathsDropped".
 */
export interface PathsDropped {
  paths: string[];
  x: number;
  y: number;
}
/**
 * A drag over the window started (`true`) or left (`false`).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "DragHover".
 */
export interface DragHover {
  active: boolean;
}
/**
 * A folder to open: picked with File → Open Folder or File → Open Recent, or given to a
 * second launch of the app.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FolderChosen".
 */
export interface FolderChosen {
  path: string;
  /**
   * The agent to open it with (Open Recent: the one last used there; a second launch's
   * `--agent`); absent: the window's choice for new sessions.
   */
  agent?: string | null;
}
/**
 * A notification (its body or Show) or a tray item asked to show a session: the window
 * selects it, so the dialog of its waiting request shows.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ShowRequest".
 */
export interface ShowRequest {
  /**
   * The session's registry id (`SessionInfo.id`).
   */
  session: string;
  /**
   * The permission request the notification or item was about (none for a turn's end).
   */
  requestId?: string | null;
}
/**
 * Something about the desktop the window says once, as a dismissible banner.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "DesktopNotice".
 */
export interface DesktopNotice {
  /**
   * What happened and what it means for the user.
   */
  message: string;
}
/**
 * The project's files for the `@` picker (gitignore honoured), relative and `/`-separated.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ProjectFiles".
 */
export interface ProjectFiles {
  files: string[];
  /**
   * More files exist than were listed (the listing is capped).
   */
  truncated: boolean;
}
/**
 * Whether the window's sessions are recorded, and what the user must hear about it.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "HistoryStatus".
 */
export interface HistoryStatus {
  /**
   * This window's sessions are being recorded.
   */
  recording: boolean;
  /**
   * The file is a newer ACP Desk's: it is read, never written.
   */
  readOnly: boolean;
  /**
   * The history file.
   */
  file: string;
  /**
   * Every notice so far, oldest first.
   */
  notices: HistoryNotice[];
}
/**
 * Something about the history the user must hear (shown as a banner).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "HistoryNotice".
 */
export interface HistoryNotice {
  /**
   * `true`: history is off for this run (nothing new is recorded).
   */
  off: boolean;
  /**
   * What happened, naming the file, and what to do.
   */
  message: string;
}
/**
 * A stored session as the History view lists it.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "HistorySession".
 */
export interface HistorySession {
  /**
   * ACP Desk's id for the session (what `history-events`, delete and export take).
   */
  id: string;
  /**
   * The agent's launch name (`demo`, `claude`, a settings name).
   */
  agent: string;
  folder: string;
  /**
   * The agent's title, else the first prompt's first line.
   */
  title?: string | null;
  /**
   * Milliseconds since 1970.
   */
  createdMs: number;
  updatedMs: number;
  /**
   * The last `session-status` (`ready`, `prompting`, `dead`, ...).
   */
  status: string;
  statusDetail?: string | null;
  /**
   * The agent as it described itself, with what it advertised (load, resume, embedded
   * context); `None` when it never answered `initialize`.
   */
  agentIdentity?: AgentIdentity | null;
  /**
   * Stored rows (merged events).
   */
  rows: number;
  /**
   * Being recorded right now by this window (it is open in the sidebar).
   */
  open: boolean;
}
/**
 * A search hit: a stored row of a session, with the text around the match.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "HistoryHit".
 */
export interface HistoryHit {
  sessionId: string;
  /**
   * The row's place in the session: `HistoryEvents::seqs` holds it, so the view can scroll
   * to the entry this row made.
   */
  seq: number;
  /**
   * The row's event kind (`text-delta`, `turn-start`, `tool-call`, ...).
   */
  kind: string;
  /**
   * The snippet, split at the matches (on one line; `…` where it was cut).
   */
  snippet: SnippetPart[];
  title?: string | null;
  agent: string;
  folder: string;
  updatedMs: number;
}
/**
 * One piece of a hit's snippet: `hit` pieces are the matched words.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SnippetPart".
 */
export interface SnippetPart {
  text: string;
  hit: boolean;
}
/**
 * A stored session's transcript: its rows as StreamEvents (what the session store applies as
 * a snapshot), with each one's row number.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "HistoryEvents".
 */
export interface HistoryEvents {
  session: HistorySession;
  /**
   * `seqs[i]` is the row `events[i]` was stored as.
   */
  seqs: number[];
  events: StreamEvent[];
  /**
   * Rows this build could not read (a newer ACP Desk's events), left out.
   */
  unreadable: number;
}
/**
 * A session the agent itself keeps (`session/list`), for "Show <agent>'s own sessions here".
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AgentSession".
 */
export interface AgentSession {
  /**
   * The agent's id for it (what `history_import` takes).
   */
  acpSessionId: string;
  title?: string | null;
  /**
   * When the agent last changed it (ISO 8601, as the agent says it).
   */
  updatedAt?: string | null;
}
/**
 * What `restored_sessions` gives the window at its start: the sidebar as the last run left it.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "RestoredSidebar".
 */
export interface RestoredSidebar {
  /**
   * In sidebar order, each with its stored transcript and draft.
   */
  sessions: RestoredSession[];
  /**
   * The index of the one that was shown.
   */
  shown?: number | null;
  /**
   * The settings file's `restored_sessions_start` is `at_once`: start every agent now,
   * rather than when the user returns to its session.
   */
  startAtOnce: boolean;
}
/**
 * One session the window had open, as it comes back.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "RestoredSession".
 */
export interface RestoredSession {
  /**
   * Its id in the history (ACP Desk's session id); `None` for one never recorded (its agent
   * never started): it comes back without a transcript.
   */
  sessionId?: string | null;
  folder: string;
  /**
   * The agent's launch name, to start it again with.
   */
  agent: string;
  /**
   * Its title in the history (the agent's, else the first prompt's first line).
   */
  title?: string | null;
  /**
   * The unsent text of its composer ("" for none).
   */
  draft: string;
  /**
   * Its stored transcript, as a snapshot holds it.
   */
  events: StreamEvent[];
  /**
   * Why it cannot continue in its folder (gone, a file, unreadable), naming the folder.
   */
  folderProblem?: string | null;
  /**
   * Why its transcript or draft could not be read from the history.
   */
  historyProblem?: string | null;
}
/**
 * One session of the sidebar, as `set_open_sessions` saves it.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "OpenSessionEntry".
 */
export interface OpenSessionEntry {
  /**
   * Its history id (`null` until its agent said it, or if it never started).
   */
  sessionId?: string | null;
  folder: string;
  agent: string;
}
/**
 * Every agent a front end can offer, and which one to preselect.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AgentListing".
 */
export interface AgentListing {
  /**
   * The demo agent first, then the settings entries in the file's order, then manifests,
   * then the built-ins, then the registry.
   */
  agents: AgentEntry[];
  /**
   * For new sessions when the window has no last choice ([`default_for_new_sessions`]).
   */
  defaultAgent: string;
  /**
   * Why that one, in words ("default_agent in settings", "first agent_servers entry", ...).
   */
  defaultReason: string;
  settingsFile: string;
  /**
   * Every problem of every source (settings, manifests, registry), to show where the user
   * looks; an agent's own problems are also in its entry.
   */
  problems: ConfigProblem[];
  /**
   * The registry in use (the snapshot, or an imported file).
   */
  registry?: RegistryInfo | null;
}
/**
 * One agent a front end can offer. Env VALUES are never here (they may be secrets): names only.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AgentEntry".
 */
export interface AgentEntry {
  /**
   * The name `--agent` and [`resolve_in`] take.
   */
  id: string;
  /**
   * For display.
   */
  name: string;
  description?: string | null;
  version?: string | null;
  /**
   * The source [`resolve_in`] uses for this id.
   */
  source: 'builtin' | 'registry' | 'settings' | 'manifest';
  /**
   * Other sources that define the same id (the listing shows one entry per id).
   */
  alsoDefinedIn: AgentSource[];
  /**
   * The settings or manifest file, or `ACP registry snapshot <date> (<commit>)`.
   */
  origin?: string | null;
  /**
   * The command line, for display (program and arguments).
   */
  command: string;
  /**
   * The names of the variables its launch sets (never their values); one whose value is a
   * keychain secret as `NAME={secret: REF}` ([`LaunchSpec::env_shown`]).
   */
  envNames: string[];
  status: AgentStatus;
  /**
   * What to do to make it work, or what to expect on first use.
   */
  hint?: string | null;
  /**
   * A command to copy that installs it.
   */
  installCommand?: string | null;
  /**
   * A registry binary ACP Desk can download and install (the Install button).
   */
  installable: boolean;
  manifestFile?: string | null;
  /**
   * What is wrong with its definition (errors make it `invalid`; warnings do not).
   */
  problems: ConfigProblem[];
}
/**
 * One problem in one file. `Display`: `FILE:LINE:COLUMN: FIELD: MESSAGE` (the parts that are
 * known), the shape editors and terminals turn into links.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ConfigProblem".
 */
export interface ConfigProblem {
  /**
   * The file, as a path the user can open.
   */
  file: string;
  /**
   * 1-based line, when known.
   */
  line?: number | null;
  /**
   * 1-based column, when known.
   */
  column?: number | null;
  /**
   * The field, as a dotted path from the top of the file (`agent_servers.mine.args`).
   */
  field?: string | null;
  /**
   * What is wrong and what to do, in one sentence or two.
   */
  message: string;
  /**
   * Whether what the problem concerns was still used (`warning`) or skipped (`error`).
   */
  severity: 'error' | 'warning';
}
/**
 * A summary of the registry in use, for the listing (no launch details in it).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "RegistryInfo".
 */
export interface RegistryInfo {
  kind: RegistrySourceKind;
  /**
   * What to show: "ACP registry snapshot 2026-02-07 (3de1678)", "ACP registry imported
   * from FILE on DATE".
   */
  label: string;
  /**
   * The snapshot's commit of `agentclientprotocol/registry`.
   */
  commit?: string | null;
  /**
   * The snapshot's date (`YYYY-MM-DD`).
   */
  date?: string | null;
  /**
   * The imported file (where it was imported from).
   */
  file?: string | null;
  /**
   * When it was imported (RFC 3339).
   */
  importedAt?: string | null;
  /**
   * How many agents it lists that ACP Desk can use.
   */
  agents: number;
}
/**
 * What Check found. `ok`: the agent started and answered `initialize` in a protocol version
 * ACP Desk speaks; otherwise `failure` says why.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CheckReport".
 */
export interface CheckReport {
  /**
   * The agent as it was asked for (its launch name: `demo`, a settings name, the command).
   */
  agent: string;
  ok: boolean;
  /**
   * The steps taken, in order (`start`, `initialize`); a failed step is the last.
   */
  steps: CheckStep[];
  /**
   * `agentInfo.name` of its `initialize` answer.
   */
  agentName?: string | null;
  /**
   * `agentInfo.title`.
   */
  agentTitle?: string | null;
  /**
   * `agentInfo.version`.
   */
  agentVersion?: string | null;
  /**
   * The protocol version it answered with (ACP Desk speaks 1).
   */
  protocolVersion?: number | null;
  /**
   * `agentCapabilities` exactly as the agent sent them.
   */
  capabilities?: {
    [k: string]: unknown;
  };
  /**
   * `authMethods`: how the agent lets users sign in.
   */
  authMethods: AuthMethodInfo[];
  failure?: CheckFailure | null;
  /**
   * Between the capabilities its manifest declares and those it reported (a manifest agent;
   * filled by the caller that knows the manifest, `resolve::check_agent`).
   */
  differences: CapabilityDifference[];
  /**
   * What worked but is worth fixing (it printed non-JSON text on stdout, which sessions skip).
   */
  warnings: string[];
}
/**
 * One step of a Check and how long it took.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CheckStep".
 */
export interface CheckStep {
  /**
   * `start` (starting the process) or `initialize` (from sending it to the answer, or to
   * the failure).
   */
  name: string;
  millis: number;
  ok: boolean;
}
/**
 * One of the agent's `authMethods`.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "AuthMethodInfo".
 */
export interface AuthMethodInfo {
  id: string;
  name: string;
  description?: string | null;
  /**
   * How an [`AuthAction`] is carried out. The env maps are what the agent sent (never a secret
   * of the user's: those stay in the launch's env, read at spawn time).
   */
  how:
    | {
        via: 'terminal';
        args?: string[];
        env?: {
          [k: string]: string;
        };
      }
    | {
        via: 'terminal-command';
        command: string;
        args?: string[];
        env?: {
          [k: string]: string;
        };
        /**
         * The agent's label for it ("Claude Code Login").
         */
        label?: string | null;
      }
    | {
        via: 'api-key';
        /**
         * `_meta["api-key"].provider` ("google"), when the agent named one.
         */
        provider?: string | null;
      }
    | {
        via: 'agent';
      };
}
/**
 * Why a Check failed, and what to do about it.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CheckFailure".
 */
export interface CheckFailure {
  kind: CheckFailureKind;
  /**
   * What happened, with what the agent printed when it matters (its first non-JSON line,
   * its last stderr lines).
   */
  message: string;
  /**
   * What to do.
   */
  fix: string;
}
/**
 * A difference between the capabilities an agent's manifest declares and what its
 * `initialize` answer reports. Paths use the wire's camelCase names under the seed's
 * `AcpCapabilities` (`agent.loadSession`, `agent.promptCapabilities.image`).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CapabilityDifference".
 */
export interface CapabilityDifference {
  path: string;
  /**
   * What the manifest says; `None`: it does not say.
   */
  declared?: {
    [k: string]: unknown;
  };
  /**
   * What `initialize` reported; `None`: it did not say (false by the protocol's defaults).
   */
  reported?: {
    [k: string]: unknown;
  };
}
/**
 * What an install is doing, for a progress bar.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "InstallProgress".
 */
export interface InstallProgress {
  /**
   * The registry id of the agent being installed.
   */
  agent: string;
  phase: InstallPhase;
  /**
   * Bytes of the archive downloaded so far.
   */
  downloaded: number;
  /**
   * The archive's size, when the server said it.
   */
  total?: number | null;
}
/**
 * What importing a registry file did.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "RegistryImported".
 */
export interface RegistryImported {
  registry: RegistryInfo1;
  /**
   * Its entries that cannot be used (they are left out; the others are listed).
   */
  problems: ConfigProblem[];
  listing: AgentListing;
}
/**
 * A summary of the registry in use, for the listing (no launch details in it).
 */
export interface RegistryInfo1 {
  kind: RegistrySourceKind;
  /**
   * What to show: "ACP registry snapshot 2026-02-07 (3de1678)", "ACP registry imported
   * from FILE on DATE".
   */
  label: string;
  /**
   * The snapshot's commit of `agentclientprotocol/registry`.
   */
  commit?: string | null;
  /**
   * The snapshot's date (`YYYY-MM-DD`).
   */
  date?: string | null;
  /**
   * The imported file (where it was imported from).
   */
  file?: string | null;
  /**
   * When it was imported (RFC 3339).
   */
  importedAt?: string | null;
  /**
   * How many agents it lists that ACP Desk can use.
   */
  agents: number;
}
/**
 * What `secrets_list` answers: names and where they are used, never a value.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SecretsListing".
 */
export interface SecretsListing {
  /**
   * A keychain service answered. False: `problem` says why and what to do; `secrets` then
   * lists only the names in use, none stored.
   */
  available: boolean;
  problem?: string | null;
  /**
   * The settings file (where `{"secret": NAME}` and `credential_ref` are written).
   */
  settingsFile: string;
  /**
   * Sorted by name.
   */
  secrets: SecretEntry[];
}
/**
 * One secret name: stored in the keychain, used by the settings or a manifest, or both.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SecretEntry".
 */
export interface SecretEntry {
  name: string;
  /**
   * The keychain holds a value under it (false too when the keychain cannot be read).
   */
  stored: boolean;
  /**
   * Where the settings and manifests name it (`mcp_servers.github (credential_ref)`,
   * `agent_servers.claude.env.ANTHROPIC_API_KEY`: `secrets::uses`, as `acp-desk-cli secret
   * list` says it); empty: no one uses it (a leftover, or stored ahead of its use).
   */
  usedBy: string[];
}
/**
 * What `mcp_servers_list` answers.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "McpServersListing".
 */
export interface McpServersListing {
  settingsFile: string;
  /**
   * The settings' servers in file order, then each manifest's (manifests by name).
   */
  servers: McpServerRow[];
  /**
   * Problems of the settings' `mcp_servers` and the manifests' `mcp_servers` fields.
   */
  problems: ConfigProblem[];
  /**
   * The keychain could not be read (so `credentialStored` is absent): why, what to do.
   */
  keychainProblem?: string | null;
}
/**
 * One configured MCP server as the view shows it. No env or header values.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "McpServerRow".
 */
export interface McpServerRow {
  name: string;
  transport: McpTransportKind;
  source: McpSourceKind;
  /**
   * The manifest's name (source `manifest`).
   */
  sourceDetail?: string | null;
  /**
   * stdio: the command as written, without its arguments; http/sse: the URL without user
   * info, query or fragment.
   */
  target: string;
  /**
   * The agents that get it (the settings' `agents`); absent: every agent (settings), or the
   * manifest's own agent (`source_detail`).
   */
  agents?: string[] | null;
  /**
   * The keychain entry whose secret becomes its headers.
   */
  credential?: string | null;
  /**
   * Whether the keychain holds `credential`; absent when there is none or the keychain
   * cannot be read.
   */
  credentialStored?: boolean | null;
  /**
   * Env names and header names it is configured with (names only), and what is odd about
   * it, for a person.
   */
  notes: string[];
}
/**
 * What a folder's undecided config files would add to its sessions.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "ProjectMcpOffer".
 */
export interface ProjectMcpOffer {
  /**
   * The folder (canonical), as the decision must name it.
   */
  folder: string;
  files: OfferedFile[];
}
/**
 * One config file offered.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "OfferedFile".
 */
export interface OfferedFile {
  /**
   * Its name in the folder (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`): what a
   * decision names.
   */
  file: string;
  /**
   * The tool it was written for ("Claude Code", "Cursor", "VS Code").
   */
  tool: string;
  path: string;
  /**
   * SHA-256 (hex) of the bytes shown: a decision is on these.
   */
  digest: string;
  /**
   * The decision on an earlier version of the file, which no longer holds (the file
   * changed); `None`: never decided.
   */
  previous?: ProjectMcpChoice | null;
  /**
   * Every server listed, usable or not, in the file's order.
   */
  servers: OfferedServer[];
  /**
   * Problems not about a listed server (the file, a skipped entry, an unknown key).
   */
  problems: ConfigProblem[];
}
/**
 * One server as the user must see it before agreeing: everything it would run or call.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "OfferedServer".
 */
export interface OfferedServer {
  name: string;
  /**
   * `stdio`, `http` or `sse`.
   */
  transport: string;
  /**
   * stdio: the program and every argument, as the file writes them.
   */
  command?: string[] | null;
  /**
   * http and sse: the URL without user info, query or fragment ([`shown_url`]).
   */
  shownUrl?: string | null;
  /**
   * The URL has user info, a query or a fragment not shown (where tokens hide).
   */
  urlHasHiddenParts: boolean;
  /**
   * Environment variable names (stdio); values are never shown.
   */
  env: string[];
  /**
   * Header names (http, sse); values are never shown.
   */
  headers: string[];
  /**
   * Whether the server would be passed; false: held back, `problems` says why.
   */
  usable: boolean;
  problems: ConfigProblem[];
}
/**
 * What a sign-in command answers. Never holds a key.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "SignInAnswer".
 */
export interface SignInAnswer {
  /**
   * For a session: the session, restarting under the same id. Whether the sign-in worked
   * arrives as its events (`session-status ready`, or the error and `dead`).
   */
  session?: SessionInfo | null;
  /**
   * For a session: a prompt that hit the login will be sent once the agent is ready (a
   * notice in the thread says so when it is).
   */
  resendsPrompt: boolean;
  /**
   * What to tell the user ("Signed in to gemini (…)", "Signing in to demo…").
   */
  message: string;
  /**
   * Without a session: the sign-in actions the agent offered in this start (empty for a
   * session: its `session-status` carries them).
   */
  actions: AuthAction[];
}
/**
 * `login_start`'s answer.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "LoginStarted".
 */
export interface LoginStarted {
  /**
   * For `login_input`, `login_resize`, `login_cancel`.
   */
  loginId: string;
  /**
   * For people: the agent's label for the login, else the method's name.
   */
  label: string;
  /**
   * The program and its arguments as run (secret-looking arguments redacted), never an env
   * value.
   */
  commandShown: string;
}
/**
 * A session's steps and the space its folder's checkpoints take.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "CheckpointListing".
 */
export interface CheckpointListing {
  folder: string;
  steps: StepInfo[];
  storage: Storage;
  /**
   * Undos of this session cut short (ACP Desk stopped while they wrote files) and put back
   * since, not yet followed by a step.
   */
  interrupted: InterruptedUndo[];
}
/**
 * One step of a session, as `changes` lists them.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "StepInfo".
 */
export interface StepInfo {
  /**
   * The step's number (what `--turn N` takes).
   */
  turn: number;
  kind: StepKind;
  /**
   * For a revert: the step it undid; for a restore: the step the folder went back to before.
   */
  undoes?: number | null;
  /**
   * When its first checkpoint was taken (RFC 3339, UTC).
   */
  at: string;
  /**
   * The step ended and its `after` checkpoint exists; until then it cannot be reviewed or
   * undone (a turn still running, or one whose end was never checkpointed).
   */
  complete: boolean;
  /**
   * What it changed (complete steps).
   */
  summary?: ChangeSummary | null;
  /**
   * Later steps that undid this one (reverts of it).
   */
  undoneBy?: number[];
  /**
   * What the checkpoints left out or could not do (large or unreadable files, submodules).
   */
  notes?: string[];
}
/**
 * The space a folder's checkpoints take.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "Storage".
 */
export interface Storage {
  bytes: number;
  budgetBytes: number;
  maxAgeDays: number;
  steps: number;
  sessions: number;
}
/**
 * An undo (or restore) that was cut short (ACP Desk stopped while it wrote files) and whose
 * files were put back as they were before it, when the checkpoints were next opened.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "InterruptedUndo".
 */
export interface InterruptedUndo {
  /**
   * When its files were put back (RFC 3339, UTC).
   */
  at: string;
  /**
   * Its step, dropped since: it changed nothing.
   */
  step: number;
  kind: StepKind;
  /**
   * The step it was undoing (a revert) or restoring the folder to before (a restore).
   */
  undoes?: number | null;
  /**
   * The files it was writing.
   */
  files: string[];
  /**
   * What could not be put back, in words (a file of the user's kept in the staging folder
   * because another file is where it was): empty when every file is as before the undo.
   */
  stranded?: string[];
}
/**
 * What a step (or the whole session) changed.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "Changes".
 */
export interface Changes {
  /**
   * The step; absent for the session's changes since it started.
   */
  turn?: number | null;
  files: FileChange[];
  summary: ChangeSummary;
  /**
   * Ignored files the agent changed behind our back (not through `fs/write_text_file`): not
   * in any checkpoint, so they cannot be restored.
   */
  unrestorable?: string[];
  notes?: string[];
}
/**
 * One file a step changed.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FileChange".
 */
export interface FileChange {
  /**
   * Relative to the project folder, `/`-separated.
   */
  path: string;
  /**
   * Where a renamed file was.
   */
  oldPath?: string | null;
  status: FileStatus;
  /**
   * Lines added and removed; absent for binary files.
   */
  added?: number | null;
  removed?: number | null;
  binary: boolean;
  /**
   * A submodule's folder (its commit changed): listed, never entered or restored.
   */
  submodule?: boolean;
  /**
   * Only the mode bits changed.
   */
  modeOnly?: boolean;
}
/**
 * A file before a step, after it, and now (absent: no such file then).
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FileVersions".
 */
export interface FileVersions {
  path: string;
  before?: FileVersion | null;
  after?: FileVersion | null;
  now?: FileVersion | null;
}
/**
 * One version of a file, for the review's diff and the conflict view.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "FileVersion".
 */
export interface FileVersion {
  /**
   * The text; absent when the file is binary or larger than [`MAX_TEXT_BYTES`].
   */
  text?: string | null;
  bytes: number;
  binary: boolean;
  executable?: boolean;
  /**
   * A symbolic link's target (then `text` is absent).
   */
  link?: string | null;
}
/**
 * A file a revert would overwrite although someone changed it after the step.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "RevertConflict".
 */
export interface RevertConflict {
  path: string;
  reason: ConflictReason;
}
/**
 * Text-based resource contents.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "TextResourceContents".
 */
export interface TextResourceContents1 {
  /**
   * MIME type describing the encoded media payload.
   */
  mimeType?: string | null;
  /**
   * Text payload carried by this content block.
   */
  text: string;
  /**
   * URI associated with this resource or media payload.
   */
  uri: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/**
 * Binary resource contents.
 *
 * This interface was referenced by `IpcTypes`'s JSON-Schema
 * via the `definition` "BlobResourceContents".
 */
export interface BlobResourceContents1 {
  /**
   * Base64-encoded bytes for a binary resource payload.
   */
  blob: string;
  /**
   * MIME type describing the encoded media payload.
   */
  mimeType?: string | null;
  /**
   * URI associated with this resource or media payload.
   */
  uri: string;
  /**
   * The _meta property is reserved by ACP to allow clients and agents to attach additional
   * metadata to their interactions. Implementations MUST NOT make assumptions about values at
   * these keys.
   *
   * See protocol docs: [Extensibility](https://agentclientprotocol.com/protocol/v1/extensibility)
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
}
/** Every command name (`CommandName`), in the order of the Rust list. */
export const COMMAND_NAMES = [
  'app_info',
  'open_session',
  'attach',
  'prompt',
  'cancel',
  'respond_permission',
  'elicitation_answer',
  'background_task_stop',
  'checkpoint_list',
  'checkpoint_changes',
  'checkpoint_file',
  'checkpoint_revert',
  'checkpoint_restore',
  'close_session',
  'reconnect_session',
  'pick_folder',
  'set_mode',
  'set_config_option',
  'list_files',
  'open_path',
  'reveal_path',
  'open_url',
  'open_settings_file',
  'history_status',
  'history_list',
  'history_search',
  'history_events',
  'history_delete',
  'history_export',
  'history_copy_id',
  'history_continue',
  'history_send_context',
  'history_agent_sessions',
  'history_import',
  'restored_sessions',
  'set_open_sessions',
  'save_draft',
  'continue_session',
  'agents_list',
  'agent_check',
  'agent_install',
  'agents_use_for_new_sessions',
  'agents_open_settings',
  'agents_open_manifest',
  'agents_import_registry',
  'agents_copy_install_command',
  'secrets_list',
  'secret_set',
  'secret_delete',
  'mcp_servers_list',
  'project_mcp_offer',
  'project_mcp_decide',
  'project_mcp_restart',
  'sign_in_agent',
  'sign_in_api_key',
  'agent_sign_in',
  'sign_in_keep_prompt',
  'login_start',
  'login_input',
  'login_resize',
  'login_cancel',
] as const satisfies readonly CommandName[];
