import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  createRequestStateCodec,
  type CallToolResult,
  type ClientCapabilities,
  type RequestId,
  type ServerContext,
  type Tool,
  type Transport,
} from '@modelcontextprotocol/server';
import { isWorkbenchError } from '../errors.js';
import { Cancellation } from '../shared/cancellation.js';
import { StdioServerLineTransport } from './stdio-server-transport.js';
import {
  createToolCallPipeline,
  type MetaToolCall,
  type ModernAnswer,
  type ModernHandlers,
  type ModernPipelineOptions,
  type ToolCallHandlers,
  type ToolCallPipeline,
  type ReplySink,
  type UseToolCall,
} from './tool-call-pipeline.js';
import { AcceptedEnvelopes } from './modern-wire.js';
import type { Logger } from '../log.js';
import { quoteClientText } from '../shared/client-text.js';
import { callManagementTool, managementToolDefinitions } from './management-tools.js';
import { OPEN_TOOLBOX, OPEN_TOOLBOX_USAGE, USE_TOOL, USE_TOOL_USAGE, metaToolDefinitions } from './meta-tools.js';
import { parseOpenToolboxArgs } from './open-toolbox-params.js';
import { failureResult } from '../core/tool-entry.js';
import { type UpstreamSession, type Workbench } from '../core/workbench.js';
import type { UseToolOptions } from '../core/scope.js';
import { InputRounds } from './input-rounds.js';
import { createModernUseTool, type RequestStatePayload } from './modern-use-tool.js';
import type { ServerNotice } from '../clients/feature-notices.js';
import { featureCapabilities, registerFeatureHandlers, sendNotice } from './feature-handlers.js';
import { ListenSubscriptions } from '../core/listen-subscriptions.js';
import { invalidParams, refusal, useToolProblem } from './tool-params.js';

/** Relayed requests may wait for a human (elicitation) or a model (sampling): allow long, but not forever. */
const RELAY_TIMEOUT_MS = 10 * 60_000;

/** How long a client of MCP 2026-07-28 may keep the tool list without asking again (it is the same for everyone). */
const TOOLS_LIST_TTL_MS = 60_000;

export type Era = 'legacy' | 'modern';

/**
 * One MCP client session over a shared Workbench. Only protocol faults are JSON-RPC errors (-32602 for an unknown
 * top-level tool or a malformed tools/call); a meta-tool's malformed parameters and everything about toolboxes and
 * downstream tools are `isError` tool results (README "Errors").
 */
export interface CreateServerOptions {
  /** Offer list_all_tools and enable_tools, persisting changes to this state file. */
  management?: { statePath: string; log: Logger };
  /**
   * Give this session downstream connections of its own (HTTP: sessions never see each other's servers). Without
   * it the session uses the workbench's own connections (stdio: the only session).
   */
  isolated?: boolean;
  /**
   * Who this surface serves, for the input rounds of MCP 2026-07-28 calls: a retry is only ever matched to rounds of
   * the same owner (over HTTP the bearer token that admitted the request).
   */
  owner?: string;
  /**
   * The key `requestState` is signed with (at least 32 bytes). Workbench processes that share it accept each other's
   * pass-through input rounds (replicas: derived from their tokens); default, a key of this process.
   */
  stateKey?: Uint8Array;
  /** Who the calls come from, for the debug and audit logs: the HTTP session id; default `stdio`. */
  sessionLabel?: () => string | undefined;
  /** Who the client is, for the debug and audit logs: see principalLabel; default `stdio`. */
  principal?: string;
}

/**
 * What one client (a stdio connection, a legacy HTTP session, or every modern HTTP request of one token) sees: its
 * downstream scope, its tool list, its input rounds. MCP server instances are made from it per era — over stdio one
 * for the connection, over modern HTTP one per request — and are cheap.
 */
export interface UpstreamSurface {
  /**
   * A server instance for one era. A legacy instance becomes the surface's way to reach its client. `handed`: the
   * answer the tool-call pipeline worked out for the one request a modern per-request instance serves (HTTP), which
   * its tools/call handler frames instead of calling again.
   */
  instance(era: Era, handed?: Promise<ModernAnswer>): Server;
  /**
   * The tool-call pipeline over a reply sink: a framing shortcut in front of the instance. In the modern era it needs
   * `deliver`, the way to the instance for the requests it hands over (see {@link createToolCallPipeline}).
   */
  pipeline(sink: ReplySink, modern?: Omit<ModernPipelineOptions, 'handlers'>): ToolCallPipeline;
  /** Calls the listener when the tool list changes (a config reload renamed toolboxes); returns the unsubscribe. */
  onToolsChanged(listener: () => void): () => void;
  /** Calls the listener when a resource or prompt list changes or a subscribed resource is updated; returns the unsubscribe. */
  onNotice(listener: (notice: ServerNotice) => void): () => void;
  /** Input rounds held for calls of clients of MCP 2026-07-28. */
  readonly rounds: InputRounds;
  /** The resource subscriptions of a client of MCP 2026-07-28's subscriptions/listen streams. */
  readonly listens: ListenSubscriptions;
  close(): Promise<void>;
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

/** The signing key when none is given: good for one process (stdio; HTTP without a token). */
const processKey = randomBytes(32);

export function createSurface(workbench: Workbench, version: string, options: CreateServerOptions = {}): UpstreamSurface {
  const management = options.management;
  const owner = options.owner ?? 'local';
  const sessionLabel = options.sessionLabel ?? (() => 'stdio');
  const principal = options.principal ?? 'stdio';
  // The meta-tools' enums carry the current toolbox and toolset names: instructions cannot change after a config
  // reload, but the tool list can, and the client is told to fetch it again.
  const definitions = (): Tool[] => [
    ...metaToolDefinitions(workbench.catalogNames()),
    ...(management ? managementToolDefinitions(workbench.toolboxConfigs().map((t) => t.name)) : []),
  ];
  let tools = definitions();
  const toolNames = tools.map((t) => t.name);
  const listeners = new Set<() => void>();
  const noticeListeners = new Set<(notice: ServerNotice) => void>();
  const stopFollowing = workbench.onCatalogChanged(() => {
    tools = definitions();
    for (const listener of listeners) listener();
  });
  const rounds = new InputRounds();
  // Bound to the owner: a requestState handed to one user is refused when another echoes it.
  const codec = createRequestStateCodec<RequestStatePayload>({ key: options.stateKey ?? processKey, bind: () => owner });

  /** The legacy instance that reaches this surface's client (requests, log messages); none for modern clients. */
  let legacy: Server | undefined;
  /** A modern client's capabilities, as its latest request declared them. */
  let declared: ClientCapabilities | undefined;
  const serverInfo = { name: 'mcp-workbench', title: 'MCP Workbench', version };
  /** Envelopes the SDK accepted (modern era): requests carrying one of them may take the pipeline. */
  const envelopes = new AcceptedEnvelopes();
  /** Answers the modern pipeline worked out and left to the MCP server to frame, by request id. */
  const handedOver = new Map<RequestId, Promise<ModernAnswer>>();
  const session: UpstreamSession = {
    capabilities: () => legacy?.getClientCapabilities() ?? declared,
    request: (request, signal) =>
      legacy
        ? askLegacy(legacy, request, signal)
        : Promise.reject(
            new ProtocolError(
              ProtocolErrorCode.InvalidRequest,
              `the client speaks MCP 2026-07-28, which cannot be sent ${request.method} outside of a call; only a server's requests during a use_tool call reach it`,
            ),
          ),
    // With the session id, the SDK applies this session's logging/setLevel (it keeps levels per session).
    log: (params) => void legacy?.sendLoggingMessage(params, legacy.transport?.sessionId).catch(() => {}),
    notify: (notice) => {
      // A server connected or was lost: URIs the client listens to and that are not subscribed now are tried again.
      if (notice.kind === 'resources') void listens.retry();
      for (const listener of noticeListeners) listener(notice);
    },
  };
  const scope = workbench.openSession(session, { isolated: options.isolated === true });
  const listens = new ListenSubscriptions(() => workbench.featureScope(scope));

  /** use_tool with parameters already checked ({@link useToolProblem}): the workbench does the rest. */
  const checkedUseTool = (args: Record<string, unknown>, call: UseToolCall): Promise<CallToolResult> => {
    const { progressToken } = call;
    const options: UseToolOptions = {
      scope,
      cancellation: call.cancellation,
      meta: call.meta,
      call: { session, request: call.request },
      sessionLabel: sessionLabel(),
      principal,
      onprogress:
        progressToken === undefined
          ? undefined
          : (progress) => call.notify({ method: 'notifications/progress', params: { ...progress, progressToken } }),
    };
    if (call.pass) Object.assign(options, call.pass);
    const toolbox = (args.toolbox_name as string).trim();
    const toolName = (args.tool_name as string).trim();
    return workbench.useTool(toolbox, toolName, args.arguments as Record<string, unknown> | undefined, options);
  };

  const handlers: ToolCallHandlers = {
    /** use_tool: parameters checked (a refusal when malformed), then the workbench does the rest. */
    useTool: (args, call) => {
      const problem = useToolProblem(args);
      return problem === undefined ? checkedUseTool(args, call) : Promise.resolve(refusal(USE_TOOL_USAGE, problem));
    },
    openToolbox: async (args, call) => {
      const request = parseOpenToolboxArgs(args);
      if (typeof request === 'string') return refusal(OPEN_TOOLBOX_USAGE, request);
      const { progressToken } = call;
      const onprogress = (progress: { progress: number; total?: number; message?: string }): void => {
        if (progressToken !== undefined) call.notify({ method: 'notifications/progress', params: { ...progress, progressToken } });
      };
      try {
        const { result, text, isError } = await workbench.openToolbox(request, scope, { onprogress, sessionLabel: sessionLabel(), principal });
        return { content: [{ type: 'text', text }], structuredContent: result as unknown as Record<string, unknown>, ...(isError ? { isError } : {}) };
      } catch (error) {
        if (isWorkbenchError(error)) return failureResult(error);
        throw error;
      }
    },
    relay: (request, signal, relatedRequestId) => (legacy ? askLegacy(legacy, request, signal, relatedRequestId) : session.request(request, signal)),
  };

  const modernUseTool = createModernUseTool({ rounds, owner, codec, checkedUseTool });

  const modern: ModernHandlers = {
    envelopes,
    serverInfo,
    useTool: modernUseTool,
    declared: (capabilities) => void (declared = capabilities),
    handOver: (id, answer) => void handedOver.set(id, answer),
  };

  const instance = (era: Era, handed?: Promise<ModernAnswer>): Server => {
    let bound = handed;
    const server = new Server(
      serverInfo,
      {
        capabilities: { tools: { listChanged: true }, logging: {}, ...featureCapabilities(era) },
        instructions: workbench.instructions(),
        cacheHints: { 'tools/list': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' } },
        requestState: { verify: codec.verify },
      },
    );
    if (era === 'legacy') {
      legacy = server;
      server.setNotificationHandler('notifications/roots/list_changed', () => scope.manager.notifyRootsChanged());
    }
    server.setRequestHandler('tools/list', () => ({ tools }));
    registerFeatureHandlers(server, era, () => workbench.featureScope(scope));
    // What the pipeline does not take: management tools, unknown tool names, task-augmented calls; and every call of a
    // client of MCP 2026-07-28.
    server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
      const name = request.params.name;
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      const meta = request.params._meta as Record<string, unknown> | undefined;
      if (era === 'modern') {
        const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
        const caps = envelope?.[CLIENT_CAPABILITIES_META_KEY];
        if (caps) declared = caps as ClientCapabilities;
        envelopes.accept(envelope);
        // An answer the pipeline worked out and left to this handler to frame.
        const answer = bound ?? handedOver.get(ctx.mcpReq.id);
        if (answer !== undefined) {
          if (bound !== undefined) bound = undefined;
          else handedOver.delete(ctx.mcpReq.id);
          return finish(await answer, ctx);
        }
      }
      if (name === OPEN_TOOLBOX) return handlers.openToolbox(args, metaToolCall(ctx, meta));
      if (name === USE_TOOL) {
        if (era === 'modern') {
          const call = {
            cancellation: Cancellation.from(ctx.mcpReq.signal),
            meta,
            notify: progressSender(ctx),
            state: ctx.mcpReq.requestState<RequestStatePayload>(),
            responses: (ctx.mcpReq.inputResponses ?? {}) as Record<string, unknown>,
          };
          return finish(await modernUseTool(args, call), ctx);
        }
        return handlers.useTool(args, {
          ...metaToolCall(ctx, meta),
          cancellation: Cancellation.from(ctx.mcpReq.signal) ?? new Cancellation(),
          meta,
          request: (relayed, signal) =>
            ctx.mcpReq.send(relayed as never, { signal, timeout: RELAY_TIMEOUT_MS, resetTimeoutOnProgress: true }) as Promise<Record<string, unknown>>,
        });
      }
      const managed = management && callManagementTool(workbench, management, scope, name, args);
      if (managed) return managed;
      // An unknown top-level tool is a protocol fault (the MCP spec answers it with -32602), not a refusal.
      throw invalidParams(`Unknown tool ${quoteClientText(String(name))}. This server's tools are: ${toolNames.join(', ')}.`);
    });
    return server;
  };

  return {
    instance,
    pipeline: (sink, options) => createToolCallPipeline(handlers, sink, options && { ...options, handlers: modern }),
    onToolsChanged: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    onNotice: (listener) => {
      noticeListeners.add(listener);
      return () => void noticeListeners.delete(listener);
    },
    rounds,
    listens,
    close: async () => {
      stopFollowing();
      listens.clear();
      listeners.clear();
      noticeListeners.clear();
      rounds.closeAll('the client session closed');
      await scope.close();
    },
  };
}

/** A legacy-era session over one transport (an HTTP session; tests): the surface and its one server instance. */
export function createServer(workbench: Workbench, version: string, options: CreateServerOptions = {}): WorkbenchServer {
  const surface = createSurface(workbench, version, options);
  const server = surface.instance('legacy');
  const stopTools = surface.onToolsChanged(() => {
    if (server.transport) void server.sendToolListChanged().catch(() => {});
  });
  const stopNotices = surface.onNotice((notice) => sendNotice(server, notice));
  const stop = (): void => {
    stopTools();
    stopNotices();
  };
  return {
    server,
    connect: async (transport) => {
      if (transport instanceof StdioServerLineTransport) {
        const pipeline = surface.pipeline(transport);
        transport.intercept = (message) => pipeline.take(message);
        await server.connect(transport);
        return;
      }
      await server.connect(transport);
      const pipeline = surface.pipeline(transport);
      const inner = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (!pipeline.take(message)) inner?.(message, extra);
      };
    },
    close: async () => {
      stop();
      await surface.close();
      await server.close();
    },
  };
}

/** A request to a handshake-era client (relayed sampling, elicitation, roots), on the stream of `relatedRequestId` if given. */
function askLegacy(
  server: Server,
  request: { method: string; params?: Record<string, unknown> },
  signal: AbortSignal,
  relatedRequestId?: RequestId,
): Promise<Record<string, unknown>> {
  return server.request(request as never, { signal, timeout: RELAY_TIMEOUT_MS, resetTimeoutOnProgress: true, relatedRequestId }) as Promise<Record<string, unknown>>;
}

/** The result a modern answer stands for, in the context of the request it answers. */
function finish(answer: ModernAnswer, ctx: ServerContext): Promise<CallToolResult> | CallToolResult {
  return 'complete' in answer ? answer.complete : answer.finish(ctx);
}

/** A meta-tool call answered by the MCP server (either era): the request's progress token, notifications tied to it. */
function metaToolCall(ctx: ServerContext, meta: Record<string, unknown> | undefined): MetaToolCall {
  return {
    progressToken: meta?.progressToken as MetaToolCall['progressToken'],
    notify: (notification) => void ctx.mcpReq.notify(notification).catch(() => {}),
  };
}

/** Progress notifications for the request `ctx` is answering, with that request's own progress token (or none). */
function progressSender(ctx: ServerContext): UseToolCall['notify'] {
  const token = ctx.mcpReq._meta?.progressToken;
  return (notification) => {
    if (notification.method !== 'notifications/progress') return void ctx.mcpReq.notify(notification).catch(() => {});
    if (token === undefined) return;
    void ctx.mcpReq.notify({ ...notification, params: { ...notification.params, progressToken: token } } as never).catch(() => {});
  };
}
