import { parseToolName } from '../catalog/names.js';
import { MODEL_START_STEPS, type StartSteps } from '../clients/start-steps.js';
import { userOption } from '../state/pins.js';

/** What a name was looked up in, as the answers name it: a toolbox, or a toolset (across toolboxes). */
export interface LookedUpIn {
  kind: 'toolbox' | 'toolset';
  name: string;
}

/** Who disabled a tool (a visibility source: config, project, cli, toolset, state) or `quarantine` for a held one. */
export interface DisabledTool {
  name: string;
  source: string;
  /** Of a tool held by the pins of a user of a `${user:…}` server: that user (the commands' `--user`). */
  user?: string;
}

/**
 * The next step a refusal ends with — of `use_tool`, and of a toolbox or toolset name the config lacks — for whoever
 * reads it: the model over MCP ({@link MODEL_STEPS}, the default: a tool call to make), a person at the CLI (a command
 * to run, src/cli/next-command.ts). Each is one or more sentences; the refusal's facts come before it. Its StartSteps
 * (what to do about a server that cannot start) are given to the slots of a runtime (WorkbenchOptions.startSteps).
 */
export interface NextSteps extends StartSteps {
  /** How to see the tool names of a toolbox or toolset (after a name it does not have). */
  listTools(where: LookedUpIn): string;
  /**
   * What to give instead of a toolbox or toolset name the config lacks, once the names there are were given: to a
   * call (`call`; `said` ends the message, `hint` stands alone), to open one or search it (`open`), to a listing
   * (`list`, of a toolbox or a toolset).
   */
  pickToolbox(asked: 'call' | 'open' | 'list', kind: LookedUpIn['kind']): { said: string; hint: string };
  /** How to call `toolName` through toolbox `toolbox`, the one its full name says (a sentence of its own). */
  callIn(toolbox: string, toolName: string): string;
  /** The same, as the end of a sentence that named the toolbox (`…: ` + this). */
  callThere(toolbox: string, toolName: string): string;
  /** Why a pattern names no tool to call: what calls one tool (by its full name) and how. */
  readonly callsOneTool: string;
  /** How to see the tools a pattern under toolbox `toolbox` matches, then call one. */
  seeMatches(toolbox: string, pattern: string): string;
  /** How to call one of several tools a name matches in `where` (`names`, full names). */
  pickFullName(where: LookedUpIn, names: readonly string[]): string;
  /** What to do about a call whose servers are still starting: call again shortly (and how to see the names). */
  callAgain(where: LookedUpIn, toolName: string): string;
  /**
   * What to do about a name no server that is up has while servers whose tools are not known yet start: one of the
   * `closest` names, or it again, or `fullName`, which waits (for `oneServer`, or one of several). No final stop.
   */
  callByFullName(where: LookedUpIn, toolName: string, fullName: string, closest: boolean, oneServer: string | undefined): string;
  /** What to do, after `; if it keeps failing, `, about servers of a toolbox or toolset that keep failing to start. */
  checkServers(where: LookedUpIn): string;
  /** What to do about a call whose server starts again after a start that hung: its toolbox's other tools, then later. */
  callLater(toolbox: string, toolName: string): string;
  /** What to do about a tool its server listed but the workbench left out (its definition cannot be called correctly). */
  leftOut(toolbox: string): string;
  /** What would enable a disabled tool, or release a held one. */
  enable(tool: DisabledTool): string;
  /** The inputSchema (`schema`, as JSON) to fix the arguments by, when it is too long to show the model with the refusal. */
  readSchema(toolbox: string, toolName: string, schema: string): string;
}

/** The model's next steps: the tool calls (open_toolbox, use_tool) it makes, and what to tell the user. */
export const MODEL_STEPS: NextSteps = {
  ...MODEL_START_STEPS,
  listTools: (where) => `Call open_toolbox {"toolbox_name":"${where.name}"} to list the valid names.`,
  pickToolbox: (asked, kind) => {
    if (asked === 'call') return { said: 'Call open_toolbox with one of them to see its tools.', hint: 'Call open_toolbox with one of the available toolboxes to see its tools.' };
    const step = asked === 'list' && kind === 'toolbox' ? 'Pass one of them, or none for every toolbox.' : 'Call open_toolbox with one of them.';
    return { said: step, hint: step };
  },
  callIn: (toolbox) => `Call use_tool with toolbox_name "${toolbox}".`,
  callThere: (toolbox) => `call use_tool with toolbox_name "${toolbox}" to call it there.`,
  callsOneTool: 'use_tool calls one tool by its full name',
  seeMatches: (toolbox, pattern) =>
    `Call open_toolbox with toolbox_name "${toolbox}" and tools [${JSON.stringify(pattern)}] to see the tools it matches, then use_tool one of them with toolbox_name "${toolbox}".`,
  pickFullName: () => 'Use the full name.',
  callAgain: (where) => `Call the tool again shortly; open_toolbox {"toolbox_name":"${where.name}"} lists its tools once it is ready.`,
  callByFullName: (_where, _toolName, fullName, closest, oneServer) =>
    `${closest ? 'If you meant one of the closest names, call it by that name. ' : ''}` +
    `If it is a tool of ${oneServer !== undefined ? `"${oneServer}"` : 'one of those servers'}, call it again shortly, or by its full name (${fullName}), which waits for the server`,
  checkServers: (where) => `use the ${where.kind}'s other servers and tell the user to run \`mcp-workbench doctor\`.`,
  callLater: () =>
    "Use the toolbox's other servers' tools meanwhile, and call this tool again later: it is served once the server is up. If it keeps timing out, tell the user to run `mcp-workbench doctor`.",
  leftOut: (toolbox) =>
    `Tell the user it cannot be used until the server's maintainers fix its definition; meanwhile call open_toolbox {"toolbox_name":"${toolbox}"} for the tools that can be called.`,
  enable: modelEnable,
  readSchema: (toolbox, toolName, schema) =>
    `Fix the arguments to match the tool's inputSchema (${schema.length} characters; open_toolbox {"toolbox_name":"${toolbox}","tools":["${toolName}"],"detail":"full"} shows it; without detail:"full" a schema over the context budget comes as an index entry).`,
};

/** What would enable a disabled tool (or release a held one), as the model tells the user. */
function modelEnable({ name, source, user }: DisabledTool): string {
  if (source === 'quarantine') {
    const key = heldKey(name);
    return (
      `Nothing it asks is sent until a person approves it: review the change with ` +
      `\`mcp-workbench tools diff ${key}${userOption(user)}\`, then \`mcp-workbench tools approve ${name}${userOption(user)}\` (a running workbench follows at once).`
    );
  }
  if (source === 'state') return `A person can enable it with \`mcp-workbench tools enable ${name}\` (a running workbench follows at once); so can the enable_tools tool, where the workbench offers it (serve --management-tools).`;
  if (source === 'cli') return 'Remove it from the --disabled-tools option of the workbench to enable it.';
  if (source === 'project') return 'The project file (.mcp-workbench.json) hides it for this project; change that file to enable it.';
  if (source === 'toolset') return 'This session is limited by --toolset; use a tool of those toolsets, or start the workbench without --toolset.';
  return 'A person can enable it by changing the workbench config (the state file and enable_tools cannot); use another tool meanwhile.';
}

/** The `TOOLBOX/SERVER` of a held tool's canonical name, as `tools diff` takes it. */
export function heldKey(name: string): string {
  const parts = parseToolName(name);
  return parts ? `${parts.toolbox}/${parts.server}` : 'TOOLBOX/SERVER';
}
