import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { CatalogCache } from '../catalog/catalog-cache.js';
import { keepCopy, readToolState } from '../state/read.js';
import { type PinsWatch, type ValidPins, pinsPathFor, readPins, watchPins } from '../state/pins.js';
import { type BrokenState, type ToolStateWatch, watchToolState } from '../state/watch.js';
import { type BoundStateUpdate, updateToolState } from '../state/update.js';
import { loadConfig } from '../config/load.js';
import { configToStart } from '../config/config-path.js';
import { brokenServerWarning, brokenServers, noServerCanStartError, serverProblemCode } from '../config/server-problems.js';
import { applyProject, loadProjectFile } from '../config/project-file.js';
import type { WorkbenchConfig } from '../config/types.js';
import { snapshotFiles, watchConfigFiles } from '../config/watch.js';
import { patternWarnings, refuseUnknownToolsets, unreachablePatterns, unreachableReason } from '../catalog/toolsets.js';
import { WorkbenchError, errorMessage, isWorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { Workbench, type WorkbenchOptions } from '../core/workbench.js';
import { usersDirBeside } from '../clients/user-places.js';
import type { WorkbenchObserver } from '../core/call-events.js';
import { openAuditLog } from '../audit/audit-log.js';
import { VERSION } from '../version.js';
import { resolveOAuthDir } from '../oauth/oauth-path.js';
import type { OAuthContext } from '../oauth/sign-in.js';
import { OAuthStore } from '../oauth/token-store.js';
import type { HostContext } from './context.js';
import { toolsListCommand } from './next-command.js';
import type { AuthSettings, ConfigSources, RuntimeSettings } from './settings.js';

export interface Runtime {
  config: WorkbenchConfig;
  workbench: Workbench;
  statePath: string;
  /**
   * Changes the state file (a locked read-modify-write) and applies the result before the lock is released, so the
   * next call agrees with it and the file's watcher never mistakes it, or an older read, for a newer change.
   */
  updateState: BoundStateUpdate;
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
export async function createRuntime(settings: RuntimeSettings): Promise<Runtime> {
  const { host, state } = settings;
  const source = await loadRuntimeConfig(settings.sources, host);
  const { config } = source;
  refuseBlindPatterns(settings.session.disabledTools ?? [], config);
  refuseUnknownToolsets(config, settings.session.toolsets ?? [], 'USAGE');
  const statePath = state.path;
  const read = await readToolState(statePath, host.log);
  // Fail closed (README "Enabled and disabled tools"): never the defaults in place of a file that does not parse.
  if (read.problem && !state.serving) throw read.problem;
  const pinsPath = pinsPathFor(statePath);
  let pinsWatcher: PinsWatch | undefined;
  // The workbench's own writes of the pins file (first sights) are told to its watcher (README "Pinned tool definitions").
  const ownPinsWrite = (): ((saved: ValidPins | undefined) => void) => pinsWatcher?.ownWrite() ?? (() => {});
  const pins = { path: pinsPath, read: await readPins(pinsPath), record: state.serving, ownWrite: ownPinsWrite };
  const audit = settings.audit && (await openAuditLog(settings.audit.path, { ...settings.audit, log: host.log }));
  if (audit) host.log.info(`audit log: ${settings.audit!.path}`);
  const observer = chainObservers(settings.observer, audit ? (event) => audit.record(event) : undefined);
  // `${user:dir}` folders (README "Files of each user") live beside the state file: a test's or a user's own.
  const workbench = createWorkbench(settings, config, read, pins, observer, usersDirBeside(statePath));
  // Approvals (`tools approve` in another process) apply to a running server at once.
  pinsWatcher = state.serving ? watchPins(pinsPath, (next) => workbench.setPins(next), host.log, pins.read) : undefined;
  if (read.problem) await reportBrokenState(statePath, read, false, host.log);
  const watcher = state.serving ? followStateFile(workbench, statePath, read, host.log) : undefined;
  const configWatcher = settings.sources.watch ? followConfig(workbench, source, host.log) : undefined;
  return {
    config,
    workbench,
    statePath,
    updateState: stateUpdater(statePath, workbench, watcher, host.log),
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
 * following it needs: every file it is made of and their content before it was read (when `sources.watch`).
 */
async function loadRuntimeConfig(sources: ConfigSources, host: HostContext): Promise<ConfigSource & { config: WorkbenchConfig }> {
  const { env, log } = host;
  const path = sources.configNamed ? sources.configPath : configToStart({ path: sources.configPath, origin: 'default' });
  const load = async (): Promise<WorkbenchConfig> => {
    const loaded = applyProject(await loadConfig(path, env, { secrets: sources.secrets }), await loadProjectFile(sources.project));
    const fatal = noServerCanStartError(loaded);
    if (fatal) throw fatal;
    return loaded;
  };
  const warnBroken = brokenServerWarner(log);
  // The secret file only when its directory exists: a user without secrets gets no warning about following it.
  const secretsFile = sources.secretsFile && existsSync(dirname(sources.secretsFile)) ? [sources.secretsFile] : [];
  const files = [path, sources.project.path, ...secretsFile];
  const baseline = sources.watch ? await snapshotFiles(files) : '';
  const config = await load();
  for (const warning of [...config.warnings, ...patternWarnings(config)]) log.warn(warning);
  warnBroken(config);
  if (config.project) log.info(`project file ${config.project.source} applies`);
  return { path, files, baseline, load, warnBroken, config };
}

/**
 * `--disabled-tools` entries that can hide nothing (a bare tool name, a typo in a toolbox or server name) stop the
 * start: the user believes a tool hidden that would stay callable (`tools disable` refuses the same).
 * @throws WorkbenchError `USAGE`
 */
function refuseBlindPatterns(patterns: readonly string[], config: WorkbenchConfig): void {
  const blind = unreachablePatterns(patterns, config.toolboxes);
  if (blind.length === 0) return;
  const toolboxes = config.toolboxes.map((t) => t.name).join(', ') || '(none)';
  throw new WorkbenchError(
    'USAGE',
    `--disabled-tools would hide nothing with ${blind.map(unreachableReason).join('; ')}. Toolboxes in ${config.source}: ${toolboxes}; \`${toolsListCommand(config.source)}\` shows every canonical name.`,
  );
}

/** The shared Workbench for these settings, over the state and pins as read at start. */
function createWorkbench(
  { host, session, catalog, auth, maxMessageBytes, noiseWindowMs, startSteps }: Pick<RuntimeSettings, 'host' | 'session' | 'catalog' | 'auth' | 'maxMessageBytes' | 'noiseWindowMs' | 'startSteps'>,
  config: WorkbenchConfig,
  read: Awaited<ReturnType<typeof readToolState>>,
  pins: WorkbenchOptions['pins'],
  observer: WorkbenchObserver | undefined,
  usersDir: string,
): Workbench {
  return new Workbench({
    config,
    env: host.env,
    log: host.log,
    version: VERSION,
    cliDisabled: session.disabledTools,
    maxMessageBytes,
    noiseWindowMs,
    catalogBudget: catalog.budget,
    oauth: { ...oauthContext(host, auth), configPath: config.source },
    observer,
    catalogCache: catalog.cacheDir === undefined ? undefined : new CatalogCache(catalog.cacheDir, host.log, host.env),
    state: read.state,
    ...(read.problem && { stateProblem: read.problem }),
    ...(session.toolsets && session.toolsets.length > 0 && { sessionToolsets: session.toolsets }),
    pins,
    usersDir,
    ...(startSteps && { startSteps: startSteps(config) }),
  });
}

/** Where OAuth sign-ins are kept and how one is started (README "Remote servers behind OAuth"). */
export function oauthContext(host: HostContext, auth: AuthSettings): OAuthContext {
  return {
    ...(auth.noBrowserReason && { noBrowserReason: auth.noBrowserReason }),
    store: new OAuthStore(resolveOAuthDir({ env: host.env, homedir: host.env.HOME || homedir(), cwd: host.cwd }), host.log),
    env: host.env,
    platform: process.platform,
    browser: auth.browser,
    announce: (message) => host.log.warn(message),
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
      const variables = [...new Set(problems.flatMap((p) => p.variables ?? []))];
      const fields = {
        event: 'server_broken',
        toolbox,
        server,
        code: serverProblemCode(problems),
        paths: problems.map((p) => p.path).join(', '),
        ...(variables.length > 0 && { variables: variables.join(', ') }),
      };
      if (!warned.has(warning)) log.warn(warning, fields);
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
      `as soon as it is good again (no restart needed).${copy ? ` A copy of its current content is kept at ${copy}.` : ''}` +
      (broken.problem.local === undefined ? '' : `\n${broken.problem.local}`),
  );
}

/** How long shutdown may take before the process exits anyway (children get SIGKILL well within this). */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/**
 * Calls `stop` once on SIGINT, SIGTERM, SIGHUP or any of `extraTriggers`, and resolves with exit code 0 when it finishes
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
    // The terminal it runs in was closed (an SSH session ended): Node's default would end the process on the spot,
    // with no answer to the calls in flight and no close of the servers (left to the orphan watchdog).
    process.on('SIGHUP', () => trigger('SIGHUP'));
    register(trigger);
  });
}

/** A running server follows changes of its tool state file from `tools enable|disable`, another workbench or an editor. */
function followStateFile(workbench: Workbench, statePath: string, read: Awaited<ReturnType<typeof readToolState>>, log: Logger): ToolStateWatch {
  return watchToolState(
    statePath,
    (next, missing, previous) => {
      // A deleted file means the defaults (README "Enabled and disabled tools"): what it disabled comes back, never silently.
      const disabled = previous?.disabled ?? [];
      if (missing && disabled.length > 0) {
        const names = disabled.map((p) => `'${p}'`).join(' ');
        log.warn(`the tool state file ${statePath} was deleted: the defaults apply, so what it disabled is enabled again: ${names}. To disable them again: mcp-workbench tools disable ${names}`);
      } else log.info(`tool state changed in ${statePath}: ${next.enabled.length} enabled, ${next.disabled.length} disabled pattern(s)`);
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

/**
 * The running workbench's own changes of its state file (enable_tools): applied while the file is still locked, so the
 * updates of several sessions apply in the order they were written, with the watcher told, so that neither a read
 * it began before the write nor the write itself comes back as a change.
 */
function stateUpdater(statePath: string, workbench: Workbench, watcher: ToolStateWatch | undefined, log: Logger): BoundStateUpdate {
  return async (change, knownNames) => {
    const end = watcher?.ownWrite();
    try {
      return await updateToolState(statePath, change, {
        log,
        ...(knownNames && { knownNames }),
        onSaved: (next) => {
          workbench.setState(next);
          end?.(next);
        },
      });
    } finally {
      end?.(undefined);
    }
  };
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
      for (const warning of [...next.warnings, ...patternWarnings(next)]) log.warn(warning);
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
      const problem = isWorkbenchError(error) ? error : new WorkbenchError('CONFIG_INVALID', `${source.path}: ${errorMessage(error)}`, { cause: error });
      log.error(`config change not applied, the previous config keeps serving: ${errorMessage(error)}`, { event: 'config_refused', code: problem.code, file: source.path });
      workbench.setConfigProblem(problem);
    },
  });
}
