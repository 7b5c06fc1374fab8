import { parseToolName } from '../catalog/names.js';
import { shellQuote } from '../shared/shell-quote.js';
import type { StartSteps } from '../clients/start-steps.js';
import { heldKey, type DisabledTool, type LookedUpIn, type NextSteps } from '../core/next-steps.js';

/**
 * The `tools list` an error tells a person to run to see the tool names: with the config it was about named (as
 * `--config`), since every command that starts servers refuses to run without one (README "Use it from your MCP
 * client"). Without a known config, the bare command.
 */
export function toolsListCommand(configSource: string | undefined): string {
  return configSource === undefined ? 'mcp-workbench tools list' : `mcp-workbench tools list --config ${shellQuote(configSource)}`;
}

/** A command as it was given, so the next steps name commands that work as printed: the files and limits it used. */
export interface CliInvocation {
  /** The config in effect (its path), named as `--config` in every command. */
  configSource: string | undefined;
  /** `--state-file` as given (else the commands find the same one as this did, from the environment or the default). */
  stateFile?: string;
  project?: string;
  toolsets?: readonly string[];
  disabledTools?: readonly string[];
  /** Of `tools call`: how the arguments were given, kept in a command that calls again. */
  args?: string;
  argsFile?: string;
  json?: boolean;
}

/**
 * The next steps a person at the terminal is told (README "Command line"): a command to run — with the config and state
 * file this one used — where the model is told a tool call to make (MODEL_STEPS). Used by `tools call`'s refusals, by
 * the unknown-toolbox errors of `tools list` and `tools search`, and by the servers that cannot start in `tools call` and
 * `tools search` (the `doctor` to run: RuntimeSettings.startSteps).
 */
export function cliSteps(run: CliInvocation): NextSteps {
  const files = commonFlags(run);
  const list = (where?: LookedUpIn): string => `\`${toolsListCommand(run.configSource)}${files}${where ? ` --${where.kind} ${shellQuote(where.name)}` : ''}\``;
  const call = (toolbox: string, tool: string, drop?: 'toolsets' | 'disabledTools'): string => `\`${toolsCallCommand(run, toolbox, tool, drop)}\``;
  const doctor = (toolbox?: string): string => `\`${doctorCommand(run, toolbox)}\``;
  return {
    listTools: (where) => `${list(where)} lists its tools.`,
    pickToolbox: (asked, kind) => {
      const step = asked === 'call' ? `${list()} shows every toolbox and tool.` : `Pass one of them to --${kind}, or run ${list()} to see every toolbox and tool.`;
      return { said: step, hint: step };
    },
    callIn: (toolbox, tool) => `${call(toolbox, tool)} calls it there.`,
    callThere: (toolbox, tool) => `run ${call(toolbox, tool)} to call it there.`,
    callsOneTool: '`tools call` calls one tool by its full name',
    seeMatches: (toolbox) => `${list({ kind: 'toolbox', name: toolbox })} lists the tools it may match; call one by its full name with \`mcp-workbench tools call ${shellQuote(toolbox)}\`.`,
    pickFullName: (where, names) => `Call one by its full name: ${call(where.name, names[0] ?? '')}${names.length > 1 ? ', or another of them' : ''}.`,
    callAgain: (where, tool) => `Run ${call(where.name, tool)} again shortly; ${list(where)} lists its tools once it is ready.`,
    callByFullName: (where, _tool, full, closest, oneServer) =>
      `${closest ? 'If you meant one of the closest names, call it by that name. ' : ''}` +
      `If it is a tool of ${oneServer !== undefined ? `"${oneServer}"` : 'one of those servers'}, run ${call(where.name, full)}, which waits for the server`,
    checkServers: (where) => `run ${doctor(where.kind === 'toolbox' ? where.name : undefined)} to see why.`,
    callLater: (toolbox, tool) => `Run ${call(toolbox, tool)} again later: it is served once the server is up. If it keeps timing out, ${doctor(toolbox)} checks it.`,
    leftOut: (toolbox) => `It cannot be called until its server's maintainers fix its definition; ${list({ kind: 'toolbox', name: toolbox })} lists the tools that can be called.`,
    enable: (tool) => enableStep(run, tool, call),
    readSchema: (_toolbox, _tool, schema) => `Fix the arguments to match the tool's inputSchema: ${schema}`,
    startTimedOut: (toolbox, npx, check) =>
      npx
        ? `The next call starts it again (its first start downloads the package with npx, which can take longer). If it times out again, run its command once in a terminal to fill npm's cache (or raise its "connectTimeoutMs" in the config); ${doctor(toolbox)} checks it.`
        : `The next call starts it again (it may only be slow to start). If it times out again, run ${doctor(toolbox)}, which checks ${check} (or raise its "connectTimeoutMs" in the config).`,
    needsAPerson: (toolbox, todo) => `${todo.charAt(0).toUpperCase()}${todo.slice(1)}; ${doctor(toolbox)} shows how, and it is tried again on next use.`,
    startFailed: (toolbox) => `Fix its command, args or env in the config (${doctor(toolbox)} checks it); it is tried again on next use.`,
    fixConfig: (toolbox) => `Then ${doctor(toolbox)} checks it.`,
    checkRemote: (toolbox) => `Check that the server is running and its "url" is right (${doctor(toolbox)} checks it); it is tried again on next use.`,
  };
}

/** The `doctor` that checks `toolbox` (or every one) of the config and state file `run` used. */
export function doctorCommand(run: Pick<CliInvocation, 'configSource' | 'stateFile'>, toolbox?: string): string {
  return `mcp-workbench doctor${configFlag(run)}${commonFlags(run)}${toolbox !== undefined ? ` --toolbox ${shellQuote(toolbox)}` : ''}`;
}

/** `doctor` as it was given: the config and state file of {@link CliInvocation}, and its own limits. */
export interface DoctorInvocation extends Pick<CliInvocation, 'configSource' | 'stateFile'> {
  toolbox?: string;
  /** `--timeout`, used in place of each server's "connectTimeoutMs". */
  timeoutMs?: number;
}

/**
 * What a person running `doctor` is told about a server that cannot start (README "Command line"): what to fix or try,
 * then the same `doctor` command again (its flags as given) to check — never "run doctor" as news, nor the model's
 * "tell the user".
 */
export function doctorSteps(run: DoctorInvocation): StartSteps {
  const timeout = run.timeoutMs !== undefined ? ` --timeout ${run.timeoutMs}` : '';
  const again = `then run \`${doctorCommand(run, run.toolbox)}${timeout}\` again to check`;
  // --timeout stands in for every server's connectTimeoutMs in this run: raising the entry's alone changes nothing here.
  const raise = run.timeoutMs !== undefined ? '--timeout (and its "connectTimeoutMs" in the config to match)' : 'its "connectTimeoutMs" in the config';
  return {
    startTimedOut: (_toolbox, npx, check) =>
      npx
        ? `Its first start downloads the package with npx, which can take longer: run its command once in a terminal to fill npm's cache, or raise ${raise}; ${again}.`
        : `It may only be slow to start: check ${check}, or raise ${raise}; ${again}.`,
    needsAPerson: (_toolbox, todo) => `${todo.charAt(0).toUpperCase()}${todo.slice(1)}; ${again}.`,
    startFailed: () => `Fix its command, args or env in the config (running its command once in a terminal shows what it says); ${again}.`,
    fixConfig: () => `${again.charAt(0).toUpperCase()}${again.slice(1)}.`,
    checkRemote: () => `Check that the server is running and its "url" in the config is right; ${again}.`,
  };
}

/** What enables a disabled tool (or releases a held one), as the command a person runs. */
function enableStep(run: CliInvocation, { name, source, user }: DisabledTool, call: (toolbox: string, tool: string, drop?: 'toolsets' | 'disabledTools') => string): string {
  const files = `${configFlag(run)}${commonFlags(run)}`;
  const as = user !== undefined ? ` --user ${shellQuote(user)}` : '';
  const toolbox = parseToolName(name)?.toolbox ?? name;
  if (source === 'quarantine') {
    return `Nothing it asks is sent until you approve it: review the change with \`mcp-workbench tools diff ${shellQuote(heldKey(name))}${files}${as}\`, then run \`mcp-workbench tools approve ${shellQuote(name)}${files}${as}\`.`;
  }
  if (source === 'state') return `\`mcp-workbench tools enable ${shellQuote(name)}${files}\` enables it (running workbenches follow at once).`;
  if (source === 'cli') return `Call it without --disabled-tools: ${call(toolbox, name, 'disabledTools')}.`;
  if (source === 'toolset') return `Call it without --toolset: ${call(toolbox, name, 'toolsets')}.`;
  const project = run.project !== undefined ? ` --project ${shellQuote(run.project)}` : '';
  if (source === 'project') return `The project file (.mcp-workbench.json) hides it for this project; change that file to enable it, and check it with \`mcp-workbench validate${configFlag(run)}${project}\`.`;
  return `Only a change to the config enables it (the state file cannot); check the config after with \`mcp-workbench validate${configFlag(run)}\`.`;
}

/** `tools call` of `tool` through `toolbox`, as `run` was given (its arguments, files, limits), without `drop`. */
function toolsCallCommand(run: CliInvocation, toolbox: string, tool: string, drop?: 'toolsets' | 'disabledTools'): string {
  const words = ['mcp-workbench tools call', shellQuote(toolbox), shellQuote(tool)];
  if (run.args !== undefined) words.push('--args', shellQuote(run.args));
  if (run.argsFile !== undefined) words.push('--args-file', shellQuote(run.argsFile));
  if (run.toolsets !== undefined && run.toolsets.length > 0 && drop !== 'toolsets') words.push('--toolset', shellQuote(run.toolsets.join(',')));
  if (run.disabledTools !== undefined && run.disabledTools.length > 0 && drop !== 'disabledTools') words.push('--disabled-tools', shellQuote(run.disabledTools.join(',')));
  if (run.json === true) words.push('--json');
  return `${words.join(' ')}${configFlag(run)}${commonFlags(run)}`;
}

function configFlag(run: Pick<CliInvocation, 'configSource'>): string {
  return run.configSource === undefined ? '' : ` --config ${shellQuote(run.configSource)}`;
}

/** `--state-file` as given: the commands read the same state (and pins beside it) as this one. */
function commonFlags(run: Pick<CliInvocation, 'stateFile'>): string {
  return run.stateFile !== undefined ? ` --state-file ${shellQuote(run.stateFile)}` : '';
}
