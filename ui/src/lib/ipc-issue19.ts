// TEMPORARY: issue 19's IPC shapes as /work/coord/api.md has them, until the Rust types and the
// regenerated `generated/ipc.ts` land on main. Replaced by imports from `./generated/ipc`.
import type { BackgroundTaskInfo as SeedTask, BackgroundTaskPhase } from './generated/ipc';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

export type BackgroundTaskInfo = SeedTask & {
  name?: string | null;
  canStop?: boolean | null;
  settledBy?: 'agent' | 'session-end' | null;
};

export interface ElicitationOption {
  value: string;
  title: string;
  description?: string | null;
}

export interface ElicitationField {
  name: string;
  title?: string | null;
  description?: string | null;
  required: boolean;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'select' | 'multi-select' | 'unsupported';
  format?: 'email' | 'uri' | 'date' | 'date-time' | null;
  minLength?: number | null;
  maxLength?: number | null;
  pattern?: string | null;
  minimum?: number | null;
  maximum?: number | null;
  minItems?: number | null;
  maxItems?: number | null;
  options?: ElicitationOption[] | null;
  default?: JsonValue;
  note?: string | null;
}

export interface ElicitationEvent {
  sessionId: string;
  requestId: string;
  mode: 'form' | 'url';
  message: string;
  toolCallId?: string | null;
  title?: string | null;
  description?: string | null;
  fields?: ElicitationField[] | null;
  url?: string | null;
  host?: string | null;
}

export type SettledBy = 'user' | 'rule' | 'stop' | 'agent' | 'watchdog';

export type ElicitationAnswerValue = string | number | boolean | string[];

export type ElicitationAnswer =
  | { action: 'accept'; content?: { [field: string]: ElicitationAnswerValue } | null }
  | { action: 'decline' }
  | { action: 'cancel' };

export interface FieldError {
  field: string;
  message: string;
}

export type Issue19Event =
  | (ElicitationEvent & { kind: 'elicitation' })
  | {
      kind: 'elicitation-settled';
      sessionId: string;
      requestId: string;
      action: 'accept' | 'decline' | 'cancel';
      by: SettledBy;
      awaitingCompletion?: boolean | null;
    }
  | { kind: 'elicitation-complete'; sessionId: string; requestId: string }
  | {
      kind: 'background-task';
      sessionId: string;
      phase: BackgroundTaskPhase;
      task: BackgroundTaskInfo;
    };

/** The IPC errors issue 19 adds (`invalid-answer` carries the fields' errors). */
export type Issue19Error =
  | { code: 'invalid-answer'; message: string; errors: FieldError[] }
  | { code: 'task-not-stoppable'; message: string };

/** The commands issue 19 adds (until `CommandName` is regenerated). */
export type Issue19Command = 'elicitation_answer' | 'background_task_stop';
