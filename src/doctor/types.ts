import { DEFAULT_CONNECT_TIMEOUT_MS } from '../clients/limits.js';
import type { StartSteps } from '../clients/start-steps.js';
import type { OAuthContext } from '../oauth/sign-in.js';
import type { SecretSource } from '../config/secret-source.js';
import type { ServerConfig, ServerProblem } from '../config/types.js';
import type { Logger } from '../log.js';

/** What `doctor` reports, and its defaults. */

/** The same as serving (README: `connectTimeoutMs`): a first `npx -y` start downloads, and a check must not fail it. */
export const DEFAULT_DOCTOR_TIMEOUT_MS = DEFAULT_CONNECT_TIMEOUT_MS;

/** Longest canonical tool name some clients accept (several register tool names matching ^[a-zA-Z0-9_-]{1,64}$). */
export const MAX_CANONICAL_NAME_LENGTH = 64;

/** `misconfigured`: its config entry cannot start as written (an unset variable, a malformed URL); see `problems`. */
export type FailureKind = 'command-not-found' | 'misconfigured' | 'exited' | 'timeout' | 'http-status' | 'unreachable' | 'needs-sign-in' | 'interrupted' | 'error';

export interface DoctorFailure {
  kind: FailureKind;
  /** Short form for one line: "exited with code 3", "HTTP 401 Unauthorized", … */
  summary: string;
  /** The full explanation, with what to do. */
  message: string;
  exitCode?: number;
  signal?: string;
  /** Last lines the process wrote to stderr. */
  stderr?: string[];
  httpStatus?: number;
  /** What is wrong with its config entry and how to fix it (kind "misconfigured"). */
  problems?: ServerProblem[];
}

export type ProblemKind =
  | 'duplicate-name'
  | 'name-characters'
  | 'canonical-name-too-long'
  | 'schema-root-not-object'
  | 'schema-root-combinator'
  | 'schema-external-ref'
  | 'schema-not-compilable'
  | 'stdout-noise'
  | 'server-warning'
  /** Held until approved: new or changed since its tools were approved (README "Pinned tool definitions"). */
  | 'tool-held'
  /** New or changed since approved, still usable (`toolChanges: "warn"`). */
  | 'tool-unapproved';

export interface CatalogProblem {
  kind: ProblemKind;
  severity: 'error' | 'warning';
  message: string;
  /** The tools concerned (downstream names), or the lines logged. */
  items: string[];
}

export interface ServerReport {
  toolbox: string;
  server: string;
  type: ServerConfig['type'];
  connected: boolean;
  /** Time from start to a listed catalog (or to the failure), in milliseconds. */
  connectMs: number;
  timeoutMs: number;
  tools?: number;
  /**
   * The protocol the server spoke (connected servers only): `legacy` (the initialize handshake, ≤ 2025-11-25) or
   * `modern` (2026-07-28, no handshake), and the negotiated version.
   */
  protocol?: { era: 'legacy' | 'modern'; version?: string };
  failure?: DoctorFailure;
  problems: CatalogProblem[];
}

export interface DoctorReport {
  config: string;
  ok: boolean;
  /** The `--timeout` given, else null (each server's connectTimeoutMs, else the default). */
  timeoutMs: number | null;
  interrupted: boolean;
  toolboxes: { name: string; servers: ServerReport[] }[];
  summary: { servers: number; connected: number; failed: number; errors: number; warnings: number };
}

export interface DoctorProgress {
  total: number;
  done: number;
  failed: number;
  /** `toolbox/server` of the checks still running. */
  pending: string[];
}

export interface DoctorOptions {
  /** The config file, resolved by the caller exactly as `serve` resolves it. */
  configPath: string;
  /** The tool-state file, resolved as `serve` resolves it: its tool-pins.json beside it says which definitions are approved. */
  statePath: string;
  toolbox?: string;
  timeoutMs?: number;
  env: Record<string, string | undefined>;
  log: Logger;
  /** Opens the secret store for `${secret:NAME}`; without it every such reference is its server's problem. */
  secrets?: () => Promise<SecretSource>;
  onProgress?: (progress: DoctorProgress) => void;
  /** Aborting closes every connection at once; the report then has `interrupted: true`. */
  signal?: AbortSignal;
  /** OAuth sign-ins of remote servers (doctor opens no browser: a server that needs one is reported with the command). */
  oauth?: OAuthContext;
  /** What a report of a server that cannot start says to do next (the CLI's: doctorSteps); without it, the model's words. */
  startSteps?: StartSteps;
}
