import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import type { ToolNameParts } from '../catalog/names.js';
import { parseToolName } from '../catalog/names.js';
import { ToolboxCatalog, type CatalogTool, type ToolLookup } from '../catalog/toolbox-catalog.js';
import type { ResolvedToolset } from '../catalog/toolsets.js';
import type { VisibilityPolicy } from '../catalog/visibility.js';
import type { ServerConfig, ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { toolboxSetting } from '../config/toolbox-setting.js';
import { isWorkbenchError, type FailureSite, type WorkbenchError } from '../errors.js';
import { quoteClientText } from '../shared/client-text.js';
import type { CachedCatalog, Scope, SessionScope, UseToolOptions } from './scope.js';
import type { CallContext } from './session-routing.js';
import { ERROR_META_KEY, disabledResult, errorMeta, errorResult, failureResult, type ErrorFields, type ToolEntry } from './tool-entry.js';
import { stateRefusal } from './state-problem.js';
import { routeToolsetCall, type ToolsetHost, type ToolsetNameWait } from './toolset-routes.js';
import { knownLists, lastKnownLookup, lookupAcrossToolbox, serverWait, waitForName } from './name-wait.js';
import { startingAgain, stillStarting, waitedRefusal } from './name-wait-answers.js';
import { describeParams, type ToolValidators } from './validators.js';
import { leftOutRefusal } from './left-out.js';
import { MODEL_STEPS, type NextSteps } from './next-steps.js';
import { DEFAULT_CALL_TIMEOUT_MS } from '../clients/server-slot.js';
import { callsAsTask } from '../clients/task-call.js';
import { within } from '../shared/within.js';

/**
 * The `use_tool` pipeline, from request to response: resolve the name (toolbox, toolset or canonical name; disabled
 * tools refused before anything connects) → validate the arguments against the tool's inputSchema → forward the call
 * (tracked as in flight on its server) → check the output. Every failure about toolboxes and downstream tools comes
 * back as an `isError` result that says what to do next.
 */

/** What the pipeline needs from the workbench: the config in effect, the session's scope and catalogs, bookkeeping. */
export interface UseToolHost {
  scopeOf(session: SessionScope | undefined): Scope;
  toolboxes(): ReadonlyMap<string, ToolboxConfig>;
  toolsets(): ReadonlyMap<string, ResolvedToolset>;
  policy(): VisibilityPolicy;
  /** The names open_toolbox accepts, for messages. */
  toolboxNames(): string;
  cachedCatalog(scope: Scope, toolbox: string): CachedCatalog;
  /** How long a bare name waits for the toolbox's servers still starting (open_toolbox's `openWaitMs`). */
  openWait(toolbox: string): number;
  /** A server's tools as the scope last knew them (live, else from the catalog cache), or undefined. */
  lastKnownTools(scope: Scope, toolbox: string, server: ServerConfig): Promise<readonly Tool[] | undefined>;
  /** The longest a call waits for the server it needs while that server is still starting (`useToolWaitMs`). */
  useToolWait(toolbox: string): number;
  toolsetHost(scope: Scope): ToolsetHost<ToolEntry>;
  tracked<T>(scope: Scope, toolbox: string, server: string, call: CallContext | undefined, run: () => Promise<T>): Promise<T>;
  readonly validators: ToolValidators;
  /** Set while the tool state file cannot be trusted: every call is refused with it. */
  stateProblem(): WorkbenchError | undefined;
}

/**
 * `use_tool`: resolves the name, refuses disabled tools before connecting anything, validates arguments against
 * the tool's inputSchema, forwards the call and returns the downstream result as it came. Every failure about
 * toolboxes and downstream tools comes back as an `isError` result that says what to do next.
 */
export function useTool(host: UseToolHost, toolboxName: string, toolName: string, args: Record<string, unknown> | undefined, options: UseToolOptions = {}): Promise<CallToolResult> {
  // Fail closed before anything else (README "Enabled and disabled tools"): what the broken file disables must not run.
  const problem = host.stateProblem();
  if (problem !== undefined) return Promise.resolve(stateRefusal(toolName, problem));
  try {
    return useToolNow(host, toolboxName, toolName, args, options);
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The hot path (a known tool on a connected server) runs without an async frame of its own: the call's promise is
 * the one returned. Anything that needs a connect first goes through {@link connectThenUse}.
 */
function useToolNow(host: UseToolHost, toolboxName: string, toolName: string, args: Record<string, unknown> | undefined, options: UseToolOptions): Promise<CallToolResult> {
  const scope = host.scopeOf(options.scope);
  const manager = scope.manager;
  const toolbox = host.toolboxes().get(toolboxName);
  if (!toolbox) {
    const toolset = host.toolsets().get(toolboxName);
    if (toolset) return useToolsetTool(host, toolset, toolName, args, options);
    const { said, hint } = stepsOf(options).pickToolbox('call', 'toolbox');
    return Promise.resolve(errorResult(`Unknown toolbox ${quoteClientText(toolboxName)}. Available toolboxes: ${host.toolboxNames()}. ${said}`, 'TOOLBOX_NOT_FOUND', { hint }));
  }
  const parts = parseToolName(toolName);
  if (parts && parts.toolbox !== toolboxName && host.toolboxes().has(parts.toolbox)) {
    const unknown = unknownPart(host.toolboxes(), parts);
    if (/[*?]/.test(toolName)) return Promise.resolve(patternElsewhere(stepsOf(options), toolName, parts.toolbox, toolboxName, unknown));
    const next = stepsOf(options).callIn(parts.toolbox, toolName);
    return Promise.resolve(errorResult(
      `Tool ${quoteClientText(toolName)} belongs to toolbox "${parts.toolbox}", not "${toolboxName}". ${next}`,
      'TOOL_NOT_FOUND',
      { toolbox: toolboxName, ...unknown, hint: next },
    ));
  }
  const knownServer = parts && parts.toolbox === toolboxName ? toolbox.servers.find((s) => s.name === parts.server) : undefined;
  const lookup = host.cachedCatalog(scope, toolboxName).catalog.find(toolName);
  // A bare or loose name is unique only if it is unique across the whole toolbox, not just the servers up so far.
  const wholeToolboxNeeded = !knownServer && toolbox.servers.some((s) => !manager.isConnected(toolboxName, s.name));
  if ('found' in lookup && !wholeToolboxNeeded) return forward(host, scope, toolbox, lookup.found, args, options);
  return connectThenUse({ host, scope, toolbox, toolName, args, options }, { parts, knownServer, lookup, wholeToolboxNeeded });
}

/**
 * A pattern (`*`, `?`) under another toolbox's name: it names no one tool, so "it belongs to toolbox X" would send the
 * model there to fail again; the answer says where to see what the pattern matches.
 */
function patternElsewhere(steps: NextSteps, toolName: string, owner: string, toolboxName: string, unknown: Pick<ErrorFields, 'unknown'>): CallToolResult {
  const next = steps.seeMatches(owner, toolName);
  return errorResult(
    `${quoteClientText(toolName)} is a pattern under toolbox "${owner}", not "${toolboxName}", and ${steps.callsOneTool}. ${next}`,
    'TOOL_NOT_FOUND',
    { toolbox: toolboxName, ...unknown, hint: next },
  );
}

/** ErrorFields.unknown of a full name (`parts`) whose toolbox, one of `toolboxes`, does not have its server; else none. */
function unknownPart(toolboxes: ReadonlyMap<string, ToolboxConfig>, parts: ToolNameParts | undefined): Pick<ErrorFields, 'unknown'> {
  const toolbox = parts && toolboxes.get(parts.toolbox);
  return toolbox && !toolbox.servers.some((s) => s.name === parts!.server) ? { unknown: 'server' } : {};
}

/**
 * `use_tool` with a toolset name: the tool is routed to the toolbox that owns it, under its canonical name. A bare or
 * loose name waits for the toolset's servers as it would for a toolbox's, and is answered the same way.
 */
async function useToolsetTool(host: UseToolHost, toolset: ResolvedToolset, toolName: string, args: Record<string, unknown> | undefined, options: UseToolOptions): Promise<CallToolResult> {
  const scope = host.scopeOf(options.scope);
  const nameWait: ToolsetNameWait = {
    lastKnown: async ({ toolbox, server }) => {
      const config = host.toolboxes().get(toolbox)?.servers.find((s) => s.name === server);
      const tools = config && (await host.lastKnownTools(scope, toolbox, config));
      return tools && new ToolboxCatalog(toolbox, [{ server, tools }], host.policy());
    },
    wait: (sites, judge) => waitForName(host, scope, sites, judge),
  };
  let route;
  try {
    route = await routeToolsetCall(host.toolsetHost(scope), toolset, toolName, new Set(host.toolboxes().keys()), nameWait);
  } catch (error) {
    if (isWorkbenchError(error)) return failureResult(error, `Cannot call ${quoteClientText(toolName)}: `);
    throw error;
  }
  if ('error' in route) {
    const where = { kind: 'toolset', name: toolset.config.name } as const;
    const steps = stepsOf(options);
    if (route.elsewhere !== undefined) return errorResult(`${route.error} ${steps.callThere(route.elsewhere, toolName)}`, route.code, unknownPart(host.toolboxes(), parseToolName(toolName)));
    if (route.ambiguous !== undefined) return errorResult(`${route.error} ${steps.pickFullName(where, route.ambiguous)}`, route.code);
    if (!route.waited) return errorResult(route.error, route.code);
    // Not found among the toolset's tools (only that answer waited): where to see them ends it.
    const next = steps.listTools(where);
    return waitedRefusal(where, toolName, route.waited, route.suggestions ?? [], steps) ?? errorResult(`${route.error} ${next}`, route.code, { hint: next });
  }
  return useToolNow(host, route.toolbox, route.toolName, args, options);
}

/** One use_tool call on its way: who serves it, what was asked. */
interface UseRequest {
  host: UseToolHost;
  scope: Scope;
  toolbox: ToolboxConfig;
  toolName: string;
  args: Record<string, unknown> | undefined;
  options: UseToolOptions;
}

/** What the name resolved to so far: its parts when canonical, its server when the toolbox has it, the lookup. */
interface Resolution {
  parts: ToolNameParts | undefined;
  knownServer: ServerConfig | undefined;
  lookup: ToolLookup;
  /** A bare or loose name while some server of the toolbox is not connected: unique only across all of them. */
  wholeToolboxNeeded: boolean;
}

/** `use_tool` for a name the catalog cannot answer yet: connects what the name needs, then resolves it again. */
async function connectThenUse(request: UseRequest, resolution: Resolution): Promise<CallToolResult> {
  const { host, toolbox, toolName } = request;
  const { parts, knownServer } = resolution;
  if (parts && knownServer && !('found' in resolution.lookup)) {
    // Not in the catalog of enabled tools (which the policy built): decide from the name alone, before anything is
    // connected or counted for a disabled tool.
    const visibility = host.policy().check(toolbox.name, parts.server, parts.tool);
    if (!visibility.enabled) return disabledResult(toolName, visibility.reason, visibility.source, { toolbox: toolbox.name, server: parts.server, tool: parts.tool }, undefined, stepsOf(request.options));
  }
  let lookup = resolution.lookup;
  if (parts?.toolbox === toolbox.name && !knownServer && !('found' in lookup)) {
    // A server the toolbox does not have: no start can make the name valid, so nothing is started or waited for.
    const known = lastKnownLookup(host, toolbox.name, await knownLists(host, request.scope, toolbox), toolName, true);
    return lookupRefusal(request, known && 'notFound' in known ? known : lookup, parts, knownServer);
  }
  if (!('found' in lookup) || resolution.wholeToolboxNeeded) {
    const connected = await connectFor(request, knownServer);
    if ('refusal' in connected) return connected.refusal;
    lookup = connected.lookup;
  }
  if ('found' in lookup) return forward(host, request.scope, toolbox, lookup.found, request.args, request.options);
  return lookupRefusal(request, lookup, parts, knownServer);
}

/** Default `useToolWaitMs`: below the 60 s many clients wait for a result, so they hear why rather than time out. */
export const DEFAULT_USE_TOOL_WAIT_MS = 45_000;

/** A toolbox's `useToolWaitMs`: its own, else the config's top level, else the default. */
export function useToolWaitMs(config: WorkbenchConfig, toolbox: string): number {
  return toolboxSetting(config, toolbox, 'useToolWaitMs') ?? DEFAULT_USE_TOOL_WAIT_MS;
}

/**
 * Connects what a name needs — just its server for a canonical name, else the whole toolbox — and looks the name up
 * again; a failure to connect is a refusal naming the cause, and so is a server still starting after
 * `useToolWaitMs` (it keeps starting) — or after `openWaitMs` when its last start timed out (name-wait.ts serverWait).
 * A bare name waits as name-wait.ts `waitForName` says.
 */
async function connectFor(request: UseRequest, knownServer: ServerConfig | undefined): Promise<{ lookup: ToolLookup } | { refusal: CallToolResult }> {
  const { host, scope, toolbox, toolName } = request;
  const cannotCall = (error: WorkbenchError): { refusal: CallToolResult } => ({
    refusal: failureResult(error, `Cannot call ${quoteClientText(toolName)}: `, { toolbox: toolbox.name }),
  });
  try {
    if (knownServer && !scope.manager.isConnected(toolbox.name, knownServer.name)) {
      const connect = scope.manager.connectServer(toolbox.name, knownServer.name);
      // A server whose last start timed out is waited for only up to openWaitMs (see serverWait).
      const { waitMs, again } = serverWait(host, scope, toolbox.name, knownServer.name);
      const connected = await within(connect, waitMs);
      const site = { toolbox: toolbox.name, server: knownServer.name };
      const steps = stepsOf(request.options);
      if (!connected) return { refusal: again ? startingAgain(site.toolbox, toolName, site.server, again, waitMs, steps) : stillStarting({ kind: 'toolbox', name: site.toolbox }, toolName, [site], waitMs, [], steps) };
      if (connected.value) return cannotCall(connected.value);
    } else if (!knownServer) {
      const waited = await lookupAcrossToolbox(host, scope, toolbox, toolName);
      // Not found while servers that may have it still start: a wait to retry, not an unknown name.
      const where = { kind: 'toolbox', name: toolbox.name } as const;
      const refusal = 'notFound' in waited.lookup ? waitedRefusal(where, toolName, waited, waited.lookup.suggestions, stepsOf(request.options)) : undefined;
      return refusal ? { refusal } : { lookup: waited.lookup };
    }
    return { lookup: host.cachedCatalog(scope, toolbox.name).catalog.find(toolName) };
  } catch (error) {
    // The toolbox went away meanwhile (a config reload removed it) or the workbench is shutting down: still a
    // tool result that says so, never a JSON-RPC error.
    if (isWorkbenchError(error)) return cannotCall(error);
    throw error;
  }
}

/** Why a name that is not an enabled tool cannot be called: disabled, ambiguous, or unknown (with the closest names). */
function lookupRefusal(request: UseRequest, lookup: Exclude<ToolLookup, { found: CatalogTool }>, parts: ToolNameParts | undefined, knownServer: ServerConfig | undefined): CallToolResult {
  const { scope, toolbox, toolName } = request;
  const toolboxName = toolbox.name;
  const steps = stepsOf(request.options);
  const where = { kind: 'toolbox', name: toolboxName } as const;
  const next = steps.listTools(where);
  if ('hidden' in lookup) {
    const { source, reason, user } = lookup.hidden.visibility;
    const hidden = lookup.hidden;
    return disabledResult(hidden.name, reason, source, { toolbox: toolboxName, server: hidden.server, tool: hidden.tool.name }, user, steps);
  }
  if ('ambiguous' in lookup) {
    const names = lookup.ambiguous.map((t) => t.name);
    const full = steps.pickFullName(where, names);
    return errorResult(
      `Tool name ${quoteClientText(toolName)} is ambiguous in toolbox "${toolboxName}": it matches ${names.join(', ')}. ${full}`,
      'TOOL_NOT_FOUND',
      { toolbox: toolboxName, hint: full },
    );
  }
  if (parts?.toolbox === toolboxName && !knownServer) {
    const closest = 'notFound' in lookup && lookup.suggestions.length > 0 ? ` Closest names: ${lookup.suggestions.join(', ')}.` : '';
    return errorResult(
      `Tool ${quoteClientText(toolName)} names server "${parts.server}", which toolbox "${toolboxName}" does not have. Its servers: ${toolbox.servers.map((s) => s.name).join(', ')}.${closest} ${next}`,
      'TOOL_NOT_FOUND',
      { toolbox: toolboxName, unknown: 'server', hint: next },
    );
  }
  // A tool its server listed but the workbench left out: say so and why, not "unknown".
  const listed = scope.manager.serverTools(toolboxName);
  const leftOut = parts && knownServer ? leftOutRefusal(steps, listed, toolboxName, toolName, parts.tool, parts.server) : leftOutRefusal(steps, listed, toolboxName, toolName, toolName);
  if (leftOut) return leftOut;
  const failed = toolbox.servers.filter((s) => !scope.manager.isConnected(toolboxName, s.name)).map((s) => s.name);
  const hint = lookup.suggestions.length > 0 ? ` Closest names: ${lookup.suggestions.join(', ')}.` : '';
  const down = failed.length > 0 ? ` Not connected (their tools are unavailable): ${failed.join(', ')}.` : '';
  return errorResult(
    `Unknown tool ${quoteClientText(toolName)} in toolbox "${toolboxName}".${hint}${down} ${next}`,
    'TOOL_NOT_FOUND',
    { toolbox: toolboxName, hint: next },
  );
}

/** The next steps the caller's refusals end with (UseToolOptions.steps): by default the model's. */
function stepsOf(options: UseToolOptions): NextSteps {
  return options.steps ?? MODEL_STEPS;
}

/** Validates the arguments, forwards the call, and checks what came back. */
function forward(host: UseToolHost, scope: Scope, toolbox: ToolboxConfig, entry: CatalogTool, args: Record<string, unknown> | undefined, options: UseToolOptions): Promise<CallToolResult> {
  const toolboxName = toolbox.name;
  const validate = host.validators.input(entry.tool);
  const input = args ?? {};
  if (validate && !validate(input)) {
    return Promise.resolve(errorResult(
      `Invalid arguments for "${entry.name}" (server "${entry.server}", tool "${entry.tool.name}"):\n${argumentProblems(validate.errors ?? [])}\n${schemaReminder(entry, stepsOf(options))}`,
      'INVALID_ARGUMENTS',
      { ...siteOf(toolboxName, entry), hint: "Fix the arguments to match the tool's inputSchema." },
    ));
  }

  // A task-only tool, and an optional one whose call may outlast the client's patience, is called as a task and
  // waited for (README "Task-only tools").
  const taskSupport = entry.tool.execution?.taskSupport;
  const timeoutMs = taskSupport === 'optional' ? (toolbox.servers.find((s) => s.name === entry.server)?.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS) : 0;
  const callOptions = taskSupport !== undefined && callsAsTask(taskSupport, timeoutMs, options.onprogress !== undefined) ? { ...options, task: true } : options;
  return host.tracked(scope, toolboxName, entry.server, options.call, () =>
    scope.manager.callTool(toolboxName, entry.server, entry.tool.name, args, callOptions),
  ).then(
    // A modern server's input-required answer, passed through for the client to answer itself, has nothing to check.
    // The URIs a result carries are remembered, so resources/read finds the server that produced them.
    options.passInputRequired
      ? (result) => ((result as { resultType?: unknown }).resultType === 'input_required' ? result : checkOutput(entry, noted(scope, toolboxName, entry.server, result), host.validators))
      : (result) => checkOutput(entry, noted(scope, toolboxName, entry.server, result), host.validators),
    (error: unknown) => {
      if (isWorkbenchError(error)) return failureResult(error, `${entry.name}: `, siteOf(toolboxName, entry));
      throw error;
    },
  );
}

/** The result, with the URIs it carries noted in the session's books. */
function noted(scope: Scope, toolbox: string, server: string, result: CallToolResult): CallToolResult {
  scope.features.noteResult(toolbox, server, result.content);
  return result;
}

/** Checks what came back: a readable content list, and structuredContent against the tool's own outputSchema. */
function checkOutput(entry: CatalogTool, raw: CallToolResult, validators: ToolValidators): CallToolResult {
  // The result arrives unparsed (see CallChannel): check the one thing every client relies on. A missing content
  // list is what older servers send with structuredContent; clients read it as empty, and so do we.
  if (raw.content !== undefined && !Array.isArray(raw.content)) {
    return errorResult(
      `${entry.name}: the server's result has a "content" that is not a list, so no client can read it. Report this to the server's maintainers.`,
      'INVALID_OUTPUT',
      { ...siteOf(entry.toolbox, entry), hint: "Report this to the server's maintainers." },
    );
  }
  const result = raw.content === undefined ? { ...raw, content: [] } : raw;
  if (result.isError || !entry.tool.outputSchema) return result;
  if (result.structuredContent === undefined) {
    return errorResult(
      `${entry.name}: the server declared an outputSchema for "${entry.tool.name}" but returned no structuredContent. The tool's result cannot be trusted; report this to the server's maintainers.`,
      'INVALID_OUTPUT',
      { ...siteOf(entry.toolbox, entry), hint: "Report this to the server's maintainers." },
    );
  }
  const validate = validators.output(entry.tool);
  if (validate && !validate(result.structuredContent)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');
    return {
      ...result,
      isError: true,
      content: [
        { type: 'text', text: `${entry.name}: the server's structuredContent does not match its own outputSchema (${problems}).` },
        ...result.content,
      ],
      _meta: { ...result._meta, [ERROR_META_KEY]: errorMeta('INVALID_OUTPUT', siteOf(entry.toolbox, entry)) },
    };
  }
  return result;
}

/** Where a call to `entry` happens, as the fields of a failure. */
function siteOf(toolbox: string, entry: CatalogTool): FailureSite {
  return { toolbox, server: entry.server, tool: entry.tool.name };
}

/** Violations found, one line each: the first ten, each cut to 200 characters, and how many more there were. */
function argumentProblems(errors: readonly { instancePath: string; message?: string; params: unknown }[]): string {
  const lines = errors.slice(0, 10).map((e) => {
    const line = `- ${e.instancePath || '(arguments)'} ${e.message ?? 'is invalid'}${describeParams(e.params as Record<string, unknown>)}`;
    return line.length > 200 ? `${line.slice(0, 200)}…` : line;
  });
  return errors.length > 10 ? `${lines.join('\n')}\n- … and ${errors.length - 10} more` : lines.join('\n');
}

/** The inputSchema to match, inline when it is short; else where to read it (open_toolbox names it). */
function schemaReminder(entry: CatalogTool, steps: NextSteps): string {
  const schema = JSON.stringify(entry.tool.inputSchema);
  if (schema.length <= 4_000) return `Fix the arguments to match the tool's inputSchema: ${schema}`;
  return steps.readSchema(entry.toolbox, entry.name, schema);
}
