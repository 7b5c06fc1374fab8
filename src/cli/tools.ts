import { usersDirBeside } from '../clients/user-places.js';
import { applyProject, loadProjectFile, resolveProjectPath } from '../config/project-file.js';
import { Command, Option } from 'commander';
import { assertToolPatterns, updateToolState, type ToolStateUpdate } from '../state/update.js';
import { loadConfig } from '../config/load.js';
import { WorkbenchError, errorMessage, isWorkbenchError } from '../errors.js';
import { describeConfigPath, resolveConfigPath } from '../config/config-path.js';
import { PROTECTED_TOOLS } from '../server/meta-tools.js';
import { Workbench } from '../core/workbench.js';
import { type ToolStatusReport } from '../core/tool-entry.js';
import { createRedactor, redactDeep } from '../shared/redact.js';
import { VERSION } from '../version.js';
import { EXIT_FAILURE, quiet, splitList, type CliContext } from './context.js';
import { createRuntime, type Runtime } from './runtime.js';
import { oneShotSettings, stateFilePath } from './settings.js';
import { registerTrustCommands } from './tools-trust.js';
import { unmatchedNames } from '../catalog/name-suggestions.js';
import { parseToolName } from '../catalog/names.js';
import { registerToolsTryCommands } from './tools-try.js';
import { failedServerText } from '../clients/server-failure.js';
import { cliSteps, toolsListCommand } from './next-command.js';

/**
 * `mcp-workbench tools list | enable | disable | reset`: the same state model the server uses, from a shell.
 * A running workbench picks changes up from the state file within about a second.
 */
export function registerToolsCommand(program: Command, ctx: CliContext): void {
  const tools = program.command('tools').description('list, search and call tools, or change which are enabled (persisted in the state file)');

  // What each command does with a config: those that start servers use only one named (README "Command line").
  const withConfig = (help: string) => (cmd: Command): Command =>
    cmd
      .option('-c, --config <file>', help)
      .option('--state-file <file>', 'tool state file (default: $WORKBENCH_STATE_FILE, else ~/.mcp-workbench/tool-state.json)');
  const startsServers = withConfig('config file (or $WORKBENCH_CONFIG); required: servers start only from a config you name');

  registerListCommand(tools, ctx, startsServers);
  registerTrustCommands(tools, ctx, startsServers);
  registerSwitchCommand('enable', tools, ctx, withConfig(ENABLE_CONFIG_HELP));
  registerSwitchCommand('disable', tools, ctx, withConfig(DISABLE_CONFIG_HELP));
  registerToolsTryCommands(tools, ctx);
  registerResetCommand(tools, ctx, withConfig('config file: not read by reset, which only empties the state file'));
}

const ENABLE_CONFIG_HELP =
  'config file, read without starting servers to warn of names it does not know (default: $WORKBENCH_CONFIG, else ./workbench-config.json)';
const DISABLE_CONFIG_HELP =
  'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json); without --force each name is checked against its servers\' tools, which start only from a config you name';

/** What `tools list` is given. */
interface ListFlags {
  config?: string;
  stateFile?: string;
  toolbox?: string;
  toolset?: string;
  project?: string;
  json?: boolean;
  disabledTools?: string[];
}

function registerListCommand(tools: Command, ctx: CliContext, common: (cmd: Command) => Command): void {
  common(tools.command('list'))
    .description('connect the servers and show every tool: enabled or disabled, and by which source')
    .addOption(new Option('-t, --toolbox <name>', 'only this toolbox').conflicts('toolset'))
    .option('--toolset <name>', 'only what this toolset resolves to (a pattern that matches nothing is warned about)')
    .option('--project <dir>', 'directory of the project file .mcp-workbench.json (default: the current directory)')
    .option('--json', 'machine-readable output')
    .addOption(new Option('--disabled-tools <names>', 'as for serve: comma-separated names or globs').argParser(splitList))
    .action(async (opts: ListFlags) => {
      let runtime: Runtime | undefined;
      try {
        // Connecting logs per server; keep stderr for the progress line and real problems.
        const flags = { config: opts.config, stateFile: opts.stateFile, project: opts.project, disabledTools: opts.disabledTools };
        // A server that cannot start names the doctor to run with this config, where the model is told to ask the user.
        runtime = await createRuntime({ ...oneShotSettings(flags, ctx), startSteps: (config) => cliSteps({ configSource: config.source, stateFile: opts.stateFile }) });
        const report = await listTools(runtime, opts, ctx);
        ctx.print(opts.json ? JSON.stringify({ state_file: runtime.statePath, ...report }, null, 2) : formatToolList(report, runtime.statePath));
        if (report.servers_failed.length > 0) process.exitCode = EXIT_FAILURE;
      } catch (error) {
        ctx.fail(error);
      } finally {
        await runtime?.close();
      }
    });
}

/**
 * Every tool of the runtime's servers (or one toolbox's, or what one toolset resolves to) with its status, secrets
 * redacted; warns about each toolset pattern that matched nothing. Shows progress on a terminal meanwhile.
 */
async function listTools(runtime: Runtime, opts: ListFlags, ctx: CliContext): Promise<ToolStatusReport & { unmatched?: string[] }> {
  const workbench = runtime.workbench;
  const progress = ctx.stderrIsTTY ? startProgress(workbench, opts.toolbox) : undefined;
  // An unknown toolbox or toolset is told the command that lists them, where the model is told open_toolbox.
  const steps = cliSteps({ configSource: runtime.config.source, stateFile: opts.stateFile, project: opts.project, disabledTools: opts.disabledTools });
  const listed: ToolStatusReport & { unmatched?: string[] } = await (
    opts.toolset !== undefined ? workbench.describeToolset(opts.toolset, steps) : workbench.listAllTools(opts.toolbox, undefined, steps)
  ).finally(() => progress?.());
  const report = redactDeep(listed, createRedactor(runtime.config.secrets));
  for (const pattern of report.unmatched ?? []) {
    ctx.log.warn(`toolset "${opts.toolset}": "${pattern}" matches no tool of the connected servers (check the toolbox, server and tool names)`, {
      toolset: opts.toolset,
      pattern,
    });
  }
  return report;
}

/** What `tools enable` and `tools disable` are given. */
interface SwitchFlags {
  config?: string;
  stateFile?: string;
  project?: string;
  json?: boolean;
  force?: boolean;
}

function registerSwitchCommand(action: 'enable' | 'disable', tools: Command, ctx: CliContext, common: (cmd: Command) => Command): void {
  const command = common(tools.command(`${action} <names...>`))
    .description(`${action} tools by canonical name ({toolbox}__{server}__{tool}) or * glob`)
    .option('--project <dir>', 'directory of the project file .mcp-workbench.json, whose disabled tools enable cannot lift (default: the current directory)')
    .option('--json', 'machine-readable output');
  if (action === 'disable') {
    command.option('--force', 'record names that match no known tool anyway (e.g. for a server not yet started)');
  }
  command.action(async (names: string[], opts: SwitchFlags) => {
    const statePath = stateFilePath(opts.stateFile, ctx);
    try {
      const rest = switchableNames(names.flatMap((n) => splitList(n)), action, ctx);
      // Disabling a name that matches nothing would look done and hide nothing (a typo): refuse unless forced.
      if (action === 'disable' && opts.force !== true) await assertNamesMatch(rest, opts, ctx);
      const workbench = await configuredWorkbench(opts, statePath, ctx);
      const knownNames = workbench && ((name: string): boolean => workbench.isKnownName(name));
      const update = await updateToolState(statePath, action === 'enable' ? { enable: rest } : { disable: rest }, { log: ctx.log, knownNames });
      const hidden = action === 'enable' && workbench ? hiddenElsewhere(workbench, rest) : [];
      for (const { name, reason } of hidden) {
        ctx.log.warn(`${name} stays disabled: ${reason}. The state file cannot enable what that hides; change it there.`, { name });
      }
      report(ctx, statePath, update, opts.json === true, hidden.length > 0);
    } catch (error) {
      ctx.fail(error);
    }
  });
}

/**
 * The names `tools enable`/`disable` can change: the meta-tools are left out with a warning.
 * @throws WorkbenchError USAGE when none is left, or one is neither canonical nor a glob: a name typed wrong is a usage
 *   error (README "Command line"), naming it and what to type instead. Nothing is written then.
 */
function switchableNames(requested: readonly string[], action: 'enable' | 'disable', ctx: CliContext): string[] {
  const protectedNames = requested.filter((n) => PROTECTED_TOOLS.includes(n));
  const rest = requested.filter((n) => !PROTECTED_TOOLS.includes(n));
  const why = `${protectedNames.join(', ')}: the workbench's meta-tools are protected and cannot be ${action}d`;
  if (rest.length === 0) throw new WorkbenchError('USAGE', `${why}; nothing was changed. Name tools as {toolbox}__{server}__{tool} or a glob (\`mcp-workbench tools list\` shows them).`);
  if (protectedNames.length > 0) ctx.log.warn(why, { protected: protectedNames.join(', ') });
  try {
    assertToolPatterns(rest);
  } catch (error) {
    if (!isWorkbenchError(error, 'INVALID_NAME')) throw error;
    throw new WorkbenchError('USAGE', `${error.message} Nothing was changed.`, { details: error.details, cause: error });
  }
  return rest;
}

function registerResetCommand(tools: Command, ctx: CliContext, common: (cmd: Command) => Command): void {
  common(tools.command('reset'))
    .description('forget every enable/disable in the state file (all tools enabled again, config and --disabled-tools still apply)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { config?: string; stateFile?: string; json?: boolean }) => {
      const statePath = stateFilePath(opts.stateFile, ctx);
      try {
        report(ctx, statePath, await updateToolState(statePath, { reset: true }, { log: ctx.log }), opts.json === true);
      } catch (error) {
        ctx.fail(error);
      }
    });
}

/**
 * Every name or glob matches a tool of the configured servers (connected to list their tools: only the toolboxes the
 * names name, or all when one names none of them). Logs each one that does not, with the nearest names, and the
 * servers whose tools could not be listed.
 * @throws WorkbenchError USAGE when one matches nothing (a name typed that matches nothing, README "Command line"),
 *   saying what to do; the error of the check (its code kept) when it could not be made. Nothing is changed then.
 */
async function assertNamesMatch(names: readonly string[], opts: { config?: string; stateFile?: string }, ctx: CliContext): Promise<void> {
  let runtime: Awaited<ReturnType<typeof createRuntime>> | undefined;
  const advice = (config: string | undefined): string =>
    `Nothing was changed. See the names with \`${toolsListCommand(config)}\`, or pass --force to record them anyway (e.g. for a server not yet started).`;
  let reports: ToolStatusReport[];
  try {
    runtime = await createRuntime({ ...oneShotSettings({ config: opts.config, stateFile: opts.stateFile }, ctx), startSteps: (config) => cliSteps({ configSource: config.source, stateFile: opts.stateFile }) });
    const configured = new Set(runtime.config.toolboxes.map((t) => t.name));
    const named = names.map((n) => parseToolName(n)?.toolbox);
    const toolboxes = named.every((t): t is string => t !== undefined && configured.has(t)) ? [...new Set(named)] : [undefined];
    reports = await Promise.all(toolboxes.map((t) => runtime!.workbench.listAllTools(t)));
  } catch (error) {
    // A state file that cannot be read is refused with --force too: only "nothing was changed" is true advice then.
    const stateProblem = isWorkbenchError(error) && error.code.startsWith('STATE_');
    const because = errorMessage(error).replace(/[.\s]+$/, '');
    const code = isWorkbenchError(error) ? error.code : 'CONFIG_UNREADABLE';
    const facts = isWorkbenchError(error) ? { ...error.site, variables: error.variables } : {};
    throw new WorkbenchError(code, `Could not check ${names.join(', ')} against the configured servers: ${because}. ${stateProblem ? 'Nothing was changed.' : advice(opts.config)}`, { cause: error, ...facts });
  } finally {
    await runtime?.close();
  }
  const unmatched = unmatchedNames(names, reports.flatMap((r) => r.tools));
  if (unmatched.length === 0) return;
  for (const { name, suggestions } of unmatched) {
    ctx.log.error(`"${name}" matches no known tool${suggestions.length > 0 ? ` (nearest: ${suggestions.join(', ')})` : ''}`, { code: 'TOOL_NOT_FOUND', name, nearest: suggestions.join(', ') || undefined });
  }
  for (const failure of reports.flatMap((r) => r.servers_failed)) {
    const { toolbox, server, code } = failure;
    ctx.log.error(`${toolbox}/${server} could not be connected, so its tools are not known: ${failure.error}`, { code, toolbox, server });
  }
  throw new WorkbenchError('USAGE', `${unmatched.map((u) => `"${u.name}"`).join(', ')} ${unmatched.length === 1 ? 'matches' : 'match'} no known tool. ${advice(runtime?.config.source)}`);
}

/**
 * A workbench of the config (no server started) to check names against (toolbox and server must exist) and to see what
 * the config hides. Without a config named (by --config or WORKBENCH_CONFIG) and none loadable in the start directory,
 * names are not checked at all.
 * @throws WorkbenchError the load's error (its code kept), when the config was named: checking against a file other
 *   than the one the user named would say nothing true, so nothing is changed.
 */
async function configuredWorkbench(opts: { config?: string; project?: string }, statePath: string, ctx: CliContext): Promise<Workbench | undefined> {
  const resolved = resolveConfigPath({ flag: opts.config, env: ctx.env, cwd: ctx.cwd });
  try {
    // With the project file of where it runs (as a workbench started there would have), so `enable` can say what it hides.
    const config = applyProject(await loadConfig(resolved.path, ctx.env), await loadProjectFile(resolveProjectPath({ cwd: ctx.cwd, flag: opts.project })));
    return new Workbench({ config, env: ctx.env, log: quiet(ctx.log), version: VERSION, usersDir: usersDirBeside(statePath) });
  } catch (error) {
    if (resolved.origin === 'default') {
      ctx.log.debug(`names not checked against a config: ${errorMessage(error)}`);
      return undefined;
    }
    const code = isWorkbenchError(error) ? error.code : 'CONFIG_UNREADABLE';
    const because = errorMessage(error).replace(/[.\s]+$/, '');
    throw new WorkbenchError(code, `Could not check the names against ${describeConfigPath(resolved)}: ${because}. Nothing was changed. Fix the config, or leave out --config and WORKBENCH_CONFIG to change the state file without checking the names.`, { cause: error });
  }
}

/**
 * The exact names (no globs) that something other than the state file hides — the config's or a toolbox's disabled
 * tools, the project file's — with why: the state file cannot enable those (README "Enabled and disabled tools").
 */
function hiddenElsewhere(workbench: Workbench, names: readonly string[]): { name: string; reason: string }[] {
  const policy = workbench.useToolHost.policy();
  const out: { name: string; reason: string }[] = [];
  for (const name of names) {
    const parts = name.includes('*') ? undefined : parseToolName(name);
    const visibility = parts && policy.check(parts.toolbox, parts.server, parts.tool);
    if (visibility && !visibility.enabled && visibility.source !== 'state') out.push({ name, reason: visibility.reason });
  }
  return out;
}

function report(ctx: CliContext, statePath: string, update: ToolStateUpdate, json: boolean, someStayHidden = false): void {
  if (update.unknown.length > 0) ctx.log.warn(`not (yet) known in the config, kept anyway: ${update.unknown.join(', ')}`);
  for (const { name, pattern } of update.stillDisabledBy) {
    ctx.log.warn(`${name} stays disabled: "${pattern}" in the state file's disabled list still covers it (disabled always wins)`);
  }
  for (const { name, patterns } of update.excepted) {
    ctx.log.info(`${name} is enabled as an exception to ${patterns.map((p) => `"${p}"`).join(', ')} (recorded in the state file's "exceptions")`);
  }
  if (json) {
    ctx.print(JSON.stringify({ state_file: statePath, ...update }, null, 2));
    return;
  }
  const lines = [`${statePath}:`];
  if (update.changed.enabled.length > 0) lines.push(`  enabled:  ${update.changed.enabled.join(', ')}`);
  if (update.changed.disabled.length > 0) lines.push(`  disabled: ${update.changed.disabled.join(', ')}`);
  if (update.changed.enabled.length === 0 && update.changed.disabled.length === 0) lines.push(someStayHidden ? '  no change in the state file' : '  no change (already so)');
  const exceptions = update.state.exceptions ?? [];
  lines.push(
    `  now: enabled=${JSON.stringify(update.state.enabled)} disabled=${JSON.stringify(update.state.disabled)}${exceptions.length > 0 ? ` exceptions=${JSON.stringify(exceptions)}` : ''}`,
  );
  lines.push('  Running workbenches apply this within about a second.');
  ctx.print(lines.join('\n'));
}

export function formatToolList(report: ToolStatusReport, statePath: string): string {
  const width = Math.min(Math.max(0, ...report.tools.map((t) => t.name.length)), 70);
  const lines = report.tools.map((t) =>
    t.enabled ? `${t.name.padEnd(width)}  enabled` : `${t.name.padEnd(width)}  disabled (${t.disabled_by!.source}): ${t.disabled_by!.reason}`,
  );
  const enabled = report.tools.filter((t) => t.enabled).length;
  lines.push('', `${report.tools.length} tools, ${enabled} enabled, ${report.tools.length - enabled} disabled. State file: ${statePath}`);
  for (const failure of report.servers_failed) lines.push(`! ${failure.toolbox}/${failure.server} could not be connected: ${failedServerText(failure)}`);
  return lines.join('\n');
}

/** Shows "connecting N servers… (Xs)" on a terminal's stderr until stopped. */
function startProgress(workbench: Workbench, toolbox: string | undefined): () => void {
  const servers = workbench.toolboxConfigs().filter((t) => toolbox === undefined || t.name === toolbox).reduce((n, t) => n + t.servers.length, 0);
  const started = Date.now();
  const draw = (): void => void process.stderr.write(`\r\x1b[2Kconnecting ${servers} server(s)… ${((Date.now() - started) / 1000).toFixed(1)}s`);
  draw();
  const timer = setInterval(draw, 200);
  return () => {
    clearInterval(timer);
    process.stderr.write('\r\x1b[2K');
  };
}
