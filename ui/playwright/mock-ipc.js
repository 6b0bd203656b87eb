// @ts-check
// Tauri's IPC, mocked inside the page for the Playwright tests and the UI bench: the built UI
// (ui/dist) runs unchanged in Chromium and talks to `window.__TAURI_INTERNALS__`, which this file
// installs before the app's own scripts (page.addInitScript). A session's stream is a recorded
// transcript (one StreamEvent per line, tests/transcripts/**, tests/real-agents/transcripts/**)
// replayed as StreamFrames through the Channel that `attach` hands over.
//
// How @tauri-apps/api 2.x talks to the shell (node_modules/@tauri-apps/api/core.js, event.js):
// - invoke(cmd, args) -> window.__TAURI_INTERNALS__.invoke(cmd, args, options). Arguments arrive
//   unserialized here, so a Channel is the Channel object itself (the real shell would get the
//   string `__CHANNEL__:<id>`; both are accepted).
// - new Channel() registers its handler with transformCallback(cb) -> id. A message is delivered
//   as runCallback(id, {index, message}), indices from 0 in order; {index, end: true} closes it.
// - listen(event, cb) -> invoke('plugin:event|listen', {event, target, handler: callbackId})
//   -> an event id; the handler gets {event, id, payload}. unlisten calls
//   window.__TAURI_EVENT_PLUGIN_INTERNALS__.unregisterListener(event, id) and then
//   invoke('plugin:event|unlisten', {event, eventId}).
//
// The file is plain JavaScript with JSDoc types (checked by tsc, strict) so that both the
// Playwright tests (TypeScript) and the bench (plain node) can import it.

import { readFileSync } from 'node:fs';

/**
 * A StreamEvent as recorded; only `kind` (and for some kinds a few fields) is looked at.
 * @typedef {{ kind: string } & Record<string, unknown>} StreamEvent
 */

/**
 * One recorded IPC call.
 * @typedef {{ cmd: string, args: Record<string, unknown>, at: number }} IpcCall
 */

/**
 * How a transcript is replayed.
 * @typedef {object} ReplayOptions
 * @property {number} [pace] Milliseconds between frames; 0 (the default) sends the whole
 *   transcript in one frame, right after `attach`.
 * @property {number} [batch] Events per frame when paced (default 1).
 * @property {'attach' | 'prompt'} [at] 'attach' (default): everything is replayed on `attach`.
 *   'prompt': on `attach` only the events before the first `turn-start`; each `prompt` call then
 *   replays the next recorded turn (turn-start ... turn-end) and resolves with its turn-end.
 * @property {string | null} [folder] The folder the window opens at start (AppInfo.initialFolder);
 *   null shows the empty state. Default '/home/demo/project'.
 * @property {string} [agent] The agent's id (default 'demo').
 * @property {string} [sessionId] The session id open_session returns; default: the first
 *   sessionId in the transcript.
 * @property {string} [registryId] The id open_session returns, when it is not the events'
 *   (the shell's registry ids, `s1`, differ from the engine's that events carry).
 * @property {string[]} [files] What list_files answers.
 * @property {Record<string, { code: string, message: string }>} [errors] Commands that reject,
 *   with the IpcError they reject with.
 * @property {'recorded' | 'user'} [answer] 'recorded' (default): permission requests are settled
 *   as the recording says. 'user': the replay stops after each `agent-prompt` until
 *   `respond_permission` answers it (the recorded settlement is dropped), then goes on; `cancel`
 *   settles it `by: stop` and ends the turn.
 * @property {boolean} [snapshot] Send what `attach` replays as the attach snapshot itself (one
 *   frame, `snapshot: true`, as the shell sends a late view the compacted thread) instead of
 *   an empty snapshot followed by live frames. Ignores `pace`.
 * @property {MockHistory} [history] The stored sessions the History view reads (the
 *   `history_*` commands); without it, an empty history.
 * @property {StreamEvent[]} [reconnect] What `reconnect_session` replays (the new agent's
 *   start: `session-status` starting ... ready); without it, reconnecting replays nothing.
 * @property {{ sessions: any[], shown: number | null, startAtOnce: boolean }} [restored]
 *   What `restored_sessions` answers (the last run's sidebar, RestoredSidebar); default none.
 * @property {MockAgents} [agents] The Agents view's commands (`agents_*`, `agent_*`): the
 *   listing, Check's reports, Install's progress; without it, the demo agent and Gemini CLI.
 * @property {MockSecrets} [secrets] The MCP servers & secrets view's commands (`secrets_list`,
 *   `secret_set`, `secret_delete`, `mcp_servers_list`); without it, an available keychain with
 *   nothing stored and no servers.
 * @property {{ offer: Record<string, any> | null }} [projectMcp] What `project_mcp_offer`
 *   answers (ProjectMcpOffer) until a file is decided: `project_mcp_decide` removes the file
 *   from it (by name and digest, as the shell keeps decisions); `project_mcp_restart` replays
 *   `reconnect`, like `reconnect_session`. Without it, no folder has a config.
 * @property {MockSignIn} [signIn] The sign-in commands (`sign_in_agent`, `sign_in_api_key`,
 *   `agent_sign_in`); a session's sign-in replays `reconnect`, like `reconnect_session`.
 * @property {MockLogin} [login] What the terminal-login commands run (`login_start`,
 *   `login_input`, `login_resize`, `login_cancel`): a scripted program like the demo agent's
 *   `login`; without it, the defaults of MockLogin.
 * @property {MockQuestions} [questions] How `elicitation_answer` answers (by default: each
 *   answer settles the question `by: user`; a URL question agreed to is `awaitingCompletion`).
 * @property {MockCheckpoints} [checkpoints] The review panel's commands (`checkpoint_*`) over
 *   a model folder; without it, they answer `checkpoints-off`.
 * @property {boolean} [keepClose] Keep the CLI's closing `session-status: dead` ("Session
 *   closed.", the CLI ending the session as it exits) at the end of a recording. By default it
 *   is dropped: in the app the session stays open after its turns.
 */

/**
 * A folder of text files and the steps of one session over it, as the shadow repository keeps
 * them: `turns[i]` is what turn i+1 wrote (a null deletes the file). Reverts and restores
 * follow the shell's rules: a file no longer as the step left it is a conflict (nothing is
 * written) unless `force`; a revert that writes is a step of its own. The page exposes the
 * model as `window.__acpMock.folder` (path to text): a test edits it to play the user.
 * @typedef {object} MockCheckpoints
 * @property {Record<string, string>} files The folder before the first turn.
 * @property {Record<string, string | null>[]} turns
 * @property {string[]} [unrestorable] Ignored files changed behind ACP Desk's back (the last
 *   turn's).
 * @property {import('../src/lib/generated/ipc').InterruptedUndo[]} [interrupted] Undos cut
 *   short and put back, as the listing tells them.
 */

/**
 * The history the mock keeps: sessions (HistorySession, as the shell lists them) and each one's
 * stored events. `history_search` finds every word (case-insensitive) in a row's text (a
 * message, a prompt, a tool's title) and marks it, as the store's snippets do.
 * @typedef {object} MockHistory
 * @property {Record<string, unknown>[]} sessions
 * @property {Record<string, StreamEvent[]>} transcripts
 * @property {{ off: boolean, message: string }[]} [notices] What history_status reports.
 * @property {Record<string, unknown>[]} [agentSessions] What history_agent_sessions answers
 *   (AgentSession: the agent's own sessions, session/list).
 * @property {string | null} [exportTo] The file the save dialog "chooses" (default
 *   /home/demo/exported.<ext>); null: the user cancelled.
 */

/**
 * The agents the mock lists and what their commands answer.
 * @typedef {object} MockAgents
 * @property {Record<string, any>} [listing] What `agents_list` answers (AgentListing).
 * @property {Record<string, any>} [checks] `agent_check`'s report per agent id; an object with
 *   `code` and `message` rejects with it. Default: a passed check naming the agent.
 * @property {number} [checkMs] How long a Check takes (default 0).
 * @property {Record<string, any>[]} [installSteps] The progress `agent_install` sends
 *   (InstallProgress), `installStepMs` apart (default 150).
 * @property {number} [installStepMs]
 * @property {Record<string, { code: string, message: string }>} [installErrors] Per agent id:
 *   the install fails with it after its progress.
 * @property {Record<string, any> | null} [imported] What `agents_import_registry` answers
 *   (RegistryImported: the registry, its problems, the listing).
 */

/**
 * A terminal login as the mock runs it: it prints `prompt`, echoes what is typed (as a terminal
 * does), and on Enter exits 0 when the line is `code` (a session target then "restarts": the
 * exit frame says `restarted` and `reconnect` is replayed, like `reconnect_session`), else 1.
 * `login_cancel` ends it with SIGTERM, `cancelled`.
 * @typedef {object} MockLogin
 * @property {string} [code] The right code (default 'demo', as the demo agent's).
 * @property {string} [prompt] What it prints first (default the demo agent's words).
 * @property {string} [label] LoginStarted.label (default 'Log in to the demo agent').
 * @property {string} [commandShown] LoginStarted.commandShown (default
 *   'acp-desk-demo-agent login').
 * @property {boolean} [needsConsent] `login_start` without `consent: true` is refused with
 *   `consent-needed`, as for a command the agent named that is not its own launch.
 */

/**
 * The keychain and the configured MCP servers the mock keeps. Stored values are kept in
 * `window.__acpMock.keychain` (the mock's keychain, not the page's DOM); `calls` records a
 * `secret_set`'s value as `<value>`, so a search of the page state finds only the keychain's copy.
 * @typedef {object} MockSecrets
 * @property {boolean} [available] A keychain service answers (default true).
 * @property {string} [problem] Why not, when it does not.
 * @property {string[]} [stored] Names stored at the start.
 * @property {Record<string, string[]>} [used] Where the settings use each name.
 * @property {Record<string, any>[]} [servers] McpServerRow without `credentialStored` (the mock
 *   says it from the keychain).
 * @property {Record<string, any>[]} [problems] Problems of the `mcp_servers` fields.
 */

/**
 * How the sign-in commands answer. A key `sign_in_api_key` is given goes to the mock keychain
 * (`agent-auth/<agent>/<method>`); `calls` records it as `<value>`.
 * @typedef {object} MockSignIn
 * @property {number} [agentMs] How long `authenticate` takes (the agent has the browser open).
 * @property {{ code: string, message: string }} [refuse] What a sign-in rejects with (after
 *   `agentMs`): the agent's reason.
 * @property {boolean} [resends] The shell keeps a prompt that hit the login (a refused turn's):
 *   the answer says it is sent again.
 */

/**
 * The agent's questions (`elicitation`) and background tasks, as the mock answers for them.
 * `cancel` settles every open question `by: stop` (action cancel), as the engine does.
 * `background_task_stop` refuses a task whose last event did not say `canStop` with
 * `task-not-stoppable`, and otherwise sends it settled (`stopped`, `settledBy: agent`).
 * @typedef {object} MockQuestions
 * @property {string} [refuseOnce] The first accept is refused with `invalid-answer` and this
 *   message (as the engine's checks would: its message lists each field's problem).
 * @property {number} [completeMs] After a URL question is agreed to, `elicitation-complete`
 *   follows this many ms later; without it, never (a test sends it with `frame`).
 */

/**
 * What addInitScript hands to the page.
 * @typedef {{ events: StreamEvent[], options: ReplayOptions }} MockSetup
 */

/**
 * What the page exposes as `window.__acpMock` (tests read it with page.evaluate).
 * @typedef {object} MockState
 * @property {IpcCall[]} calls Every invoke, in order (plugin:event|* included).
 * @property {boolean} replayed The replay has delivered everything it had for now.
 * @property {number} delivered How many events were delivered so far.
 * @property {(events: StreamEvent[], snapshot?: boolean) => void} frame Sends one frame on the
 *   attached channel at once.
 * @property {(name: string, payload: unknown) => void} emit Sends an app event
 *   (folder-chosen, paths-dropped, drag-hover) to its listeners.
 * @property {Record<string, string>} keychain The mock keychain (name to value).
 * @property {unknown} [kept] The prompt `sign_in_keep_prompt` kept (PromptPart[]).
 * @property {Record<string, string>} folder The model folder of MockCheckpoints, as it is now.
 */

/**
 * Installs the mock. Runs INSIDE the page (Playwright serializes it), so it uses nothing from
 * this module's scope.
 * @param {MockSetup} setup
 */
export function installMockIpc(setup) {
  const { options } = setup;
  const w = /** @type {any} */ (window);
  const firstSession = setup.events.find((e) => typeof e.sessionId === 'string');
  const sessionId =
    options.sessionId ?? (firstSession ? String(firstSession.sessionId) : 'mock-session');
  // Every event carries the session's id, as the shell's would.
  const events = setup.events.map((e) => ({ ...e, sessionId }));
  const folder = options.folder === undefined ? '/home/demo/project' : options.folder;
  const agent = options.agent ?? 'demo';
  const pace = options.pace ?? 0;
  const batch = Math.max(1, options.batch ?? 1);

  /** @type {Map<number, (data: unknown) => void>} */
  const callbacks = new Map();
  let nextCallback = 1;
  /** @type {Map<string, Map<number, number>>} event name -> event id -> callback id */
  const listeners = new Map();
  let nextEventId = 1;

  /** @type {{ id: number, index: number } | null} */
  let channel = null;
  /** Running terminal logins: their channel, what was typed on the current line, the target. */
  /** @type {Map<string, { ch: { id: number, index: number }, line: string, session: boolean }>} */
  const logins = new Map();
  let nextLogin = 1;
  const loginMock = options.login ?? {};
  /**
   * @param {{ id: number, index: number }} ch
   * @param {unknown} message
   */
  function loginSend(ch, message) {
    const index = ch.index++;
    callbacks.get(ch.id)?.({ index, message });
  }
  /**
   * @param {string} id
   * @param {Record<string, unknown>} end
   */
  function endLogin(id, end) {
    const l = logins.get(id);
    if (!l) return;
    logins.delete(id);
    loginSend(l.ch, { kind: 'exit', cancelled: false, restarted: false, ...end });
  }
  /** @param {unknown} ch */
  const channelId = (ch) =>
    typeof ch === 'string'
      ? Number(ch.replace('__CHANNEL__:', ''))
      : Number(/** @type {any} */ (ch)?.id);
  /** @type {MockState} */
  const state = {
    calls: [],
    replayed: false,
    delivered: 0,
    frame: (evs, snapshot = false) => send({ snapshot, events: evs }),
    emit: (name, payload) => {
      for (const [id, cb] of listeners.get(name) ?? new Map()) {
        callbacks.get(cb)?.({ event: name, id, payload });
      }
    },
    keychain: Object.fromEntries((options.secrets?.stored ?? []).map((n) => [n, 'stored-before'])),
    folder: { ...(options.checkpoints?.files ?? {}) },
  };
  w.__acpMock = state;

  // The checkpoints model (MockCheckpoints): each step keeps the folder before and after it.
  /** @typedef {Record<string, string>} Tree */
  /** @type {{ turn: number, kind: string, undoes: number | null, before: Tree, after: Tree }[]} */
  const steps = [];
  for (const edit of options.checkpoints?.turns ?? []) {
    const before = { ...state.folder };
    for (const [p, t] of Object.entries(edit)) {
      if (t === null) Reflect.deleteProperty(state.folder, p);
      else state.folder[p] = t;
    }
    steps.push({
      turn: steps.length + 1,
      kind: 'turn',
      undoes: null,
      before,
      after: { ...state.folder },
    });
  }
  // Lines added and removed, as a multiset of lines (enough for the tests' small edits; the
  // shell counts git's diff).
  const linesOf = (/** @type {string | undefined} */ t) =>
    t ? t.split('\n').slice(0, t.endsWith('\n') ? -1 : undefined) : [];
  /** @param {string | undefined} a @param {string | undefined} b */
  function notIn(a, b) {
    const left = linesOf(b);
    let n = 0;
    for (const l of linesOf(a)) {
      const i = left.indexOf(l);
      if (i < 0) n++;
      else left.splice(i, 1);
    }
    return n;
  }
  /** @param {Tree} from @param {Tree} to */
  function treeDiff(from, to) {
    const paths = [...new Set([...Object.keys(from), ...Object.keys(to)])].sort();
    return paths
      .filter((p) => from[p] !== to[p])
      .map((p) => ({
        path: p,
        status: !(p in from) ? 'added' : !(p in to) ? 'deleted' : 'modified',
        added: notIn(to[p], from[p]),
        removed: notIn(from[p], to[p]),
        binary: false,
      }));
  }
  /** @param {{ added: number, removed: number }[]} files */
  const summaryOf = (files) => ({
    files: files.length,
    added: files.reduce((n, f) => n + f.added, 0),
    removed: files.reduce((n, f) => n + f.removed, 0),
  });
  /** @param {unknown} turn */
  function span(turn) {
    if (!options.checkpoints)
      throw { code: 'checkpoints-off', message: 'checkpoints are turned off in the settings' };
    // As the core's session span: from before its first step to its last checkpoint.
    if (turn === null || turn === undefined)
      return { from: steps[0]?.before ?? state.folder, to: steps.at(-1)?.after ?? state.folder };
    const s = steps.find((x) => x.turn === turn);
    if (!s)
      throw { code: 'step-unknown', message: `no step ${turn} in this session's checkpoints` };
    return { from: s.before, to: s.after };
  }
  /** Writes `target`'s version of `paths` unless one is no longer as `expected` has it. */
  function undoFiles(
    /** @type {Tree} */ target,
    /** @type {string[]} */ paths,
    /** @type {Tree} */ expected,
    /** @type {boolean} */ force,
    /** @type {string} */ kind,
    /** @type {number} */ undoes,
  ) {
    const now = state.folder;
    const conflicts = paths
      .filter((p) => now[p] !== expected[p])
      .map((p) => ({
        path: p,
        reason: !(p in now) ? 'deleted' : !(p in expected) ? 'created' : 'changed',
      }));
    if (conflicts.length > 0 && !force) return { outcome: 'conflicts', conflicts };
    const write = paths.filter((p) => now[p] !== target[p]);
    if (write.length === 0) return { outcome: 'unchanged' };
    const before = { ...now };
    for (const p of write) {
      const t = target[p];
      if (t === undefined) Reflect.deleteProperty(now, p);
      else now[p] = t;
    }
    const step = steps.length + 1;
    steps.push({ turn: step, kind, undoes, before, after: { ...now } });
    return { outcome: 'done', step, files: write };
  }
  /** @param {string} cmd @param {Record<string, any>} args */
  function checkpointCommand(cmd, args) {
    switch (cmd) {
      case 'checkpoint_list':
        span(null);
        return {
          folder,
          steps: steps.map((s) => ({
            turn: s.turn,
            kind: s.kind,
            undoes: s.undoes,
            at: '2026-12-03T08:00:00Z',
            complete: true,
            summary: summaryOf(treeDiff(s.before, s.after)),
            undoneBy: steps
              .filter((r) => r.kind === 'revert' && r.undoes === s.turn)
              .map((r) => r.turn),
          })),
          storage: {
            bytes: 5800 * steps.length + 40960,
            budgetBytes: 2 * 1024 ** 3,
            maxAgeDays: 30,
            steps: steps.length,
            sessions: 1,
          },
          interrupted: options.checkpoints?.interrupted ?? [],
        };
      case 'checkpoint_changes': {
        const { from, to } = span(args.turn);
        const files = treeDiff(from, to);
        const last = args.turn !== null && args.turn === options.checkpoints?.turns.length;
        return {
          turn: args.turn,
          files,
          summary: summaryOf(files),
          unrestorable: last ? (options.checkpoints?.unrestorable ?? []) : [],
        };
      }
      case 'checkpoint_file': {
        const { from, to } = span(args.turn);
        const v = (/** @type {string | undefined} */ t) =>
          t === undefined ? null : { text: t, bytes: t.length, binary: false };
        const path = String(args.path);
        return {
          path,
          before: v(from[args.oldPath ?? path]),
          after: v(to[path]),
          now: v(state.folder[path]),
        };
      }
      case 'checkpoint_revert': {
        const { from, to } = span(args.turn);
        const paths = treeDiff(from, to)
          .map((f) => f.path)
          .filter((p) => args.file === null || p === args.file);
        if (paths.length === 0)
          throw {
            code: 'step-unknown',
            message: `\`${args.file}\` is not a file step ${args.turn} changed`,
          };
        return undoFiles(from, paths, to, args.force, 'revert', args.turn);
      }
      case 'checkpoint_restore': {
        const { from } = span(args.turn);
        const last = steps.at(-1)?.after ?? state.folder;
        const paths = [...new Set([...Object.keys(from), ...Object.keys(state.folder)])].filter(
          (p) => from[p] !== state.folder[p],
        );
        return undoFiles(from, paths, last, args.force, 'restore', args.turn);
      }
    }
    return null;
  }

  /** Questions asked and not settled, and each task as last sent, by id. */
  /** @type {Map<string, StreamEvent>} */
  const questions = new Map();
  /** @type {Map<string, Record<string, unknown>>} */
  const tasks = new Map();
  let refusedOnce = false;

  /** @param {unknown} message */
  function send(message) {
    for (const e of /** @type {any} */ (message)?.events ?? []) {
      if (e.kind === 'elicitation') questions.set(String(e.requestId), e);
      if (e.kind === 'elicitation-settled') questions.delete(String(e.requestId));
      if (e.kind === 'background-task') tasks.set(String(e.task?.taskId), e.task);
    }
    if (!channel) return;
    const cb = callbacks.get(channel.id);
    const index = channel.index++;
    cb?.({ index, message });
  }

  // Split the transcript into what comes before the first turn and the turns themselves.
  const firstTurn = events.findIndex((e) => e.kind === 'turn-start');
  const preamble = firstTurn < 0 ? events : events.slice(0, firstTurn);
  /** @type {StreamEvent[][]} */
  const turns = [];
  if (firstTurn >= 0) {
    for (const e of events.slice(firstTurn)) {
      if (e.kind === 'turn-start' || turns.length === 0) turns.push([]);
      turns[turns.length - 1]?.push(e);
    }
  }
  let lastConfig = /** @type {StreamEvent | undefined} */ (
    [...events].reverse().find((e) => e.kind === 'config-options')
  );

  /** @type {((end: unknown) => void) | null} */
  let turnDone = null;
  /** A replay stopped at an agent-prompt (answer: 'user'): resume(true) goes on, false drops it. */
  /** @type {{ toolCallId: string, resume: (goOn: boolean) => void } | null} */
  let held = null;

  /** What a sign-in command answers (SignInAnswer): for a session, the restart under way. */
  function signInAnswer(/** @type {boolean} */ session, who = agent) {
    return session
      ? {
          session: { id: options.registryId ?? sessionId, folder, agent },
          resendsPrompt: Boolean(state.kept) || Boolean(options.signIn?.resends),
          message: `Signing in to ${agent}…`,
          actions: [],
        }
      : { resendsPrompt: false, message: `Signed in to ${who}.`, actions: [] };
  }

  /** A session's restart once signed in: `reconnect`'s first event (starting) now, the rest
   * after `signIn.agentMs`. */
  async function signInRestart() {
    const list = (options.reconnect ?? []).map((e) => ({ ...e, sessionId }));
    await deliver(list.slice(0, 1));
    if (options.signIn?.agentMs) await wait(options.signIn.agentMs);
    await deliver(list.slice(1));
  }

  /**
   * Delivers events (paced, or at once in one frame), resolving the running `prompt` with each
   * turn-end as it goes out; with `answer: 'user'`, stops after each agent-prompt until it is
   * answered.
   * @param {StreamEvent[]} list
   * @returns {Promise<void>}
   */
  async function deliver(list) {
    const sendSome = (/** @type {StreamEvent[]} */ some) => {
      send({ snapshot: false, events: some });
      state.delivered += some.length;
      for (const e of some) {
        if (e.kind === 'turn-end' && turnDone) {
          const done = turnDone;
          turnDone = null;
          done({ reason: e.reason, stopReason: e.stopReason ?? null });
        }
      }
    };
    let i = 0;
    while (i < list.length) {
      let end = pace <= 0 ? list.length : Math.min(list.length, i + batch);
      let ask = /** @type {StreamEvent | undefined} */ (undefined);
      if (options.answer === 'user') {
        const k = list.slice(i, end).findIndex((e) => e.kind === 'agent-prompt');
        if (k >= 0) {
          end = i + k + 1;
          ask = list[end - 1];
        }
      }
      if (pace > 0) await new Promise((r) => setTimeout(r, pace));
      sendSome(list.slice(i, end));
      i = end;
      if (ask) {
        // Wait for the user's answer; the recorded settlement is replaced by it.
        const id = String(ask.toolCallId);
        const rest = list
          .slice(i)
          .filter((e) => !(e.kind === 'agent-prompt-settled' && e.toolCallId === id));
        const goOn = await new Promise((resume) => {
          held = { toolCallId: id, resume };
        });
        if (!goOn) return;
        list = rest;
        i = 0;
      }
    }
  }

  /** @param {StreamEvent} e */
  const own = (e) => ({ ...e, sessionId });

  const history = options.history ?? { sessions: [], transcripts: {} };
  /** @type {Record<string, any> | null} */
  let projectOffer = options.projectMcp?.offer ?? null;

  const secretsMock = options.secrets ?? {};
  const keychainUp = secretsMock.available ?? true;
  const settingsPath = '/home/demo/.config/acp-desk/settings.json';
  const noKeychain = () => ({
    code: 'keychain-unavailable',
    message:
      secretsMock.problem ?? 'no keychain service is running: start a Secret Service and try again',
  });
  function secretsListing() {
    const used = secretsMock.used ?? {};
    const names = new Set([
      ...Object.keys(used),
      ...(keychainUp ? Object.keys(state.keychain) : []),
    ]);
    return {
      available: keychainUp,
      problem: keychainUp ? undefined : noKeychain().message,
      settingsFile: settingsPath,
      secrets: [...names].sort().map((name) => ({
        name,
        stored: keychainUp && Object.hasOwn(state.keychain, name),
        usedBy: used[name] ?? [],
      })),
    };
  }

  const agentsMock = options.agents ?? {};
  /** @type {any} */
  let listing = agentsMock.listing ?? {
    agents: [
      {
        id: agent,
        name: 'ACP Desk demo agent',
        description: 'The built-in demo agent (mocked).',
        source: 'builtin',
        alsoDefinedIn: [],
        command: 'acp-desk-demo-agent',
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
    ],
    defaultAgent: agent,
    defaultReason: 'the demo agent: nothing else is installed',
    settingsFile: '/home/demo/.config/acp-desk/settings.json',
    problems: [],
  };
  /** @param {unknown} ch @param {{ index: number }} at @param {unknown} message */
  const sendOn = (ch, at, message) => {
    const id =
      typeof ch === 'string'
        ? Number(ch.replace('__CHANNEL__:', ''))
        : Number(/** @type {any} */ (ch)?.id);
    callbacks.get(id)?.({ index: at.index++, message });
  };
  /** @param {string} id */
  const listed = (id) => {
    const a = listing.agents.find((/** @type {any} */ x) => x.id === id);
    if (!a) throw { code: 'agent-unknown', message: `there is no agent \`${id}\`` };
    return a;
  };
  const wait = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
  /** @param {StreamEvent} e */
  const bodyOf = (e) => {
    if (e.kind === 'text-delta' || e.kind === 'thought') return String(e.text ?? '');
    if (e.kind === 'turn-start')
      return /** @type {any[]} */ (e.prompt ?? []).map((b) => b.text ?? '').join(' ');
    if (e.kind === 'tool-call') return String(e.toolName ?? '');
    return '';
  };
  /**
   * @param {string} body
   * @param {string[]} words lower case
   */
  const snippet = (body, words) => {
    const lower = body.toLowerCase();
    const first = Math.min(...words.map((w) => lower.indexOf(w)).filter((i) => i >= 0));
    const from = Math.max(0, first - 40);
    const text = (from > 0 ? '…' : '') + body.slice(from, from + 160).replace(/\s+/g, ' ');
    /** @type {{ text: string, hit: boolean }[]} */
    const parts = [];
    const re = new RegExp(
      words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
      'gi',
    );
    let at = 0;
    for (const m of text.matchAll(re)) {
      const i = m.index ?? 0;
      if (i > at) parts.push({ text: text.slice(at, i), hit: false });
      parts.push({ text: m[0], hit: true });
      at = i + m[0].length;
    }
    if (at < text.length) parts.push({ text: text.slice(at), hit: false });
    return parts;
  };
  /** @param {string} id */
  const stored = (id) => {
    const s = history.sessions.find((x) => x.id === id);
    if (!s) throw { code: 'session-unknown', message: `no stored session has the id \`${id}\`` };
    return s;
  };

  /**
   * @param {string} cmd
   * @param {Record<string, any>} args
   * @returns {Promise<unknown>}
   */
  async function handle(cmd, args) {
    const failure = options.errors?.[cmd];
    if (failure) throw failure;
    /**
     * Tauri's answer to a command called without an argument it names.
     * @param {string} cmd
     * @param {Record<string, unknown> | undefined} args
     * @param {string[]} names
     */
    function requireArgs(cmd, args, names) {
      for (const n of names)
        if (args?.[n] === undefined)
          throw {
            code: 'internal',
            message: `invalid args \`${n}\` for command \`${cmd}\`: command ${cmd} missing required key ${n}`,
          };
    }
    switch (cmd) {
      case 'app_info':
        return {
          version: '0.0.0-mock',
          initialFolder: folder,
          // As with `--agent NAME` when a folder is opened at start; else the listing's default.
          initialAgent: folder ? agent : undefined,
          configDir: '/home/demo/.config/acp-desk',
          dataDir: '/home/demo/.local/share/acp-desk',
          theme: 'system',
        };
      case 'open_session':
        return { id: options.registryId ?? sessionId, folder: args.folder, agent: args.agent };
      case 'attach': {
        const ch = args.onFrame;
        const id = typeof ch === 'string' ? Number(ch.replace('__CHANNEL__:', '')) : Number(ch?.id);
        channel = { id, index: 0 };
        const first = options.at === 'prompt' ? preamble : events;
        if (options.snapshot) {
          send({ snapshot: true, events: first });
          state.delivered += first.length;
          state.replayed = options.at === 'prompt' ? turns.length === 0 : true;
          return null;
        }
        // Like the shell: the snapshot first (empty here: the replay plays it live), then frames.
        send({ snapshot: true, events: [] });
        setTimeout(() => {
          void deliver(first).then(() => {
            state.replayed = options.at === 'prompt' ? turns.length === 0 : true;
          });
        }, 0);
        return null;
      }
      case 'prompt': {
        const turn = options.at === 'prompt' ? turns.shift() : undefined;
        const text = (args.parts ?? [])
          .map((/** @type {any} */ p) => (p.type === 'text' ? p.text : `@${p.path ?? p.name}`))
          .join('');
        const recorded = turn ?? [
          { kind: 'turn-start', sessionId, prompt: [{ type: 'text', text: text || args.text }] },
          { kind: 'text-delta', sessionId, text: '(mock: no recorded turn is left to replay)' },
          { kind: 'turn-end', sessionId, reason: 'completed', stopReason: 'end_turn' },
        ];
        const ended = new Promise((resolve) => {
          turnDone = resolve;
        });
        void deliver(recorded.map(own)).then(() => {
          if (options.at === 'prompt') state.replayed = turns.length === 0;
        });
        return ended;
      }
      case 'cancel': {
        // Like the engine: waiting requests are settled `by: stop`, then the turn ends.
        /** @type {StreamEvent[]} */
        const stop = [];
        if (held) {
          const h = held;
          held = null;
          h.resume(false);
          stop.push({
            kind: 'agent-prompt-settled',
            sessionId,
            toolCallId: h.toolCallId,
            outcome: { cancelled: true },
            by: 'stop',
          });
        }
        for (const q of [...questions.values()]) {
          stop.push({
            kind: 'elicitation-settled',
            sessionId,
            requestId: q.requestId,
            action: 'cancel',
            by: 'stop',
          });
        }
        if (turnDone || stop.length > 0) {
          stop.push({ kind: 'turn-end', sessionId, reason: 'cancelled', stopReason: 'cancelled' });
          void deliver(stop);
        }
        return null;
      }
      case 'respond_permission': {
        void deliver([
          {
            kind: 'agent-prompt-settled',
            sessionId,
            toolCallId: args.requestId,
            outcome: args.resolution,
            by: 'user',
          },
        ]);
        if (held && held.toolCallId === args.requestId) {
          const h = held;
          held = null;
          h.resume(true);
        }
        return null;
      }
      case 'elicitation_answer': {
        // As Tauri refuses a command whose arguments lack one it names (the shell's `session`).
        requireArgs(cmd, args, ['session', 'requestId', 'answer']);
        const q = questions.get(String(args.requestId));
        if (!q)
          throw {
            code: 'invalid-input',
            message: `no question \`${args.requestId}\` is waiting (settled meanwhile?)`,
          };
        const action = String(args.answer?.action);
        const refuse = options.questions?.refuseOnce;
        if (action === 'accept' && refuse && !refusedOnce) {
          refusedOnce = true;
          throw { code: 'invalid-answer', message: refuse };
        }
        const url = q.mode === 'url' && action === 'accept';
        void deliver([
          {
            kind: 'elicitation-settled',
            sessionId,
            requestId: q.requestId,
            action,
            by: 'user',
            ...(url ? { awaitingCompletion: true } : {}),
          },
        ]);
        const ms = options.questions?.completeMs;
        if (url && ms !== undefined) {
          setTimeout(() => {
            void deliver([{ kind: 'elicitation-complete', sessionId, requestId: q.requestId }]);
          }, ms);
        }
        return null;
      }
      case 'background_task_stop': {
        requireArgs(cmd, args, ['session', 'taskId']);
        const task = tasks.get(String(args.taskId));
        if (!task)
          throw { code: 'invalid-input', message: `no background task \`${args.taskId}\`` };
        if (!task.canStop)
          throw {
            code: 'task-not-stoppable',
            message: `the background task \`${args.taskId}\` cannot be stopped: the agent does not offer to stop it`,
          };
        void deliver([
          {
            kind: 'background-task',
            sessionId,
            phase: 'settled',
            task: { ...task, status: 'stopped', settledBy: 'agent' },
          },
        ]);
        return null;
      }
      case 'set_mode':
        void deliver([{ kind: 'current-mode', sessionId, currentModeId: args.modeId }]);
        return null;
      case 'set_config_option': {
        if (lastConfig) {
          const configOptions = /** @type {any[]} */ (lastConfig.configOptions).map((o) =>
            o.id === args.configId ? { ...o, currentValue: args.value } : o,
          );
          lastConfig = { ...lastConfig, configOptions };
          void deliver([{ kind: 'config-options', sessionId, configOptions }]);
        }
        return null;
      }
      case 'continue_session': {
        const from = options.restored?.sessions.find(
          (/** @type {any} */ r) => r.sessionId === args.sessionId,
        );
        if (!from) throw { code: 'invalid-input', message: `no stored session ${args.sessionId}` };
        return { id: options.registryId ?? sessionId, folder: from.folder, agent: from.agent };
      }
      case 'restored_sessions':
        return options.restored ?? { sessions: [], shown: null, startAtOnce: false };
      case 'set_open_sessions':
      case 'save_draft':
        return null;
      case 'list_files':
        return {
          files: options.files ?? ['README.md', 'notes.txt', 'src/main.rs'],
          truncated: false,
        };
      case 'history_status':
        return {
          recording: true,
          readOnly: false,
          file: '/home/demo/.local/share/acp-desk/history.sqlite3',
          notices: history.notices ?? [],
        };
      case 'history_list':
        return [...history.sessions].sort((a, b) => Number(b.updatedMs) - Number(a.updatedMs));
      case 'history_search': {
        const words = String(args.text).toLowerCase().split(/\s+/).filter(Boolean);
        if (words.length === 0) return [];
        /** @type {unknown[]} */
        const hits = [];
        for (const s of history.sessions) {
          const evs = history.transcripts[String(s.id)] ?? [];
          evs.forEach((e, i) => {
            const body = bodyOf(e);
            const lower = body.toLowerCase();
            if (body && words.every((w) => lower.includes(w))) {
              hits.push({
                sessionId: s.id,
                seq: i + 1,
                kind: e.kind,
                snippet: snippet(body, words),
                title: s.title ?? null,
                agent: s.agent,
                folder: s.folder,
                updatedMs: s.updatedMs,
              });
            }
          });
        }
        return hits.reverse();
      }
      case 'history_events': {
        const s = stored(String(args.id));
        const evs = history.transcripts[String(s.id)] ?? [];
        return { session: s, seqs: evs.map((_, i) => i + 1), events: evs, unreadable: 0 };
      }
      case 'history_delete': {
        const s = stored(String(args.id));
        history.sessions = history.sessions.filter((x) => x.id !== args.id);
        return `Deleted from the history, not at the agent (${s.agent}): it does not offer session/delete`;
      }
      case 'history_export': {
        stored(String(args.id));
        if (history.exportTo === null) return null;
        return (
          history.exportTo ?? `/home/demo/exported.${args.format === 'jsonl' ? 'jsonl' : 'md'}`
        );
      }
      case 'history_copy_id':
        stored(String(args.id));
        return null;
      case 'reconnect_session': {
        // Like the shell: the same session continues; its new agent's events come on the
        // channel already attached.
        void deliver((options.reconnect ?? []).map((e) => ({ ...e, sessionId })));
        return { id: args.session, folder, agent };
      }
      case 'history_continue': {
        // The live session that goes on: `attach` then replays the spec's transcript.
        const s = stored(String(args.id));
        return { id: sessionId, folder: s.folder, agent: s.agent };
      }
      case 'history_agent_sessions':
        return history.agentSessions ?? [];
      case 'history_import':
        return { id: sessionId, folder: args.folder, agent: args.agent };
      case 'history_send_context':
        stored(String(args.stored));
        return { reason: 'completed', stopReason: 'end_turn' };
      case 'login_start': {
        if (loginMock.needsConsent && !args.consent)
          throw {
            code: 'consent-needed',
            message: `signing in runs \`${loginMock.commandShown ?? 'acp-desk-demo-agent login'}\`, a program the agent named that is not its own: agree to run it, then start the sign-in again`,
          };
        const loginId = `login-${nextLogin++}`;
        const ch = { id: channelId(args.output), index: 0 };
        logins.set(loginId, { ch, line: '', session: typeof args.target?.sessionId === 'string' });
        setTimeout(() => {
          loginSend(ch, {
            kind: 'output',
            data:
              loginMock.prompt ??
              'ACP Desk demo agent: sign in.\r\nEnter the code shown on your other device: ',
          });
        }, 0);
        return {
          loginId,
          label: loginMock.label ?? 'Log in to the demo agent',
          commandShown: loginMock.commandShown ?? 'acp-desk-demo-agent login',
        };
      }
      case 'login_input': {
        const l = logins.get(String(args.loginId));
        if (!l)
          throw {
            code: 'invalid-input',
            message: `no login \`${args.loginId}\` is running (it has ended, or the window was reloaded): start the sign-in again`,
          };
        for (const c of String(args.data)) {
          if (c === '\r') {
            loginSend(l.ch, { kind: 'output', data: '\r\n' });
            const ok = l.line === (loginMock.code ?? 'demo');
            loginSend(l.ch, {
              kind: 'output',
              data: ok ? 'Signed in.\r\n' : 'That code is not right.\r\n',
            });
            if (ok && l.session) {
              void deliver((options.reconnect ?? []).map((e) => ({ ...e, sessionId })));
            }
            endLogin(String(args.loginId), { exitCode: ok ? 0 : 1, restarted: ok && l.session });
            break;
          }
          if (c === '\x7f') {
            if (l.line.length > 0) loginSend(l.ch, { kind: 'output', data: '\b \b' });
            l.line = l.line.slice(0, -1);
          } else {
            l.line += c;
            loginSend(l.ch, { kind: 'output', data: c });
          }
        }
        return null;
      }
      case 'login_resize':
        return null;
      case 'login_cancel':
        endLogin(String(args.loginId), { signal: 'SIGTERM', cancelled: true });
        return null;
      case 'project_mcp_offer':
        return projectOffer && projectOffer.files.length > 0 ? projectOffer : null;
      case 'project_mcp_decide': {
        const shown = projectOffer?.files.find(
          (/** @type {any} */ f) => f.file === args.file && f.digest === args.digest,
        );
        if (!shown)
          throw {
            code: 'project-config-changed',
            message: `${args.folder}/${args.file} changed since it was shown`,
          };
        projectOffer = {
          ...projectOffer,
          files: (projectOffer?.files ?? []).filter((/** @type {any} */ f) => f !== shown),
        };
        return null;
      }
      case 'project_mcp_restart': {
        void deliver((options.reconnect ?? []).map((e) => ({ ...e, sessionId })));
        return { id: args.session, folder, agent };
      }
      case 'agents_list':
        return listing;
      case 'agent_check': {
        const a = listed(String(args.id));
        if (agentsMock.checkMs) await wait(agentsMock.checkMs);
        const r = agentsMock.checks?.[a.id];
        if (r && 'code' in r && 'message' in r && !('steps' in r)) throw r;
        return (
          r ?? {
            agent: a.id,
            ok: true,
            steps: [
              { name: 'start', millis: 6, ok: true },
              { name: 'initialize', millis: 48, ok: true },
            ],
            agentName: 'acp-desk-demo',
            agentTitle: 'ACP Desk Demo',
            agentVersion: '0.1.0',
            protocolVersion: 1,
            capabilities: {
              loadSession: true,
              promptCapabilities: { image: true, audio: false, embeddedContext: true },
            },
            authMethods: [],
            differences: [],
            warnings: [],
          }
        );
      }
      case 'agent_install': {
        const a = listed(String(args.id));
        const at = { index: 0 };
        for (const step of agentsMock.installSteps ?? [
          { phase: 'downloading', downloaded: 2_100_000, total: 8_400_000 },
          { phase: 'downloading', downloaded: 6_300_000, total: 8_400_000 },
          { phase: 'verifying', downloaded: 8_400_000, total: 8_400_000 },
          { phase: 'extracting', downloaded: 8_400_000, total: 8_400_000 },
        ]) {
          await wait(agentsMock.installStepMs ?? 150);
          sendOn(args.onProgress, at, { agent: a.id, ...step });
        }
        const failed = agentsMock.installErrors?.[a.id];
        if (failed) throw failed;
        sendOn(args.onProgress, at, { agent: a.id, phase: 'installed', downloaded: 0 });
        listing = {
          ...listing,
          agents: listing.agents.map((/** @type {any} */ x) =>
            x.id === a.id ? { ...x, status: 'found', installable: false } : x,
          ),
        };
        return listing;
      }
      case 'agents_use_for_new_sessions':
        listed(String(args.id));
        listing = {
          ...listing,
          defaultAgent: args.id,
          defaultReason: 'the agent last chosen in the window',
        };
        return listing;
      case 'agents_import_registry':
        if (agentsMock.imported) listing = agentsMock.imported.listing;
        return agentsMock.imported ?? null;
      case 'agents_open_manifest':
      case 'agents_copy_install_command':
        listed(String(args.id));
        return null;
      case 'secrets_list':
        return secretsListing();
      case 'secret_set':
        if (!keychainUp) throw noKeychain();
        state.keychain[String(args.name)] = String(args.value);
        return secretsListing();
      case 'secret_delete':
        if (!keychainUp) throw noKeychain();
        if (!Object.hasOwn(state.keychain, String(args.name)))
          throw {
            code: 'invalid-input',
            message: `the keychain holds no secret \`${args.name}\` (removed meanwhile?): the list is up to date now`,
          };
        state.keychain = Object.fromEntries(
          Object.entries(state.keychain).filter(([k]) => k !== String(args.name)),
        );
        return secretsListing();
      case 'mcp_servers_list':
        return {
          settingsFile: settingsPath,
          servers: (secretsMock.servers ?? []).map((s) => ({
            notes: [],
            ...s,
            credentialStored:
              s.credential && keychainUp ? Object.hasOwn(state.keychain, s.credential) : undefined,
          })),
          problems: secretsMock.problems ?? [],
          keychainProblem: keychainUp ? undefined : noKeychain().message,
        };
      case 'sign_in_agent': {
        // As the shell: answered at once; the restart's start (with `authenticate`, which may
        // take `agentMs` while the agent has the browser open) arrives as events.
        if (options.signIn?.refuse) throw options.signIn.refuse;
        void signInRestart();
        return signInAnswer(true);
      }
      case 'agent_sign_in':
        if (options.signIn?.agentMs) await wait(options.signIn.agentMs);
        if (options.signIn?.refuse) throw options.signIn.refuse;
        return signInAnswer(false, String(args.agent));
      case 'sign_in_api_key': {
        if (!keychainUp) throw noKeychain();
        if (options.signIn?.refuse) throw options.signIn.refuse;
        const target = args.target ?? {};
        const who = target.agent ?? agent;
        state.keychain[`agent-auth/${who}/${args.methodId}`] = String(args.key);
        if (!target.sessionId) return signInAnswer(false, who);
        void signInRestart();
        return signInAnswer(true);
      }
      case 'sign_in_keep_prompt':
        state.kept = args.parts;
        return null;
      case 'checkpoint_list':
      case 'checkpoint_changes':
      case 'checkpoint_file':
      case 'checkpoint_revert':
      case 'checkpoint_restore':
        return checkpointCommand(cmd, args);
      case 'agents_open_settings':
      case 'open_settings_file':
      case 'close_session':
      case 'open_path':
      case 'reveal_path':
      case 'open_url':
      case 'pick_folder':
        return null;
      case 'plugin:window|set_title':
        return null;
      case 'plugin:event|listen': {
        const eventId = nextEventId++;
        const forEvent = listeners.get(args.event) ?? new Map();
        forEvent.set(eventId, args.handler);
        listeners.set(args.event, forEvent);
        return eventId;
      }
      case 'plugin:event|unlisten':
        listeners.get(args.event)?.delete(args.eventId);
        return null;
      default:
        throw { code: 'invalid-input', message: `mock IPC: no command ${cmd}` };
    }
  }

  /** @param {Record<string, unknown>} args */
  function recordable(args) {
    /** @type {Record<string, unknown>} */
    const copy = {};
    for (const [k, v] of Object.entries(args ?? {})) {
      const id = /** @type {any} */ (v)?.id;
      copy[k] =
        v !== null && typeof v === 'object' && typeof id === 'number' && 'onmessage' in v
          ? `__CHANNEL__:${id}`
          : v;
    }
    return JSON.parse(JSON.stringify(copy));
  }

  w.__TAURI_INTERNALS__ = {
    ...(w.__TAURI_INTERNALS__ ?? {}),
    invoke: (/** @type {string} */ cmd, /** @type {Record<string, any>} */ args) => {
      const recorded = recordable(args);
      if (cmd === 'secret_set') recorded.value = '<value>';
      if (cmd === 'sign_in_api_key') recorded.key = '<value>';
      state.calls.push({ cmd, args: recorded, at: performance.now() });
      return handle(cmd, args ?? {});
    },
    transformCallback: (/** @type {(d: unknown) => void} */ cb, once = false) => {
      const id = nextCallback++;
      callbacks.set(id, (data) => {
        if (once) callbacks.delete(id);
        cb?.(data);
      });
      return id;
    },
    unregisterCallback: (/** @type {number} */ id) => callbacks.delete(id),
    runCallback: (/** @type {number} */ id, /** @type {unknown} */ data) =>
      callbacks.get(id)?.(data),
    callbacks,
    convertFileSrc: (/** @type {string} */ p, protocol = 'asset') =>
      `${protocol}://localhost/${encodeURIComponent(p)}`,
    metadata: {
      currentWindow: { label: 'main' },
      currentWebview: { windowLabel: 'main', label: 'main' },
    },
  };
  w.__TAURI_EVENT_PLUGIN_INTERNALS__ = {
    unregisterListener: (/** @type {string} */ event, /** @type {number} */ id) => {
      listeners.get(event)?.delete(id);
    },
  };
}

/**
 * Reads a transcript: one StreamEvent JSON object per line (blank lines ignored).
 * @param {string} path
 * @returns {StreamEvent[]}
 */
export function readTranscript(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => /** @type {StreamEvent} */ (JSON.parse(l)));
}

/**
 * The events without the CLI's own close at the end (a last `session-status: dead` whose detail
 * is "Session closed."); an agent that died keeps its `dead`.
 * @param {StreamEvent[]} events
 * @returns {StreamEvent[]}
 */
export function withoutClose(events) {
  const last = events.at(-1);
  const closed =
    last?.kind === 'session-status' && last.status === 'dead' && last.detail === 'Session closed.';
  return closed ? events.slice(0, -1) : events;
}

/**
 * The part of Playwright's Page this module uses (so the bench can pass playwright-core's Page).
 * @typedef {object} PageLike
 * @property {(fn: (arg: MockSetup) => void, arg: MockSetup) => Promise<unknown>} addInitScript
 * @property {<R>(fn: () => R) => Promise<R>} evaluate
 */

/**
 * Installs the mock in `page` for its next navigation, replaying a transcript (a path, or the
 * events themselves). Navigate (page.goto('/')) afterwards.
 * @param {PageLike} page
 * @param {string | StreamEvent[]} transcript
 * @param {ReplayOptions} [options]
 * @returns {Promise<StreamEvent[]>} the events that will be replayed
 */
export async function replay(page, transcript, options = {}) {
  const all = typeof transcript === 'string' ? readTranscript(transcript) : transcript;
  const events = options.keepClose ? all : withoutClose(all);
  await page.addInitScript(installMockIpc, { events, options });
  return events;
}

/**
 * The IPC calls the page made so far (the event plugin's own calls left out unless asked).
 * @param {PageLike} page
 * @param {{ events?: boolean }} [opts]
 * @returns {Promise<IpcCall[]>}
 */
export async function calls(page, opts = {}) {
  const all = await page.evaluate(() => /** @type {any} */ (window).__acpMock.calls);
  return /** @type {IpcCall[]} */ (all).filter(
    (c) => opts.events || !c.cmd.startsWith('plugin:event|'),
  );
}

/**
 * Whether the replay has delivered everything it had (for `at: 'prompt'`: every turn).
 * @param {PageLike} page
 * @returns {Promise<boolean>}
 */
export async function replayed(page) {
  return page.evaluate(() => Boolean(/** @type {any} */ (window).__acpMock?.replayed));
}
