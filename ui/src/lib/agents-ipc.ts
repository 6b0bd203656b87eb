// The agents' IPC types, generated from the engine's (src-tauri/src/ipc.rs → generated/ipc.ts).
export type {
  AgentEntry,
  AgentListing,
  AgentSource,
  AgentStatus,
  CapabilityDifference,
  CheckReport,
  ConfigProblem,
  InstallProgress,
  ProblemSeverity,
} from './generated/ipc';
export type { RegistryImported } from './generated/ipc';
