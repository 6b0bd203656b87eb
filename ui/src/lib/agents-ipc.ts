// PROVISIONAL: the agents' IPC types as /work/coord/agents-api.md describes them, until the
// engine's types are merged and `npm run gen:types` writes them into generated/ipc.ts. Then this
// file becomes re-exports from there.

export type AgentSource = 'builtin' | 'registry' | 'settings' | 'manifest';
export type AgentStatus =
  'found' | 'downloads' | 'missing' | 'not-installed' | 'unavailable' | 'unsupported' | 'invalid';
export type ProblemSeverity = 'error' | 'warning';

export interface ConfigProblem {
  file: string;
  line?: number | null;
  column?: number | null;
  field?: string | null;
  message: string;
  severity: ProblemSeverity;
}

export interface CapabilityDifference {
  path: string;
  declared?: unknown;
  reported?: unknown;
}

export interface AgentEntry {
  id: string;
  name: string;
  description?: string | null;
  version?: string | null;
  source: AgentSource;
  alsoDefinedIn: AgentSource[];
  origin?: string | null;
  command: string;
  envNames: string[];
  status: AgentStatus;
  hint?: string | null;
  installCommand?: string | null;
  installable: boolean;
  manifestFile?: string | null;
  problems: ConfigProblem[];
}

export interface RegistryInfo {
  kind: string;
  commit?: string | null;
  date?: string | null;
  file?: string | null;
  agents: number;
}

export interface AgentListing {
  agents: AgentEntry[];
  defaultAgent: string;
  defaultReason: string;
  settingsFile: string;
  problems: ConfigProblem[];
  registry?: RegistryInfo | null;
}

export interface CheckStep {
  name: string;
  millis: number;
  ok: boolean;
}
export interface AuthMethodInfo {
  id: string;
  name: string;
  description?: string | null;
}
export type CheckFailureKind =
  | 'not-installed'
  | 'not-executable'
  | 'exited'
  | 'not-json'
  | 'no-answer'
  | 'protocol-version'
  | 'invalid-answer'
  | 'other';
export interface CheckFailure {
  kind: CheckFailureKind;
  message: string;
  fix: string;
}
export interface CheckReport {
  agent: string;
  ok: boolean;
  steps: CheckStep[];
  agentName?: string | null;
  agentTitle?: string | null;
  agentVersion?: string | null;
  protocolVersion?: number | null;
  capabilities?: unknown;
  authMethods: AuthMethodInfo[];
  failure?: CheckFailure | null;
  differences: CapabilityDifference[];
}

/** How far an install is (the shell's own type, `src-tauri/src/agents.rs`). */
export interface InstallProgress {
  stage: 'download' | 'verify' | 'extract' | 'done';
  /** Bytes downloaded so far (download), else 0. */
  bytes: number;
  /** The archive's size when the server said it. */
  total?: number | null;
}
