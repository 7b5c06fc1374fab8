import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  RequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  ResultSchema,
  RootsListChangedNotificationSchema,
  type CallToolResult,
  type ProgressToken,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { isWorkbenchError } from '../errors.js';
import { Cancellation } from '../clients/cancellation.js';
import type { Logger } from '../log.js';
import { ENABLE_TOOLS, LIST_ALL_TOOLS, enableTools, listAllTools, managementToolDefinitions } from './management-tools.js';
import { OPEN_TOOLBOX, USE_TOOL, metaToolDefinitions } from './meta-tools.js';
import { parseOpenToolboxArgs } from './open-toolbox-params.js';
import { errorResult, type CallContext, type UpstreamSession, type Workbench } from './workbench.js';

/**
 * tools/call with its params unchecked: the SDK's strict schema would turn a malformed request into a -32603
 * internal error with a schema dump before any handler runs; the SDK's tools/call wrapper still checks it and answers
 * -32602, which is what DESIGN §4 asks for.
 */
const LooseCallToolRequestSchema = CallToolRequestSchema.extend({ params: RequestSchema.shape.params });

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
}

/** What a use_tool request brings besides its arguments. */
export interface UseToolCall {
  cancellation?: Cancellation;
  progressToken?: ProgressToken;
  /** Sends a notification to the client (progress), tied to this request where the transport can. */
  notify(notification: ServerNotification): Promise<void>;
  /** Sends a request to the client (relayed sampling, elicitation, roots) on behalf of this call. */
  request: CallContext['request'];
}

export type UseToolHandler = (args: Record<string, unknown>, call: UseToolCall) => Promise<CallToolResult>;

export function createServer(
  workbench: Workbench,
  version: string,
  options: CreateServerOptions = {},
): { server: Server; useTool: UseToolHandler; session: UpstreamSession; close: () => Promise<void> } {
  const server = new Server(
    { name: 'mcp-workbench', title: 'MCP Workbench', version },
    { capabilities: { tools: {}, logging: {} }, instructions: workbench.instructions() },
  );
  const toolboxNames = workbench.toolboxConfigs().map((t) => t.name);
  const management = options.management;
  const tools = [...metaToolDefinitions(toolboxNames), ...(management ? managementToolDefinitions(toolboxNames) : [])];
  const toolNames = tools.map((t) => t.name);

  const session: UpstreamSession = {
    capabilities: () => server.getClientCapabilities(),
    request: (request, signal) =>
      server.request(request, ResultSchema, { signal, timeout: RELAY_TIMEOUT_MS, resetTimeoutOnProgress: true }),
    // With the session id, the SDK applies this session's logging/setLevel (it keeps levels per session).
    log: (params) => void server.sendLoggingMessage(params, server.transport?.sessionId).catch(() => {}),
  };
  const removeSession = workbench.addSession(session);
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => workbench.manager.notifyRootsChanged());

  /**
   * use_tool for one request: parameters checked (a -32602 error when malformed), then the workbench does the rest.
   * Shared by the SDK request handler and the stdio fast lane, so both behave the same.
   */
  const useTool: UseToolHandler = (args, call) => {
    const toolbox = requireString(args, 'toolbox_name', USE_TOOL);
    const toolName = requireString(args, 'tool_name', USE_TOOL);
    rejectUnknownParams(args, ['toolbox_name', 'tool_name', 'arguments'], USE_TOOL);
    const toolArgs = args.arguments;
    if (toolArgs !== undefined && (typeof toolArgs !== 'object' || toolArgs === null || Array.isArray(toolArgs))) {
      throw invalidParams(`${USE_TOOL}: "arguments" must be an object of the tool's arguments, got ${describe(toolArgs)}`);
    }
    const { progressToken } = call;
    return workbench.useTool(toolbox, toolName, toolArgs as Record<string, unknown> | undefined, {
      cancellation: call.cancellation,
      call: { session, request: call.request },
      onprogress:
        progressToken === undefined
          ? undefined
          : (progress) => void call.notify({ method: 'notifications/progress', params: { ...progress, progressToken } }).catch(() => {}),
    });
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));

  server.setRequestHandler(LooseCallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params?.name as string;
    const args = (request.params?.arguments ?? {}) as Record<string, unknown>;
    if (name === OPEN_TOOLBOX) {
      const request = parseOpenToolboxArgs(args);
      if (typeof request === 'string') throw invalidParams(request);
      try {
        const { result, text } = await workbench.openToolbox(request);
        return { content: [{ type: 'text', text }], structuredContent: result as unknown as Record<string, unknown> };
      } catch (error) {
        if (isWorkbenchError(error)) return errorResult(`${error.toDisplayString()} Call open_toolbox with one of them.`, error.code);
        throw error;
      }
    }
    if (name === USE_TOOL) {
      return useTool(args, {
        cancellation: Cancellation.from(extra.signal),
        progressToken: extra._meta?.progressToken,
        notify: (notification) => extra.sendNotification(notification),
        request: (relayed, signal) =>
          extra.sendRequest(relayed, ResultSchema, { signal, timeout: RELAY_TIMEOUT_MS, resetTimeoutOnProgress: true }),
      });
    }
    if (management && name === LIST_ALL_TOOLS) {
      rejectUnknownParams(args, ['toolbox'], name);
      const toolbox = args.toolbox === undefined ? undefined : requireString(args, 'toolbox', name);
      return listAllTools(workbench, toolbox);
    }
    if (management && name === ENABLE_TOOLS) {
      rejectUnknownParams(args, ['enable', 'disable'], name);
      return enableTools(workbench, management.statePath, management.log, {
        enable: optionalStrings(args, 'enable', name),
        disable: optionalStrings(args, 'disable', name),
      });
    }
    throw invalidParams(`Unknown tool "${name}". This server's tools are: ${toolNames.join(', ')}.`);
  });

  return {
    server,
    useTool,
    session,
    close: async () => {
      removeSession();
      await server.close();
    },
  };
}

function requireString(args: Record<string, unknown>, key: string, tool: string): string {
  const value = args[key];
  const trimmed = typeof value === 'string' ? value.trim() : '';
  if (trimmed === '') throw invalidParams(`${tool}: "${key}" must be a non-empty string, got ${describe(value)}`);
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
    throw invalidParams(`${tool}: "${key}" must be an array of tool names, got ${describe(value)}`);
  }
  return value as string[];
}

function rejectUnknownParams(args: Record<string, unknown>, allowed: readonly string[], tool: string): void {
  // Checked without building arrays: this runs on every use_tool.
  let clean = true;
  for (const key in args) if (!allowed.includes(key)) clean = false;
  if (clean) return;
  const unknown = Object.keys(args).filter((k) => !allowed.includes(k));
  throw invalidParams(
    `${tool}: unknown parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}; expected ${allowed.join(', ')}`,
  );
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.trim() === '' ? 'an empty string' : 'a string';
  return `a ${typeof value}`;
}
