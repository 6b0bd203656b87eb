// One session's thread as the UI shows it, built from StreamEvents. Plain TypeScript: no Svelte,
// no Tauri, so tests drive it directly. The app controller applies each frame as it arrives
// (`applyQuietly`, so the merged view stays bounded while the window is hidden) and tells
// subscribers once per animation frame (`notify`); `applyAll` does both, for a batch at once.
import type {
  AgentExit,
  AgentIdentity,
  AgentPromptEvent,
  BackgroundTaskInfo,
  ChangeSummary,
  CommandInfo,
  ContentBlock,
  ContinuationOutcome,
  Cost,
  ElicitationEvent,
  ErrorKind,
  McpServerReport,
  NoticeSeverity,
  PlanEntry,
  SessionConfigOption,
  SessionMode,
  SessionState,
  StopReason,
  StreamEvent,
  StreamFrame,
  TerminalExitStatus,
  ToolCallContent,
  ToolCallLocation,
  ToolCallEvent,
  ToolCallStatus,
  ToolKind,
  TurnEndReason,
} from './generated/ipc';
import { optionWords } from './permission';
import { questionName } from './elicitation';
import { retryable } from './ended';

/** Something attached to a user message, shown as a chip. */
export interface Attachment {
  kind: 'file' | 'image' | 'resource' | 'audio';
  name: string;
  /** The file's URI or path, when it has one. */
  uri: string | null;
}

export interface ToolEntry {
  type: 'tool';
  key: number;
  toolCallId: string;
  title: string;
  kind: ToolKind | null;
  status: ToolCallStatus | null;
  /** Replaced whole when an update carries content (ACP: content is a full replacement). */
  content: ToolCallContent[];
  locations: ToolCallLocation[];
  rawInput: unknown;
  /** `undefined`: none yet. Codex puts command output here and leaves `content` empty. */
  rawOutput: unknown;
  /** The user (or a rule) rejected its permission request: a failure that is no error. */
  rejected: boolean;
  /** Files this call wrote, as the engine attributed them (`file-changed`'s `toolCallId`). */
  files: FileChange[];
}

export interface FileChange {
  path: string;
  created: boolean;
}

/** A client terminal's output as the store keeps it (capped, like the engine's). */
export interface TerminalState {
  /** The kept output: at most `limit` characters, the oldest dropped first. */
  text: string;
  /** Characters dropped from the start so far: a view that wrote up to offset N (counted
   * from the very first character) continues at `text.slice(N - dropped)`. */
  dropped: number;
  exitStatus: TerminalExitStatus | null;
  /** The engine dropped output before it reached us. */
  truncated: boolean;
  limit: number;
}

export interface UsageInfo {
  used: number;
  size: number;
  cost: Cost | null;
  tokensIn: number | null;
  tokensOut: number | null;
  model: string | null;
}

export type Entry =
  | { type: 'user'; key: number; text: string; attachments: Attachment[] }
  | { type: 'agent'; key: number; text: string; messageId: string | null }
  | { type: 'thought'; key: number; text: string; messageId: string | null }
  | ToolEntry
  | { type: 'turn-end'; key: number; reason: TurnEndReason; stopReason: StopReason | null }
  /** `kind`: the engine's classification (null: the UI's own, or an event from before kinds). */
  | { type: 'error'; key: number; message: string; kind?: ErrorKind | null }
  | {
      type: 'notice';
      key: number;
      severity: NoticeSeverity;
      title: string;
      description: string | null;
    }
  /** A permission request or a question (`what`), answered or withdrawn: who did, and how. */
  | { type: 'settled'; key: number; text: string; what?: 'permission' | 'question' }
  /** The agent went on by itself (a cycle after a background task ended, `usage_update` with
   * origin `task-notification`): what follows it, up to the next turn, is not a reply to you. */
  | { type: 'autonomous'; key: number; quiet: boolean }
  | { type: 'file'; key: number; path: string; created: boolean }
  /** A turn's end was checkpointed and it changed files (`checkpoint`, phase `after`): the
   * thread offers to review and undo step `turn` there. */
  | { type: 'changes'; key: number; turn: number; summary: ChangeSummary };

export interface SessionView {
  entries: Entry[];
  /** `stored`: a transcript from the history, restored at the app's start, whose agent has not
   * been started again yet (see `SessionStore.showStored`). */
  status: SessionState | 'opening' | 'stored';
  statusDetail: string | null;
  /** Dead before its agent ever had a session (no `acpSessionId`): it could not start, and
   * `statusDetail` says why (said once: the same words as an `error` entry are not kept). */
  startFailed: boolean;
  agent: AgentIdentity | null;
  /** Why the agent ended, from the error that said so (its kind, exit code or signal, last
   * stderr lines); null while it runs (a reconnect clears it). */
  ended: { kind: ErrorKind | null; exit: AgentExit | null } | null;
  /** The error entry (its key) that offers Retry: the last turn's, when its kind is retryable
   * (`ended.ts`); null once another turn starts. */
  retryEntry: number | null;
  /** The entry (its key) after which the thread offers to sign in: the end of the last turn,
   * when the agent refused it for want of a sign-in (`auth-required`; its error until the turn
   * ends); null once another turn or a new start begins. */
  signInEntry: number | null;
  /** The agent answered `auth-required` since the session last (re)started: a start that
   * failed so is a sign-in, not a broken command. */
  authRequired: boolean;
  /** How many times its agent started (`session-status: starting`) in this view: a sign-in
   * follows the start after it (lib/sign-in.ts). */
  starts: number;
  title: string | null;
  /** Permission requests waiting for the user, oldest first. */
  pending: AgentPromptEvent[];
  /** The agent's questions (`elicitation`) waiting for the user, oldest first. */
  elicitations: ElicitationEvent[];
  /** URL questions the user agreed to: the agent is to say when the page is done
   * (`elicitation-complete`). */
  awaiting: ElicitationEvent[];
  turnRunning: boolean;
  /** The latest plan, replaced whole on each update; kept after the turn ends. */
  plan: PlanEntry[];
  planTitle: string | null;
  /** The plan was updated during the running (or the last) turn: an older plan stays folded. */
  planFresh: boolean;
  usage: UsageInfo | null;
  /** The agent's slash commands. */
  commands: CommandInfo[];
  modes: { current: string; available: SessionMode[] } | null;
  configOptions: SessionConfigOption[];
  /** Background tasks by id, in the order they started. */
  tasks: BackgroundTaskInfo[];
  terminals: Record<string, TerminalState>;
  /** How a continued stored session went on with its agent (`session-continued`): `new`
   * means the agent could not continue the old conversation. */
  continued: { sessionId: string; outcome: ContinuationOutcome; detail: string | null } | null;
  /** The MCP servers the engine passed to the agent or skipped at the latest start or
   * continuation (`mcp-servers`); null before it said (or for an engine that does not). */
  mcpServers: McpServerReport[] | null;
  /** The latest step checkpointed in this session (`checkpoint` events); null: none yet, so
   * there is nothing to review. */
  lastStep: number | null;
}

/** Kept output per terminal when the engine did not say (its default cap). */
const DEFAULT_TERMINAL_LIMIT = 1024 * 1024;

/** A session before any event. */
export function emptyView(): SessionView {
  return {
    entries: [],
    status: 'opening',
    statusDetail: null,
    startFailed: false,
    agent: null,
    ended: null,
    retryEntry: null,
    signInEntry: null,
    authRequired: false,
    starts: 0,
    title: null,
    pending: [],
    elicitations: [],
    awaiting: [],
    turnRunning: false,
    plan: [],
    planTitle: null,
    planFresh: false,
    usage: null,
    commands: [],
    modes: null,
    configOptions: [],
    tasks: [],
    terminals: {},
    continued: null,
    mcpServers: null,
    lastStep: null,
  };
}

/** Chips for a prompt's non-text blocks. */
export function attachmentsOf(blocks: ContentBlock[]): Attachment[] {
  const out: Attachment[] = [];
  for (const b of blocks) {
    if (b.type === 'resource_link') out.push({ kind: 'file', name: b.title ?? b.name, uri: b.uri });
    else if (b.type === 'resource') {
      const uri = b.resource.uri;
      out.push({ kind: 'resource', name: uri.split('/').at(-1) || uri, uri });
    } else if (b.type === 'image')
      out.push({ kind: 'image', name: b.uri ?? b.mimeType, uri: b.uri ?? null });
    else if (b.type === 'audio') out.push({ kind: 'audio', name: b.mimeType, uri: null });
  }
  return out;
}

/** Text of a prompt's or message's blocks, for display. Non-text blocks show what they are. */
export function blocksText(blocks: ContentBlock[]): string {
  return blocks
    .map((b) => {
      switch (b.type) {
        case 'text':
          return b.text;
        case 'resource_link':
          return `[${b.name}]`;
        case 'resource':
          return '[attached resource]';
        case 'image':
          return '[image]';
        case 'audio':
          return '[audio]';
        default:
          return '';
      }
    })
    .join('');
}

export function turnEndText(reason: TurnEndReason, stopReason: StopReason | null): string {
  switch (reason) {
    case 'completed':
      if (stopReason === 'max_tokens') return 'Stopped at the token limit.';
      if (stopReason === 'refusal') return 'The agent refused to go on.';
      return 'Turn ended.';
    case 'cancelled':
      return 'Stopped.';
    case 'max_turns':
      return 'Stopped: the agent reached its limit of requests for one turn.';
    case 'error':
      return 'The turn ended with an error.';
    case 'watchdog-timeout':
      return 'Stopped: the agent sent nothing for too long.';
  }
}

type Listener = (view: SessionView) => void;

export class SessionStore {
  private view: SessionView = emptyView();
  private listeners = new Set<Listener>();
  private nextKey = 1;
  /** Index in `entries` of each tool call's card. */
  private tools = new Map<string, number>();
  /** A `ready` status was seen since the last snapshot: the agent did start. */
  private sawReady = false;
  /** Calls whose permission was rejected: an agent may ask before it announces the call. */
  private rejected = new Set<string>();
  /** The session's transcript from the history, shown before what its agent says now. */
  private stored: StreamEvent[] = [];
  /** Every question seen (by request id), so that its settlement can name it after it left
   * the queue. */
  private questions = new Map<string, ElicitationEvent>();

  get state(): SessionView {
    return this.view;
  }

  /** Svelte's store contract: called now and after every batch. */
  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    fn(this.view);
    return () => this.listeners.delete(fn);
  }

  /** Applies frames in order, then tells subscribers once. */
  applyAll(frames: StreamFrame[]): void {
    if (frames.length === 0) return;
    this.applyQuietly(frames);
    this.notify();
  }

  /**
   * Applies frames without telling subscribers: the view calls `notify` once per animation
   * frame. Applying at once keeps memory bounded (the store merges) even while the page is
   * hidden and animation frames stop.
   */
  applyQuietly(frames: StreamFrame[]): void {
    if (frames.length === 0) return;
    let v = this.view;
    for (const frame of frames) {
      if (frame.snapshot) {
        v = this.stored.length > 0 ? this.afterStored('opening') : emptyView();
        this.tools.clear();
        this.rejected.clear();
        this.sawReady = false;
      }
      v = {
        ...v,
        entries: [...v.entries],
        pending: [...v.pending],
        elicitations: [...v.elicitations],
        awaiting: [...v.awaiting],
        terminals: { ...v.terminals },
      };
      for (const ev of frame.events) this.applyOne(v, ev);
    }
    this.view = v;
  }

  notify(): void {
    for (const fn of this.listeners) fn(this.view);
  }

  /**
   * Shows a transcript from the history (a session restored at the app's start, or one the
   * History view continues, `starting`): the view is `stored` (no agent runs for it) until its
   * agent's frames come. A snapshot of the new agent
   * session then rebuilds on top of it, so the stored transcript stays above what follows.
   */
  showStored(events: StreamEvent[], starting = false): void {
    this.stored = events;
    this.view = this.afterStored(starting ? 'opening' : 'stored');
    this.notify();
  }

  /** What `showStored` was given (and `appendStored` added). */
  get storedEvents(): readonly StreamEvent[] {
    return this.stored;
  }

  /** Adds to the stored part (a note of what happened between it and what follows). */
  appendStored(ev: StreamEvent): void {
    this.stored = [...this.stored, ev];
    const v = { ...this.view, entries: [...this.view.entries] };
    this.applyOne(v, ev);
    this.view = v;
    this.notify();
  }

  /** The stored transcript as a view in `status`: nothing of it runs any more (no turn, no
   * request waiting, no agent), and tool call ids may come again from a new agent session. */
  private afterStored(status: 'stored' | 'opening'): SessionView {
    const v = emptyView();
    for (const ev of this.stored) this.applyOne(v, ev);
    this.tools.clear();
    this.rejected.clear();
    this.sawReady = false;
    return {
      ...v,
      status,
      statusDetail: null,
      startFailed: false,
      // The stored one's agent, until the new one says who it is.
      agent: status === 'stored' ? v.agent : null,
      // How an earlier run continued it is over: the new agent session says how this one does.
      continued: null,
      // The servers of a run that is over: the new agent session reports its own.
      mcpServers: null,
      // Nothing to ask of an agent that does not run: its own choices come when it does.
      modes: null,
      configOptions: [],
      commands: [],
      turnRunning: false,
      pending: [],
      elicitations: [],
      awaiting: [],
    };
  }

  /** Something the UI itself has to say in the thread (a failed command). */
  addError(message: string): void {
    const v = { ...this.view, entries: [...this.view.entries] };
    v.entries.push({ type: 'error', key: this.nextKey++, message, kind: null });
    this.view = v;
    for (const fn of this.listeners) fn(v);
  }

  /** Something the UI did that the thread should keep (an undo of a turn's changes). */
  addNotice(title: string, description: string | null = null): void {
    const v = { ...this.view, entries: [...this.view.entries] };
    v.entries.push({ type: 'notice', key: this.nextKey++, severity: 'info', title, description });
    this.view = v;
    for (const fn of this.listeners) fn(v);
  }

  private push(v: SessionView, e: Entry): void {
    v.entries.push(e);
  }

  /**
   * A cycle the agent started on its own ended (its `usage_update` says `task-notification`):
   * a marker goes above what the agent said and did since the last turn ended (or the last
   * such cycle), so it does not read as a reply to the user. A cycle with nothing to show gets
   * a marker of its own, at the end.
   */
  private markAutonomous(v: SessionView): void {
    let from = v.entries.length;
    for (let i = v.entries.length - 1; i >= 0; i--) {
      const t = (v.entries[i] as Entry).type;
      if (t === 'turn-end' || t === 'user' || t === 'autonomous') break;
      from = i;
    }
    const output = v.entries
      .slice(from)
      .findIndex((e) => e.type === 'agent' || e.type === 'thought' || e.type === 'tool');
    if (output < 0) {
      this.push(v, { type: 'autonomous', key: this.nextKey++, quiet: true });
      return;
    }
    v.entries.splice(from + output, 0, { type: 'autonomous', key: this.nextKey++, quiet: false });
    // The cards after it moved down one.
    for (const [id, at] of this.tools) if (at >= from + output) this.tools.set(id, at + 1);
  }

  private applyOne(v: SessionView, ev: StreamEvent): void {
    switch (ev.kind) {
      case 'mcp-servers':
        // Replaced whole: each start or continuation reports every server it considered. (Its
        // skipped servers are also in the thread: the engine's warning notice says them.)
        v.mcpServers = ev.servers;
        break;
      case 'text-delta':
      case 'thought': {
        const type = ev.kind === 'text-delta' ? 'agent' : 'thought';
        const messageId = ev.messageId ?? null;
        const text = ev.text || (ev.content ? blocksText([ev.content]) : '');
        const last = v.entries.at(-1);
        if (last && last.type === type && last.messageId === messageId) {
          v.entries[v.entries.length - 1] = { ...last, text: last.text + text };
        } else {
          this.push(v, { type, key: this.nextKey++, text, messageId });
        }
        break;
      }
      case 'user-message-delta': {
        const last = v.entries.at(-1);
        if (last && last.type === 'user') {
          v.entries[v.entries.length - 1] = { ...last, text: last.text + ev.text };
        } else {
          this.push(v, { type: 'user', key: this.nextKey++, text: ev.text, attachments: [] });
        }
        break;
      }
      case 'turn-start':
        v.turnRunning = true;
        v.planFresh = false;
        v.retryEntry = null;
        v.signInEntry = null;
        this.push(v, {
          type: 'user',
          key: this.nextKey++,
          text: ev.prompt.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''),
          attachments: attachmentsOf(ev.prompt),
        });
        break;
      case 'turn-end': {
        v.turnRunning = false;
        const key = this.nextKey++;
        this.push(v, {
          type: 'turn-end',
          key,
          reason: ev.reason,
          stopReason: ev.stopReason ?? null,
        });
        // The sign-in card goes after the turn the agent refused, below its end.
        if (v.signInEntry !== null) v.signInEntry = key;
        break;
      }
      case 'tool-call': {
        const at = this.tools.get(ev.toolCallId);
        const existing = at === undefined ? undefined : v.entries[at];
        if (existing && existing.type === 'tool') {
          v.entries[at as number] = mergeToolCall(existing, ev);
        } else {
          this.tools.set(ev.toolCallId, v.entries.length);
          this.push(v, {
            type: 'tool',
            key: this.nextKey++,
            toolCallId: ev.toolCallId,
            title: ev.toolName || 'Tool call',
            kind: ev.toolKind ?? null,
            status: ev.status ?? null,
            content: ev.content ?? [],
            locations: ev.locations ?? [],
            rawInput: carriesInput(ev.arguments) ? ev.arguments : undefined,
            rawOutput: ev.rawOutput ?? undefined,
            rejected: this.rejected.has(ev.toolCallId),
            files: [],
          });
        }
        break;
      }
      case 'tool-result':
        // It repeats what the call's tool-call events already carried (the merge rule): a card
        // takes nothing from it, so an update after it shows the same live and in a snapshot.
        break;
      case 'terminal-output': {
        const prev = v.terminals[ev.terminalId];
        const limit = prev?.limit ?? ev.outputByteLimit ?? DEFAULT_TERMINAL_LIMIT;
        let text = (prev?.text ?? '') + ev.data;
        let dropped = prev?.dropped ?? 0;
        // Trim in steps, not on every chunk: slicing a long string each time is quadratic.
        if (text.length > limit + limit / 4) {
          const cut = text.length - limit;
          text = text.slice(cut);
          dropped += cut;
        }
        v.terminals[ev.terminalId] = {
          text,
          dropped,
          limit,
          exitStatus: ev.exitStatus ?? prev?.exitStatus ?? null,
          truncated: (prev?.truncated ?? false) || !!ev.truncated,
        };
        break;
      }
      // In both, `toolCallId` is the permission request's id (the seed's name), not a tool call's.
      case 'agent-prompt':
        if (!v.pending.some((p) => p.toolCallId === ev.toolCallId)) v.pending.push(ev);
        break;
      case 'agent-prompt-settled': {
        const req = v.pending.find((p) => p.toolCallId === ev.toolCallId);
        v.pending = v.pending.filter((p) => p.toolCallId !== ev.toolCallId);
        this.push(v, { type: 'settled', key: this.nextKey++, text: settledText(ev, req) });
        const target = req?.targetToolCallId;
        if (target && isRejection(ev, req)) {
          this.rejected.add(target);
          const at = this.tools.get(target);
          const card = at === undefined ? undefined : v.entries[at];
          if (card?.type === 'tool') v.entries[at as number] = { ...card, rejected: true };
        }
        break;
      }
      case 'error': {
        const kind = ev.error.kind ?? null;
        if (ev.error.exit || kind === 'agent-exited' || kind === 'agent-unresponsive')
          v.ended = { kind, exit: ev.error.exit ?? null };
        if (kind === 'auth-required') v.authRequired = true;
        if (v.startFailed && ev.error.message === v.statusDetail) break;
        const key = this.nextKey++;
        this.push(v, { type: 'error', key, message: ev.error.message, kind });
        if (retryable(kind)) v.retryEntry = key;
        if (kind === 'auth-required') v.signInEntry = key;
        break;
      }
      case 'notice':
        this.push(v, {
          type: 'notice',
          key: this.nextKey++,
          severity: ev.severity,
          title: ev.title,
          description: ev.description ?? null,
        });
        break;
      case 'session-continued':
        v.continued = {
          sessionId: ev.sessionId,
          outcome: ev.outcome,
          detail: ev.detail ?? null,
        };
        // `new` is said by the engine's own warning notice; the others get a marker here.
        if (ev.outcome !== 'new') {
          this.push(v, {
            type: 'notice',
            key: this.nextKey++,
            severity: 'info',
            title:
              ev.outcome === 'resumed'
                ? 'Continued: the agent resumed the conversation.'
                : 'Continued: the agent loaded the conversation.',
            description: null,
          });
        }
        break;
      case 'session-status':
        if (ev.status === 'ready' || ev.status === 'prompting') this.sawReady = true;
        v.status = ev.status;
        v.statusDetail = ev.detail ?? null;
        // A session that runs again (reconnected) has no death to explain.
        if (ev.status !== 'dead') {
          v.ended = null;
          v.startFailed = false;
        }
        // A new start (reconnect, signed in) asks again; its own refusal sets these again.
        if (ev.status === 'starting') {
          v.starts += 1;
          v.authRequired = false;
          v.signInEntry = null;
        }
        if (ev.agent) v.agent = ev.agent;
        if (ev.status === 'dead') {
          v.turnRunning = false;
          v.pending = [];
          v.elicitations = [];
          v.awaiting = [];
          // Compaction keeps only the latest status, so "never ready" is also read from the
          // agent's identity: a session it started has its id.
          v.startFailed = !this.sawReady && !v.agent?.acpSessionId;
          if (v.startFailed) {
            v.entries = v.entries.filter(
              (e) => !(e.type === 'error' && e.message === v.statusDetail),
            );
            this.tools.clear();
            v.entries.forEach((e, i) => e.type === 'tool' && this.tools.set(e.toolCallId, i));
          }
        }
        break;
      case 'session-info':
        if (ev.title !== undefined) v.title = ev.title;
        break;
      case 'plan':
        v.plan = ev.entries;
        v.planTitle = ev.title ?? null;
        v.planFresh = true;
        break;
      case 'usage_update':
        if (ev.origin === 'task-notification') this.markAutonomous(v);
        v.usage = {
          used: ev.used,
          size: ev.size,
          cost: ev.cost ?? v.usage?.cost ?? null,
          tokensIn: ev.tokensIn ?? v.usage?.tokensIn ?? null,
          tokensOut: ev.tokensOut ?? v.usage?.tokensOut ?? null,
          model: ev.model ?? v.usage?.model ?? null,
        };
        break;
      case 'available-commands':
        v.commands = ev.commands;
        break;
      case 'modes':
        v.modes = { current: ev.currentModeId, available: ev.availableModes };
        break;
      case 'current-mode':
        if (v.modes) v.modes = { ...v.modes, current: ev.currentModeId };
        break;
      case 'config-options':
        v.configOptions = ev.configOptions;
        break;
      case 'background-task': {
        // Each event carries the task as merged so far: it replaces the copy.
        const i = v.tasks.findIndex((t) => t.taskId === ev.task.taskId);
        const tasks = [...v.tasks];
        if (i < 0) tasks.push(ev.task);
        else tasks[i] = ev.task;
        v.tasks = tasks;
        break;
      }
      case 'elicitation': {
        const req: ElicitationEvent = { ...ev };
        delete (req as Partial<typeof ev>).kind;
        this.questions.set(req.requestId, req);
        if (!v.elicitations.some((q) => q.requestId === req.requestId)) v.elicitations.push(req);
        break;
      }
      case 'elicitation-settled': {
        const req =
          v.elicitations.find((q) => q.requestId === ev.requestId) ??
          this.questions.get(ev.requestId);
        v.elicitations = v.elicitations.filter((q) => q.requestId !== ev.requestId);
        if (ev.awaitingCompletion && req && !v.awaiting.some((q) => q.requestId === ev.requestId))
          v.awaiting.push(req);
        this.push(v, {
          type: 'settled',
          key: this.nextKey++,
          what: 'question',
          text: questionSettledText(ev, req),
        });
        break;
      }
      case 'elicitation-complete': {
        const req =
          v.awaiting.find((q) => q.requestId === ev.requestId) ?? this.questions.get(ev.requestId);
        v.awaiting = v.awaiting.filter((q) => q.requestId !== ev.requestId);
        const where = req?.host ? ` at ${req.host}` : '';
        this.push(v, {
          type: 'settled',
          key: this.nextKey++,
          what: 'question',
          text: `The agent says the step${where} is done.`,
        });
        break;
      }
      case 'file-changed': {
        // With the call that wrote it (the engine says which): the watcher's report comes
        // after that call may have finished and the next begun.
        const at = ev.toolCallId ? this.tools.get(ev.toolCallId) : undefined;
        const card = at === undefined ? undefined : v.entries[at];
        if (card?.type === 'tool') {
          v.entries[at as number] = { ...card, files: withFile(card.files, ev.path, ev.created) };
        } else {
          this.push(v, { type: 'file', key: this.nextKey++, path: ev.path, created: ev.created });
        }
        break;
      }
      case 'checkpoint':
        // (A failed checkpoint is said by the engine's warning notice beside it.)
        if (ev.turn !== null && ev.turn !== undefined && !ev.error) {
          v.lastStep = Math.max(v.lastStep ?? 0, ev.turn);
          if (ev.phase === 'after' && ev.summary && ev.summary.files > 0)
            this.push(v, {
              type: 'changes',
              key: this.nextKey++,
              turn: ev.turn,
              summary: ev.summary,
            });
        }
        break;
      case 'unknown-update':
        // An update this client does not know: nothing to show (the audit log keeps it).
        break;
    }
  }
}

/** What a settled question says in the thread: who settled it and how, never the answer. */
function questionSettledText(
  ev: Extract<StreamEvent, { kind: 'elicitation-settled' }>,
  req: ElicitationEvent | undefined,
): string {
  // (A question this view never saw, in a compacted thread, goes unnamed.)
  const what = !req
    ? 'question'
    : req.mode === 'url'
      ? `request to open ${req.host ?? 'a page'}`
      : `question “${questionName(req)}”`;
  if (ev.by === 'user') {
    if (ev.action === 'accept')
      return req?.mode === 'url'
        ? `You agreed to open ${req.host ?? 'the page'} for the agent.`
        : `You answered the agent’s ${what}.`;
    return `You ${ev.action === 'decline' ? 'declined' : 'cancelled'} the agent’s ${what}.`;
  }
  if (ev.by === 'agent') return `The agent withdrew its ${what}.`;
  const how =
    ev.action === 'accept' ? 'answered' : ev.action === 'decline' ? 'declined' : 'cancelled';
  if (ev.by === 'rule') return `A rule ${how} the agent’s ${what}.`;
  const why = ev.by === 'stop' ? 'the turn was stopped' : 'the turn timed out';
  return `The agent’s ${what} was ${how}: ${why}.`;
}

/**
 * A later event of a tool call merged into its card: the engine's one merge rule
 * (`ToolCallEvent::merge`, crates/acp-desk-core/src/events/tool_call.rs), field for field (a card keeps no
 * `_meta`). A field replaces the card's when the event carries it; `session-store.merge.test.ts`
 * holds the two to it with a snapshot the engine's compactor made.
 */
function mergeToolCall(card: ToolEntry, ev: ToolCallEvent): ToolEntry {
  return {
    ...card,
    title: ev.toolName || card.title,
    kind: ev.toolKind ?? card.kind,
    status: ev.status ?? card.status,
    content: ev.content ?? card.content,
    locations: ev.locations ?? card.locations,
    rawInput: carriesInput(ev.arguments) ? ev.arguments : card.rawInput,
    rawOutput: ev.rawOutput ?? card.rawOutput,
  };
}

/** A call's files with one more change: a file it created and then changed stays created. */
function withFile(files: FileChange[], path: string, created: boolean): FileChange[] {
  const i = files.findIndex((f) => f.path === path);
  if (i < 0) return [...files, { path, created }];
  const out = [...files];
  out[i] = { path, created: created || (files[i] as FileChange).created };
  return out;
}

/** Whether a tool call's `arguments` carry input (the merge rule): `null` and `{}` do not. */
function carriesInput(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'object' && !Array.isArray(v)) return Object.keys(v).length > 0;
  return true;
}

/** The request was answered with one of its reject options (by the user or a rule). */
function isRejection(
  ev: Extract<StreamEvent, { kind: 'agent-prompt-settled' }>,
  req: AgentPromptEvent | undefined,
): boolean {
  if ('cancelled' in ev.outcome) return false;
  const { optionId } = ev.outcome;
  const kind = req?.options.find((o) => o.optionId === optionId)?.kind;
  return kind === 'reject_once' || kind === 'reject_always';
}

function settledText(
  ev: Extract<StreamEvent, { kind: 'agent-prompt-settled' }>,
  req: AgentPromptEvent | undefined,
): string {
  const what = req?.toolName ? `“${req.toolName}”` : 'a permission request';
  if ('cancelled' in ev.outcome) {
    const why: Record<typeof ev.by, string> = {
      user: 'you dismissed it',
      rule: 'a rule answered',
      stop: 'the turn was stopped',
      agent: 'the agent withdrew it',
      watchdog: 'the turn timed out',
    };
    return `Permission for ${what} cancelled: ${why[ev.by]}.`;
  }
  const optionId = ev.outcome.optionId;
  const option = req?.options.find((o) => o.optionId === optionId);
  // The words of the button that was clicked, not the agent's name alone (Claude calls Allow
  // once "Allow").
  const words = option ? optionWords(option) : { label: optionId, own: null };
  const chosen = `“${words.label}”` + (words.own ? ` (the agent’s “${words.own}”)` : '');
  const who: Record<typeof ev.by, string> = {
    user: 'you chose',
    rule: 'a rule chose',
    stop: 'stopping chose',
    agent: 'the agent chose',
    watchdog: 'the watchdog chose',
  };
  const by = who[ev.by];
  const feedback = ev.feedback ? ` Feedback: “${ev.feedback}”` : '';
  return `Permission for ${what}: ${by} ${chosen}.${feedback}`;
}
