import { parseToolName } from '../catalog/names.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { BoundStateUpdate } from '../state/update.js';
import { isWorkbenchError } from '../errors.js';
import { cutClientText, MAX_ECHO_LENGTH, quoteClientText } from '../shared/client-text.js';
import { firstOf, moreCount } from '../shared/first-of.js';
import { toolStatusPage } from './tool-status-pages.js';
import { PROTECTED_TOOLS, type Usage } from './meta-tools.js';
import { errorResult, failureResult } from '../core/tool-entry.js';
import { stateWarning } from '../core/state-problem.js';
import { type SessionScope } from '../core/scope.js';
import { type Workbench } from '../core/workbench.js';
import { refusal, stringProblem, stringsProblem, unknownParamsProblem } from './tool-params.js';

/**
 * Opt-in tools (`--management-tools`) that let the model see every tool with its status and change the persisted
 * state. Off by default so the surface stays two tools.
 */
export const LIST_ALL_TOOLS = 'list_all_tools';
export const ENABLE_TOOLS = 'enable_tools';

// How each management tool is called, for refusals of malformed parameters (kept beside the schemas below).
export const LIST_ALL_TOOLS_USAGE: Usage = {
  signature: 'list_all_tools { toolbox?: string, cursor?: string }',
  next: 'Call list_all_tools again without parameters for every toolbox, or with one toolbox name (and a next_cursor it gave).',
};
export const ENABLE_TOOLS_USAGE: Usage = {
  signature: 'enable_tools { enable?: string[], disable?: string[] }',
  next: 'Call enable_tools again with lists of canonical tool names ({toolbox}__{server}__{tool}) or * globs, at most 1000 per list.',
};

export function managementToolDefinitions(toolboxNames: readonly string[]): Tool[] {
  return [
    {
      name: LIST_ALL_TOOLS,
      title: 'List all tools with their status',
      description:
        'List every tool of one toolbox (or all), enabled or not; for a disabled tool, which source disabled it ' +
        '(config, project, cli, toolset or state) and the rule. Connects the servers it needs.',
      inputSchema: {
        type: 'object',
        properties: {
          toolbox: { type: 'string', description: 'Only this toolbox (or the tools of this toolset).', ...(toolboxNames.length > 0 ? { enum: [...toolboxNames] } : {}) },
          cursor: { type: 'string', description: 'The next_cursor of a previous answer, for the next page of a long list.' },
        },
        additionalProperties: false,
      },
      annotations: { title: 'List all tools with their status', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    {
      name: ENABLE_TOOLS,
      title: 'Enable or disable tools',
      description:
        'Enable and/or disable tools by canonical name ({toolbox}__{server}__{tool}) or * glob, as one atomic change ' +
        'persisted in the state file. Disabled always wins. The meta-tools themselves cannot be disabled.',
      inputSchema: {
        type: 'object',
        properties: {
          enable: { type: 'array', items: { type: 'string' }, description: 'Names or globs to enable.' },
          disable: { type: 'array', items: { type: 'string' }, description: 'Names or globs to disable.' },
        },
        additionalProperties: false,
      },
      annotations: { title: 'Enable or disable tools', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
  ];
}

export async function listAllTools(workbench: Workbench, toolbox: string | undefined, session?: SessionScope, cursor?: number): Promise<CallToolResult> {
  // A broken state file: the last good state read in this run, with a note; with none, nothing to show but the problem.
  const broken = workbench.brokenState();
  if (broken && !broken.lastGood) return failureResult(broken.problem);
  try {
    const listed = await workbench.listAllTools(toolbox, session);
    const report = toolStatusPage(broken ? { ...listed, state_warning: stateWarning(broken.problem) } : listed, cursor, toolbox);
    return { content: [{ type: 'text', text: JSON.stringify(report) }], structuredContent: { ...report } };
  } catch (error) {
    if (isWorkbenchError(error)) return failureResult(error);
    throw error;
  }
}

/** What the management tools need of the running workbench's state file: its path, and how to change it. */
export interface StateManagement {
  statePath: string;
  /** Changes the file and applies the result to the workbench before it answers. */
  update: BoundStateUpdate;
}

export async function enableTools(
  workbench: Workbench,
  { statePath, update: updateState }: StateManagement,
  change: { enable: string[]; disable: string[] },
  session?: SessionScope,
): Promise<CallToolResult> {
  const protectedNames = [...change.enable, ...change.disable].map((n) => n.trim()).filter((n) => PROTECTED_TOOLS.includes(n));
  const enable = change.enable.filter((n) => !PROTECTED_TOOLS.includes(n.trim()));
  const disable = change.disable.filter((n) => !PROTECTED_TOOLS.includes(n.trim()));
  const notes: string[] = [];
  if (protectedNames.length > 0) {
    notes.push(`Ignored ${quoteAll(protectedNames)}: the workbench's own meta-tools are protected and can never be disabled.`);
  }
  if (enable.length === 0 && disable.length === 0) {
    return protectedNames.length > 0 ? errorResult(notes.join(' '), 'INVALID_NAME') : refusal(ENABLE_TOOLS_USAGE, `${ENABLE_TOOLS}: nothing to change (the lists are empty)`);
  }
  try {
    // Applied before the answer, rather than left to the file's watcher, so the reply and the next call agree.
    const update = await updateState({ enable, disable }, (n) => workbench.isKnownName(n, session));
    if (update.unknown.length > 0) notes.push(`Not (yet) known, kept anyway: ${quoteAll(update.unknown)}.`);
    for (const { name, pattern } of update.stillDisabledBy) {
      notes.push(`${quoteClientText(name)} stays disabled: ${quoteClientText(pattern)} in the state file's disabled list still covers it.`);
    }
    for (const { name, patterns } of update.excepted) {
      notes.push(`${quoteClientText(name)} is enabled as an exception to ${quoteAll(patterns)} (recorded in the state file's exceptions list).`);
    }
    // The state file can only enable what no other source hides (README "Enabled and disabled tools"): say so.
    const policy = workbench.useToolHost.policy();
    for (const name of enable) {
      const parts = parseToolName(name.trim());
      const visibility = parts && policy.check(parts.toolbox, parts.server, parts.tool);
      if (visibility && !visibility.enabled && visibility.source !== 'state') {
        notes.push(`${quoteClientText(name)} stays disabled: ${visibility.reason}. The state file cannot enable what that hides; change it there.`);
      }
    }
    // Bounded for the model's context however many names were given or the state file holds (the file has them all).
    const summary = {
      state_file: statePath,
      enabled: shortList(update.changed.enabled),
      disabled: shortList(update.changed.disabled),
      unknown: shortList(update.unknown),
      state: Object.fromEntries(Object.entries(update.state).map(([key, list]) => [key, Array.isArray(list) ? shortList(list as string[]) : list])),
      notes: shortList(notes, 20, 500),
    };
    return { content: [{ type: 'text', text: JSON.stringify(summary) }], structuredContent: summary };
  } catch (error) {
    if (isWorkbenchError(error)) return failureResult(error);
    throw error;
  }
}

/** At most `max` entries, each cut to `chars` characters, then one `(N more)` entry counting the rest. */
function shortList(list: readonly string[], max = 50, chars = MAX_ECHO_LENGTH): string[] {
  return firstOf(list, max, moreCount).map((entry, i) => (i < max ? cutClientText(entry, chars) : entry));
}

/** Client-given names in a note: each quoted and escaped, at most 10 named. */
function quoteAll(names: readonly string[]): string {
  return firstOf(names.map((n) => quoteClientText(n)), 10, (left) => `and ${left} more`).join(', ');
}

/**
 * A call of list_all_tools or enable_tools (the parameters checked: a refusal names what is wrong), or undefined for
 * any other tool name.
 */
export function callManagementTool(
  workbench: Workbench,
  management: StateManagement,
  session: SessionScope,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> | CallToolResult | undefined {
  if (name === LIST_ALL_TOOLS) {
    const cursor = typeof args.cursor === 'string' && /^\d{1,9}$/.test(args.cursor) ? Number(args.cursor) : undefined;
    const problem =
      unknownParamsProblem(args, ['toolbox', 'cursor'], name) ??
      (args.toolbox === undefined ? undefined : stringProblem(args, 'toolbox', name)) ??
      (args.cursor === undefined || cursor !== undefined ? undefined : `${name}: "cursor" must be a next_cursor a previous answer gave`);
    if (problem !== undefined) return refusal(LIST_ALL_TOOLS_USAGE, problem);
    return listAllTools(workbench, typeof args.toolbox === 'string' ? args.toolbox.trim() : undefined, session, cursor);
  }
  if (name === ENABLE_TOOLS) {
    const problem = unknownParamsProblem(args, ['enable', 'disable'], name) ?? stringsProblem(args, 'enable', name) ?? stringsProblem(args, 'disable', name);
    if (problem !== undefined) return refusal(ENABLE_TOOLS_USAGE, problem);
    if (args.enable === undefined && args.disable === undefined) return refusal(ENABLE_TOOLS_USAGE, `${name}: give "enable", "disable" or both`);
    const change = { enable: (args.enable ?? []) as string[], disable: (args.disable ?? []) as string[] };
    return enableTools(workbench, management, change, session);
  }
  return undefined;
}
