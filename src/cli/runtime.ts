import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { CatalogCache, catalogCacheDir } from '../catalog/catalog-cache.js';
import { keepCopy, readToolState } from '../state/read.js';
import { resolveStatePath } from '../state/path.js';
import { pinsPathFor, readPins, watchPins } from '../state/pins.js';
import { type BrokenState, watchToolState } from '../state/watch.js';
import { loadConfig } from '../config/load.js';
import { resolveConfigPath } from '../config/config-path.js';
import { brokenServerWarning, brokenServers, noServerCanStartError } from '../config/server-problems.js';
import { applyProject, loadProjectFile, resolveProjectPath } from '../config/project-file.js';
import type { SecretSource } from '../config/secret-source.js';
import type { WorkbenchConfig } from '../config/types.js';
import { snapshotFiles, watchConfigFiles } from '../config/watch.js';
import { toolsetWarnings } from '../catalog/toolsets.js';
import { WorkbenchError, errorMessage, isWorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { Workbench, type WorkbenchOptions } from '../core/workbench.js';
import type { WorkbenchObserver } from '../core/call-events.js';
import { openAuditLog } from '../audit/audit-log.js';
import { VERSION } from '../version.js';
import { resolveOAuthDir } from '../oauth/oauth-path.js';
import type { OAuthContext } from '../oauth/sign-in.js';
import { OAuthStore } from '../oauth/token-store.js';

/** Options shared by every way of serving (stdio, HTTP). */
export interface RuntimeOptions {
  config?: string;
  disabledTools?: string[];
  /** `--state-file`; else WORKBENCH_STATE_FILE, else ~/.mcp-workbench/tool-state.json. */
  stateFile?: string;
  /** Offer list_all_tools and enable_tools. */
  managementTools?: boolean;
  /** `--project DIR`: where `.mcp-workbench.json` is; else the start directory `cwd`. */
  project?: string;
  /** `--toolset`: limit the session to these toolsets. */
  toolsets?: string[];
  /** Follow edits of the config and project files (serving); one-shot commands leave it off. */
  watchConfig?: boolean;
  /**
   * `serve` (stdio or HTTP): a broken state file does not stop the start; the workbench fails closed until it is good
   * again, follows the file, and keeps a copy of broken content beside it. Otherwise (`tools list`) a broken state
   * file is an error and nothing is written.
   */
  serving?: boolean;
  maxMessageBytes?: number;
  /** `--catalog-budget` (characters). */
  catalogBudget?: number;
  /** `--no-catalog-cache` sets this to false. */
  catalogCache?: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
  log: Logger;
  /** Told of every call and toolbox open (the debug call log). */
  observer?: WorkbenchObserver;
  /** `--audit-log PATH` (serving): one JSON line per call and toolbox open, rotated by size. */
  auditLog?: { path: string; maxBytes?: number; keep?: number };
  /** Opens the secret store for `${secret:NAME}` (a fresh snapshot at every load and reload); never rejects. */
  secrets?: () => Promise<SecretSource>;
  /** The secret file, followed like the config so a `secret set` applies without a restart. */
  secretsFile?: string;
  /** `--no-browser` sets this to false: a server that needs an OAuth sign-in fails at once, naming `auth login`. */
  browser?: boolean;
}

export interface Runtime {
  config: WorkbenchConfig;
  workbench: Workbench;
  statePath: string;
  /** Ends every downstream connection and watcher; resolves when children are gone. */
  close(): Promise<void>;
}

/**
 * Loads the config and builds the shared Workbench that every client session talks to. Nothing downstream is
 * started here: servers start when a toolbox is first opened. A server whose entry has problems (an unset variable,
 * a malformed URL) is warned about once and fails alone when used.
 *
 * @throws WorkbenchError the loader's errors; and, when the config has servers but none of them could ever start,
 *   the error naming every problem at once (`ENV_MISSING` when they are all unset variables).
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const source = await loadRuntimeConfig(options);
  const { config } = source;
  const statePath = stateFilePath(options);
  const read = await readToolState(statePath, options.log);
  // Fail closed (README "Enabled and disabled tools"): never the defaults in place of a file that does not parse.
  if (read.problem && !options.serving) throw read.problem;
  const pinsPath = pinsPathFor(statePath);
  const pins = { path: pinsPath, read: await readPins(pinsPath), record: options.serving === true };
  const audit = options.auditLog && (await openAuditLog(options.auditLog.path, { ...options.auditLog, log: options.log }));
  if (audit) options.log.info(`audit log: ${options.auditLog!.path}`);
  const observer = chainObservers(options.observer, audit ? (event) => audit.record(event) : undefined);
  const workbench = createWorkbench(options, config, read, pins, observer);
  // Approvals (`tools approve` in another process) apply to a running server at once.
  const pinsWatcher = options.serving ? watchPins(pinsPath, (next) => workbench.setPins(next), options.log) : undefined;
  if (read.problem) await reportBrokenState(statePath, read, false, options.log);
  const watcher = options.serving ? followStateFile(workbench, statePath, read, options.log) : undefined;
  const configWatcher = options.watchConfig ? followConfig(workbench, source, options.log) : undefined;
  return {
    config,
    workbench,
    statePath,
    close: async () => {
      configWatcher?.close();
      watcher?.close();
      pinsWatcher?.close();
      await workbench.close();
      // After the workbench: calls cut short by the shutdown are recorded too.
      await audit?.close();
    },
  };
}

/**
 * Loads the config with the project file applied, warns about what it holds (once), and returns it with what
 * following it needs: every file it is made of and their content before it was read (when `watchConfig`).
 */
async function loadRuntimeConfig(options: RuntimeOptions): Promise<ConfigSource & { config: WorkbenchConfig }> {
  const { path } = resolveConfigPath({ flag: options.config, env: options.env, cwd: options.cwd });
  const projectPath = resolveProjectPath({ flag: options.project, cwd: options.cwd });
  const load = async (): Promise<WorkbenchConfig> => {
    const loaded = applyProject(await loadConfig(path, options.env, { secrets: options.secrets }), await loadProjectFile(projectPath));
    const fatal = noServerCanStartError(loaded);
    if (fatal) throw fatal;
    return loaded;
  };
  const warnBroken = brokenServerWarner(options.log);
  // The secret file only when its directory exists: a user without secrets gets no warning about following it.
  const secretsFile = options.secretsFile && existsSync(dirname(options.secretsFile)) ? [options.secretsFile] : [];
  const files = [path, projectPath.path, ...secretsFile];
  const baseline = options.watchConfig ? await snapshotFiles(files) : '';
  const config = await load();
  for (const warning of [...config.warnings, ...toolsetWarnings(config)]) options.log.warn(warning);
  warnBroken(config);
  if (config.project) options.log.info(`project file ${config.project.source} applies`);
  return { path, files, baseline, load, warnBroken, config };
}

/** The shared Workbench for these options, over the state and pins as read at start. */
function createWorkbench(
  options: RuntimeOptions,
  config: WorkbenchConfig,
  read: Awaited<ReturnType<typeof readToolState>>,
  pins: WorkbenchOptions['pins'],
  observer: WorkbenchObserver | undefined,
): Workbench {
  return new Workbench({
    config,
    env: options.env,
    log: options.log,
    version: VERSION,
    cliDisabled: options.disabledTools,
    maxMessageBytes: options.maxMessageBytes,
    catalogBudget: options.catalogBudget,
    oauth: oauthContext(options),
    observer,
    catalogCache: options.catalogCache === false ? undefined : new CatalogCache(catalogCacheDir(options.env, options.env.HOME || homedir()), options.log),
    state: read.state,
    ...(read.problem && { stateProblem: read.problem }),
    ...(options.toolsets && options.toolsets.length > 0 && { sessionToolsets: options.toolsets }),
    pins,
  });
}

/** Where OAuth sign-ins are kept and how one is started (README "Remote servers behind OAuth"). */
export function oauthContext(options: Pick<RuntimeOptions, 'env' | 'cwd' | 'log' | 'browser'> & { noBrowserReason?: string }): OAuthContext {
  return {
    ...(options.noBrowserReason && { noBrowserReason: options.noBrowserReason }),
    store: new OAuthStore(resolveOAuthDir({ env: options.env, homedir: options.env.HOME || homedir(), cwd: options.cwd }), options.log),
    env: options.env,
    platform: process.platform,
    browser: options.browser !== false,
    announce: (message) => options.log.warn(message),
  };
}

/** One observer telling each of these in turn (undefined when none). */
export function chainObservers(...observers: (WorkbenchObserver | undefined)[]): WorkbenchObserver | undefined {
  const present = observers.filter((o): o is WorkbenchObserver => o !== undefined);
  if (present.length <= 1) return present[0];
  return (event) => {
    for (const observer of present) observer(event);
  };
}

/** Warns about each server of a loaded config that cannot start: once, at start, and on a reload only when new. */
function brokenServerWarner(log: Logger): (config: WorkbenchConfig) => void {
  const warned = new Set<string>();
  return (config) => {
    for (const { toolbox, server, problems } of brokenServers(config)) {
      const warning = brokenServerWarning(toolbox, server, problems);
      if (!warned.has(warning)) log.warn(warning);
      warned.add(warning);
    }
  };
}

/**
 * Says on stderr that the state file is broken (file, line:column, fix) and what the workbench does meanwhile, after
 * keeping a copy of its content beside it (once per distinct content; the file itself is never touched).
 */
async function reportBrokenState(path: string, broken: BrokenState, lastGood: boolean, log: Logger): Promise<void> {
  const copy = broken.bytes ? await keepCopy(path, broken.bytes, log) : undefined;
  const shown = lastGood ? 'open_toolbox shows the tools as of its last good content' : 'open_toolbox answers with this error';
  log.error(
    `${broken.problem.message} Until then no tool call is forwarded and ${shown}; the file is watched, and calls resume ` +
      `as soon as it is good again (no restart needed).${copy ? ` A copy of its current content is kept at ${copy}.` : ''}`,
  );
}

/** The state file for these options (flag, WORKBENCH_STATE_FILE, or the default under the home directory). */
export function stateFilePath(options: { stateFile?: string; env: Record<string, string | undefined>; cwd: string }): string {
  return resolveStatePath({ flag: options.stateFile, env: options.env, homedir: options.env.HOME || homedir(), cwd: options.cwd });
}

/** How long shutdown may take before the process exits anyway (children get SIGKILL well within this). */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/**
 * Calls `stop` once on SIGINT, SIGTERM or any of `extraTriggers`, and resolves with exit code 0 when it finishes
 * or when the deadline passes.
 */
export function untilShutdown(log: Logger, stop: () => Promise<unknown>, register: (trigger: (why: string) => void) => void = () => {}): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    const trigger = (why: string): void => {
      if (stopping) return;
      stopping = true;
      log.info(`shutting down (${why})`);
      const deadline = setTimeout(() => {
        log.warn(`shutdown took longer than ${SHUTDOWN_DEADLINE_MS} ms; exiting anyway`);
        resolve(0);
      }, SHUTDOWN_DEADLINE_MS);
      deadline.unref();
      void Promise.allSettled([stop()]).then(() => {
        clearTimeout(deadline);
        resolve(0);
      });
    };
    // `on`, not `once`: a second signal must not find this process without a listener of ours. signal-exit (used by
    // write-file-atomic and proper-lockfile while a write or lock is in progress) re-raises a signal and so kills the
    // process when it sees no other listener — which would cut shutdown short and leave a half-written file behind.
    process.on('SIGINT', () => trigger('SIGINT'));
    process.on('SIGTERM', () => trigger('SIGTERM'));
    register(trigger);
  });
}

/** A running server follows changes of its tool state file from `tools enable|disable`, another workbench or an editor. */
function followStateFile(workbench: Workbench, statePath: string, read: Awaited<ReturnType<typeof readToolState>>, log: Logger): { close(): void } {
  return watchToolState(
    statePath,
    (next) => {
      log.info(`tool state changed in ${statePath}: ${next.enabled.length} enabled, ${next.disabled.length} disabled pattern(s)`);
      workbench.setState(next);
    },
    log,
    {
      initial: read.problem ? read : read.state,
      onProblem: (broken) => {
        // The state (if any) was delivered before a repair is reported, so calls resume under the file's content.
        workbench.setStateProblem(broken?.problem);
        if (broken) void reportBrokenState(statePath, broken, workbench.brokenState()?.lastGood === true, log);
        else log.info(`tool state file ${statePath} is good again: tool calls are forwarded again`);
      },
    },
  );
}

/** What following the config needs: its path, every file it is made of, their content at load, and how to load it. */
interface ConfigSource {
  path: string;
  files: string[];
  baseline: string;
  load(): Promise<WorkbenchConfig>;
  warnBroken(config: WorkbenchConfig): void;
}

/** A running server follows edits of its config and project file; an invalid edit leaves the previous one serving. */
function followConfig(workbench: Workbench, source: ConfigSource, log: Logger): { close(): void } {
  return watchConfigFiles({
    files: source.files,
    baseline: source.baseline,
    log,
    apply: async () => {
      const next = await source.load();
      const { replaced, removed } = workbench.reload(next);
      workbench.setConfigProblem(undefined);
      for (const warning of [...next.warnings, ...toolsetWarnings(next)]) log.warn(warning);
      source.warnBroken(next);
      const changes = [
        replaced.length > 0 ? `restarting on next use: ${replaced.join(', ')}` : '',
        removed.length > 0 ? `closing: ${removed.join(', ')}` : '',
      ].filter(Boolean);
      log.info(
        `config reloaded from ${source.path}${next.project ? ` and ${next.project.source}` : ''}: ${next.toolboxes.length} toolbox(es), ${(next.toolsets ?? []).length} toolset(s)${changes.length > 0 ? `; ${changes.join('; ')}` : ''}`,
      );
    },
    onInvalid: (error) => {
      log.error(`config change not applied, the previous config keeps serving: ${errorMessage(error)}`);
      workbench.setConfigProblem(isWorkbenchError(error) ? error : new WorkbenchError('CONFIG_INVALID', `${source.path}: ${errorMessage(error)}`, { cause: error }));
    },
  });
}
