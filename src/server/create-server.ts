import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  RequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  ResultSchema,
  RootsListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { isWorkbenchError } from '../errors.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Cancellation } from '../shared/cancellation.js';
import { StdioServerLineTransport } from './stdio-server-transport.js';
import { createToolCallPipeline, type ToolCallHandlers } from './tool-call-pipeline.js';
import type { Logger } from '../log.js';
import { nameProblem, quoteClientText } from '../shared/client-text.js';
import { ENABLE_TOOLS, LIST_ALL_TOOLS, enableTools, listAllTools, managementToolDefinitions } from './management-tools.js';
import { OPEN_TOOLBOX, USE_TOOL, metaToolDefinitions } from './meta-tools.js';
import { describeValue, parseOpenToolboxArgs } from './open-toolbox-params.js';
import { errorResult } from '../core/tool-entry.js';
import { type UpstreamSession, type Workbench } from '../core/workbench.js';

/**
 * tools/call with its params unchecked: the SDK's strict schema would turn a malformed request into a -32603
 * internal error with a schema dump before any handler runs; the SDK's tools/call wrapper still checks it and answers
 * -32602, as the README's "Errors" paragraph promises.
 */
const LooseCallToolRequestSchema = CallToolRequestSchema.extend({ params: RequestSchema.shape.params });

/** enable_tools: names per list and call (a glob covers many tools). */
const MAX_NAMES_PER_CALL = 1000;

/** Relayed requests may wait for a human (elicitation) or a model (sampling): allow long, but not forever. */
const RELAY_TIMEOUT_MS = 10 * 60_000;

/**
 * One MCP server session over a shared Workbench. Malformed requests to the workbench itself (unknown top-level
 * tool, wrong parameter types) are JSON-RPC -32602; everything about toolboxes and downstream tools is an
 * `isError` tool result.
 */
export interface CreateServerOptions {
  /** Offer list_all_tools and enable_tools, persisting changes to this state file. */
  management?: { statePath: string; log: Logger };
  /**
   * Give this session downstream connections of its own (HTTP: sessions never see each other's servers). Without
   * it the session uses the workbench's own connections (stdio: the only session).
   */
  isolated?: boolean;
}

export interface WorkbenchServer {
  server: Server;
  /**
   * Connects the MCP server to a transport and puts the tool-call pipeline in front of it: over stdio as the
   * transport's intercept (a framing shortcut), on any other transport around its message handler.
   */
  connect(transport: Transport): Promise<void>;
  close(): Promise<void>;
}

export function createServer(workbench: Workbench, version: string, options: CreateServerOptions = {}): WorkbenchServer {
  const server = new Server(
    { name: 'mcp-workbench', title: 'MCP Workbench', version },
    { capabilities: { tools: { listChanged: true }, logging: {} }, instructions: workbench.instructions() },
  );
  const management = options.management;
  // The meta-tools' enums carry the current toolbox and toolset names: `initialize` instructions cannot change after
  // a config reload, but the tool list can, and the client is told to fetch it again.
  const definitions = (): Tool[] => [
    ...metaToolDefinitions(workbench.catalogNames()),
    ...(management ? managementToolDefinitions(workbench.toolboxConfigs().map((t) => t.name)) : []),
  ];
  let tools = definitions();
  const toolNames = tools.map((t) => t.name);
  const stopFollowing = workbench.onCatalogChanged(() => {
    tools = definitions();
    if (server.transport) void server.sendToolListChanged().catch(() => {});
  });

  const session: UpstreamSession = {
    capabilities: () => server.getClientCapabilities(),
    request: (request, signal) =>
      server.request(request, ResultSchema, { signal, timeout: RELAY_TIMEOUT_MS, resetTimeoutOnProgress: true }),
    // With the session id, the SDK applies this session's logging/setLevel (it keeps levels per session).
    log: (params) => void server.sendLoggingMessage(params, server.transport?.sessionId).catch(() => {}),
  };
  const scope = workbench.openSession(session, { isolated: options.isolated === true });
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => scope.manager.notifyRootsChanged());

  const handlers: ToolCallHandlers = {
    /** use_tool: parameters checked (a -32602 error when malformed), then the workbench does the rest. */
    useTool: (args, call) => {
      const toolbox = requireString(args, 'toolbox_name', USE_TOOL);
      const toolName = requireString(args, 'tool_name', USE_TOOL);
      rejectUnknownParams(args, ['toolbox_name', 'tool_name', 'arguments'], USE_TOOL);
      const toolArgs = args.arguments;
      if (toolArgs !== undefined && (typeof toolArgs !== 'object' || toolArgs === null || Array.isArray(toolArgs))) {
        throw invalidParams(`${USE_TOOL}: "arguments" must be an object of the tool's arguments, got ${describeValue(toolArgs)}`);
      }
      const { progressToken } = call;
      return workbench.useTool(toolbox, toolName, toolArgs as Record<string, unknown> | undefined, {
        scope,
        cancellation: call.cancellation,
        meta: call.meta,
        call: { session, request: call.request },
        onprogress:
          progressToken === undefined
            ? undefined
            : (progress) => call.notify({ method: 'notifications/progress', params: { ...progress, progressToken } }),
      });
    },
    openToolbox: async (args) => {
      const request = parseOpenToolboxArgs(args);
      if (typeof request === 'string') throw invalidParams(request);
      try {
        const { result, text } = await workbench.openToolbox(request, scope);
        return { content: [{ type: 'text', text }], structuredContent: result as unknown as Record<string, unknown> };
      } catch (error) {
        if (isWorkbenchError(error)) return errorResult(`${error.toDisplayString()} Call open_toolbox with one of them.`, error.code);
        throw error;
      }
    },
    relay: (request, signal, relatedRequestId) =>
      server.request(request, ResultSchema, { signal, timeout: RELAY_TIMEOUT_MS, resetTimeoutOnProgress: true, relatedRequestId }),
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));

  // What the pipeline does not take: management tools, unknown tool names, task-augmented calls.
  server.setRequestHandler(LooseCallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params?.name as string;
    const args = (request.params?.arguments ?? {}) as Record<string, unknown>;
    if (name === OPEN_TOOLBOX) return handlers.openToolbox(args);
    if (name === USE_TOOL) {
      return handlers.useTool(args, {
        cancellation: Cancellation.from(extra.signal) ?? new Cancellation(),
        progressToken: extra._meta?.progressToken,
        meta: request.params?._meta as Record<string, unknown> | undefined,
        notify: (notification) => void extra.sendNotification(notification).catch(() => {}),
        request: (relayed, signal) => extra.sendRequest(relayed, ResultSchema, { signal, timeout: RELAY_TIMEOUT_MS, resetTimeoutOnProgress: true }),
      });
    }
    if (management && name === LIST_ALL_TOOLS) {
      rejectUnknownParams(args, ['toolbox'], name);
      const toolbox = args.toolbox === undefined ? undefined : requireString(args, 'toolbox', name);
      return listAllTools(workbench, toolbox, scope);
    }
    if (management && name === ENABLE_TOOLS) {
      rejectUnknownParams(args, ['enable', 'disable'], name);
      return enableTools(
        workbench,
        management.statePath,
        management.log,
        { enable: optionalStrings(args, 'enable', name), disable: optionalStrings(args, 'disable', name) },
        scope,
      );
    }
    throw invalidParams(`Unknown tool ${quoteClientText(String(name))}. This server's tools are: ${toolNames.join(', ')}.`);
  });

  return {
    server,
    connect: async (transport) => {
      if (transport instanceof StdioServerLineTransport) {
        const pipeline = createToolCallPipeline(handlers, transport);
        transport.intercept = (message) => pipeline.take(message);
        await server.connect(transport);
        return;
      }
      await server.connect(transport);
      const pipeline = createToolCallPipeline(handlers, transport);
      const inner = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (!pipeline.take(message)) inner?.(message, extra);
      };
    },
    close: async () => {
      stopFollowing();
      await scope.close();
      await server.close();
    },
  };
}

/**
 * A name parameter (`toolbox_name`, `tool_name`, `toolbox`): a non-empty string of at most 256 characters without
 * control characters, checked before any lookup so a hostile name costs nothing and is never echoed whole.
 * On use_tool's hot path: for a normal name this is a type check, a length check and one pass over its characters.
 */
function requireString(args: Record<string, unknown>, key: string, tool: string): string {
  const value = args[key];
  if (typeof value === 'string') {
    const problem = nameProblem(value);
    if (problem !== undefined) throw invalidParams(`${tool}: "${key}" ${problem}`);
  }
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if (trimmed === '') throw invalidParams(`${tool}: "${key}" must be a non-empty string, got ${describeValue(value)}`);
  return trimmed;
}

/**
 * A JSON-RPC -32602 error whose message reaches the client as written (an McpError's message carries an
 * "MCP error -32602:" prefix, which the client's SDK then adds a second time).
 */
export function invalidParams(message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
}

function optionalStrings(args: Record<string, unknown>, key: string, tool: string): string[] {
  const value = args[key];
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw invalidParams(`${tool}: "${key}" must be an array of tool names, got ${describeValue(value)}`);
  }
  if (value.length > MAX_NAMES_PER_CALL) {
    throw invalidParams(`${tool}: "${key}" has ${value.length} names; at most ${MAX_NAMES_PER_CALL} per call (use a * glob for many)`);
  }
  for (const [index, name] of (value as string[]).entries()) {
    const problem = nameProblem(name);
    if (problem !== undefined) throw invalidParams(`${tool}: "${key}"[${index}] ${problem}`);
  }
  return value as string[];
}

function rejectUnknownParams(args: Record<string, unknown>, allowed: readonly string[], tool: string): void {
  // Checked without building arrays: this runs on every use_tool.
  let clean = true;
  for (const key in args) if (!allowed.includes(key)) clean = false;
  if (clean) return;
  const unknown = Object.keys(args).filter((k) => !allowed.includes(k));
  // Keys are the client's: quoted, escaped and cut, and only the first few named.
  const shown = unknown.slice(0, 5).map((k) => quoteClientText(k)).join(', ') + (unknown.length > 5 ? ` and ${unknown.length - 5} more` : '');
  throw invalidParams(`${tool}: unknown parameter${unknown.length > 1 ? 's' : ''} ${shown}; expected ${allowed.join(', ')}`);
}
