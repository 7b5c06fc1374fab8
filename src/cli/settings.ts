import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { catalogCacheDir } from '../catalog/catalog-cache.js';
import { configToStart, resolveConfigPath } from '../config/config-path.js';
import { resolveProjectPath, type ResolvedProjectPath } from '../config/project-file.js';
import type { SecretSource } from '../config/secret-source.js';
import type { WorkbenchConfig } from '../config/types.js';
import type { StartSteps } from '../clients/start-steps.js';
import type { WorkbenchObserver } from '../core/call-events.js';
import { resolveSecretsPath } from '../secrets/secrets-path.js';
import { resolveStatePath } from '../state/path.js';
import { quietHost, type CliContext, type HostContext } from './context.js';

/**
 * What a runtime is built from, resolved once from the flags and the environment (this file is the one place that
 * does it), one small object per concern so that each function takes only the part it needs. Resolving never
 * touches the file system and never fails.
 */
export interface RuntimeSettings {
  host: HostContext;
  sources: ConfigSources;
  state: StateSettings;
  session: SessionSettings;
  catalog: CatalogSettings;
  auth: AuthSettings;
  /** `--audit-log PATH` (serving); absent when no audit log is kept. */
  audit?: AuditSettings;
  /** Told of every call and toolbox open (the debug call log). */
  observer?: WorkbenchObserver;
  /** WORKBENCH_MAX_MESSAGE_BYTES (serving): the limit for a client's messages; absent for the built-in default. */
  maxMessageBytes?: number;
  /**
   * What a server that cannot start tells the reader to do next, for the config loaded (a command's: the `doctor` to
   * run with it, see cliSteps); absent (serving), the model's words.
   */
  startSteps?: (config: WorkbenchConfig) => StartSteps;
  /** WORKBENCH_NOISE_WINDOW_SECONDS (serving): the window of a stdio server's stdout noise; absent for a minute. */
  noiseWindowMs?: number;
}

/** The files the config is made of, and whether to follow them. */
export interface ConfigSources {
  /** `--config`, else WORKBENCH_CONFIG, else ./workbench-config.json. */
  configPath: string;
  /** True when `--config` or WORKBENCH_CONFIG named it; servers are started only from a named config. */
  configNamed: boolean;
  /** `--project DIR`, else the start directory: where `.mcp-workbench.json` is. */
  project: ResolvedProjectPath;
  /** Follow edits of the config, project and secret files (serving); one-shot commands leave it off. */
  watch: boolean;
  /** Opens the secret store for `${secret:NAME}` (a fresh snapshot at every load and reload); never rejects. */
  secrets?: () => Promise<SecretSource>;
  /** The secret file, followed like the config so a `secret set` applies without a restart. */
  secretsFile?: string;
}

/** The tool state file and how a running process treats it. */
export interface StateSettings {
  /** `--state-file`, else WORKBENCH_STATE_FILE, else ~/.mcp-workbench/tool-state.json. */
  path: string;
  /**
   * `serve` (stdio or HTTP): a broken state file does not stop the start; the workbench fails closed until it is good
   * again, follows the file (and the pins beside it), records first sightings, and keeps a copy of broken content
   * beside it. Otherwise (`tools list`) a broken state file is an error and nothing is written.
   */
  serving: boolean;
}

/** What a client session is offered. */
export interface SessionSettings {
  /** `--disabled-tools`: names or globs hidden besides the config's and the state file's. */
  disabledTools?: string[];
  /** `--toolset`: limit the session to these toolsets. */
  toolsets?: string[];
  /** `--management-tools`: offer list_all_tools and enable_tools. */
  managementTools: boolean;
}

export interface CatalogSettings {
  /** `--catalog-budget` (characters); absent for the config's or the default. */
  budget?: number;
  /** The catalog cache's directory; absent with `--no-catalog-cache`. */
  cacheDir?: string;
}

/** How an OAuth sign-in is started (README "Remote servers behind OAuth"). */
export interface AuthSettings {
  /** `--no-browser` sets this to false: a server that needs a sign-in fails at once, naming `auth login`. */
  browser: boolean;
  /** Said in place of opening a browser, when `browser` is false for a reason of the command's own. */
  noBrowserReason?: string;
}

/** `--audit-log PATH`: one JSON line per call and toolbox open, rotated by size. */
export interface AuditSettings {
  path: string;
  maxBytes?: number;
  keep?: number;
}

/** The flags of `serve` that shape its runtime (the HTTP ones are serve-http.ts's). */
export interface ServeRuntimeFlags {
  config?: string;
  disabledTools?: string[];
  stateFile?: string;
  managementTools?: boolean;
  toolset?: string[];
  project?: string;
  catalogBudget?: number;
  catalogCache?: boolean;
  browser?: boolean;
  auditLog?: string;
  auditLogMaxBytes?: number;
  auditLogKeep?: number;
}

/** The settings both ways of serving share: config, project and secret files followed, the state file served. */
export function serveSettings(flags: ServeRuntimeFlags, ctx: CliContext): RuntimeSettings {
  const { env, cwd, log } = ctx;
  return {
    host: { env, cwd, log },
    sources: {
      ...configSources(flags, ctx, true),
      secrets: ctx.secretSource,
      secretsFile: resolveSecretsPath({ env, homedir: env.HOME || homedir(), cwd }).path,
    },
    state: { path: stateFilePath(flags.stateFile, ctx), serving: true },
    session: { disabledTools: flags.disabledTools, toolsets: flags.toolset, managementTools: flags.managementTools === true },
    catalog: catalogSettings(flags.catalogBudget, flags.catalogCache !== false, env),
    auth: { browser: flags.browser !== false },
    ...(flags.auditLog !== undefined && { audit: { path: resolve(cwd, flags.auditLog), maxBytes: flags.auditLogMaxBytes, keep: flags.auditLogKeep } }),
    observer: ctx.callLogger(),
    maxMessageBytes: maxMessageBytes(ctx),
    noiseWindowMs: noiseWindowMs(ctx),
  };
}

/** The flags of a one-shot command (`tools list`, `search`, `call`, `approve`, `diff`) that shape its runtime. */
export interface OneShotFlags {
  config?: string;
  stateFile?: string;
  project?: string;
  disabledTools?: string[];
  toolsets?: string[];
}

/**
 * A one-shot command's runtime: nothing is followed, a broken state file is an error, nothing is recorded, the
 * catalog cache is used, `${secret:NAME}` is read from the secret store, a browser may open for a sign-in, and
 * connection chatter is muted (warnings and errors still show). `observer` only when the command gives one.
 */
export function oneShotSettings(flags: OneShotFlags, ctx: CliContext, observer?: WorkbenchObserver): RuntimeSettings {
  const host = quietHost(ctx);
  return {
    host,
    sources: { ...configSources(flags, host, false), secrets: ctx.secretSource },
    state: { path: stateFilePath(flags.stateFile, host), serving: false },
    session: { disabledTools: flags.disabledTools, toolsets: flags.toolsets, managementTools: false },
    catalog: catalogSettings(undefined, true, host.env),
    auth: { browser: true },
    ...(observer && { observer }),
  };
}

/** The state file for `--state-file` (or WORKBENCH_STATE_FILE, or the default under the home directory). */
export function stateFilePath(flag: string | undefined, host: Pick<HostContext, 'env' | 'cwd'>): string {
  return resolveStatePath({ flag, env: host.env, homedir: host.env.HOME || homedir(), cwd: host.cwd });
}

/**
 * The config file for `--config` (or WORKBENCH_CONFIG, or ./workbench-config.json): the one way every command finds
 * it, whether it reads, edits or writes the file. Never touches the file system.
 */
export function configFilePath(flag: string | undefined, host: Pick<HostContext, 'env' | 'cwd'>): string {
  return resolveConfigPath({ flag, env: host.env, cwd: host.cwd }).path;
}

/**
 * The config file a command that starts servers uses: named by `--config` or WORKBENCH_CONFIG, never found only as
 * ./workbench-config.json in the start directory (README "Use it from your MCP client").
 * @throws WorkbenchError `CONFIG_NOT_NAMED`
 */
export function namedConfigPath(flag: string | undefined, host: Pick<HostContext, 'env' | 'cwd'>): string {
  return configToStart(resolveConfigPath({ flag, env: host.env, cwd: host.cwd }));
}

/** `--config` and `--project` resolved against the host (never touches the file system); no secret store. */
export function configSources(flags: { config?: string; project?: string }, host: Pick<HostContext, 'env' | 'cwd'>, watch: boolean): ConfigSources {
  const resolved = resolveConfigPath({ flag: flags.config, env: host.env, cwd: host.cwd });
  return {
    configPath: resolved.path,
    configNamed: resolved.origin !== 'default',
    project: resolveProjectPath({ flag: flags.project, cwd: host.cwd }),
    watch,
  };
}

function catalogSettings(budget: number | undefined, cache: boolean, env: Record<string, string | undefined>): CatalogSettings {
  return { ...(budget !== undefined && { budget }), ...(cache && { cacheDir: catalogCacheDir(env, env.HOME || homedir()) }) };
}

/** WORKBENCH_MAX_MESSAGE_BYTES: a positive integer, else the built-in default (with a warning if it was set). */
function maxMessageBytes({ env, log }: CliContext): number | undefined {
  const raw = env.WORKBENCH_MAX_MESSAGE_BYTES;
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0) return value;
  log.warn(`ignoring WORKBENCH_MAX_MESSAGE_BYTES="${raw}": expected a positive whole number of bytes`);
  return undefined;
}

/** The longest noise window: an hour. */
const MAX_NOISE_WINDOW_SECONDS = 3_600;

/**
 * WORKBENCH_NOISE_WINDOW_SECONDS: a whole number of seconds from 1 to an hour, else the built-in minute (with a
 * warning if it was set). README "Downstream servers: lifecycle, timeouts and limits", Noise.
 */
function noiseWindowMs({ env, log }: CliContext): number | undefined {
  const raw = env.WORKBENCH_NOISE_WINDOW_SECONDS;
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0 && value <= MAX_NOISE_WINDOW_SECONDS) return value * 1000;
  log.warn(`ignoring WORKBENCH_NOISE_WINDOW_SECONDS="${raw}": expected a whole number of seconds from 1 to ${MAX_NOISE_WINDOW_SECONDS}; a server's stdout noise is counted per minute`);
  return undefined;
}
