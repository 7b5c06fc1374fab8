import { randomBytes } from 'node:crypto';
import { createRequestStateCodec, type Server, type Transport } from '@modelcontextprotocol/server';
import type { ServerNotice } from '../clients/feature-notices.js';
import { ListenSubscriptions } from '../core/listen-subscriptions.js';
import type { Workbench } from '../core/workbench.js';
import { ClientLink } from './client-link.js';
import { sendNotice } from './feature-handlers.js';
import { InputRounds } from './input-rounds.js';
import { callManagementTool, type StateManagement } from './management-tools.js';
import { createMetaToolHandlers } from './meta-tool-handlers.js';
import { createModernUseTool, type RequestStatePayload } from './modern-use-tool.js';
import { AcceptedEnvelopes } from './modern-wire.js';
import { StdioServerLineTransport } from './stdio-server-transport.js';
import { createInstance, type Era, type InstanceParts } from './surface-instance.js';
import { SurfaceTools } from './surface-tools.js';
import {
  createToolCallPipeline,
  type ModernAnswer,
  type ModernHandlers,
  type ModernPipelineOptions,
  type ReplySink,
  type ToolCallPipeline,
} from './tool-call-pipeline.js';

export type { Era } from './surface-instance.js';

/**
 * One MCP client session over a shared Workbench. Only protocol faults are JSON-RPC errors (-32602 for an unknown
 * top-level tool or a malformed tools/call); a meta-tool's malformed parameters and everything about toolboxes and
 * downstream tools are `isError` tool results (README "Errors").
 */
export interface CreateServerOptions {
  /** Offer list_all_tools and enable_tools, persisting changes to this state file. */
  management?: StateManagement;
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

/**
 * The surface of one client over `workbench`: its downstream scope (opened here, closed by `close`), its tool list
 * following the catalog, its input rounds and listen subscriptions, and the server instances made from them.
 */
export function createSurface(workbench: Workbench, version: string, options: CreateServerOptions = {}): UpstreamSurface {
  const { management } = options;
  const owner = options.owner ?? 'local';
  const tools = new SurfaceTools(workbench, management !== undefined);
  const rounds = new InputRounds();
  // Bound to the owner: a requestState handed to one user is refused when another echoes it.
  const codec = createRequestStateCodec<RequestStatePayload>({ key: options.stateKey ?? processKey, bind: () => owner });
  const link = new ClientLink();
  // Each user (the principal the HTTP gate admitted: a token) has folders of its own for `${user:dir}`.
  const scope = workbench.openSession(link.session, { isolated: options.isolated === true, principal: owner });
  const listens = new ListenSubscriptions(() => workbench.featureScope(scope), (capabilities) => void (link.declared = capabilities));
  // A server connected or was lost: URIs the client listens to and that are not subscribed now are tried again.
  link.onNotice((notice) => {
    if (notice.kind === 'resources') void listens.retry();
  });
  const context = { workbench, scope, link, sessionLabel: options.sessionLabel ?? (() => 'stdio'), principal: options.principal ?? 'stdio' };
  const handlers = createMetaToolHandlers(context);
  const parts: InstanceParts = {
    serverInfo: { name: 'mcp-workbench', title: 'MCP Workbench', version },
    workbench,
    scope,
    codec,
    link,
    tools,
    envelopes: new AcceptedEnvelopes(),
    handedOver: new Map(),
    handlers,
    modernUseTool: createModernUseTool({ rounds, owner, codec, checkedUseTool: handlers.checkedUseTool }),
    ...(management ? { manage: (name: string, args: Record<string, unknown>) => callManagementTool(workbench, management, scope, name, args) } : {}),
  };
  const modern: ModernHandlers = {
    envelopes: parts.envelopes,
    serverInfo: parts.serverInfo,
    useTool: parts.modernUseTool,
    declared: (capabilities) => void (link.declared = capabilities),
    handOver: (id, answer) => void parts.handedOver.set(id, answer),
  };
  return {
    instance: (era, handed) => createInstance(parts, era, handed),
    pipeline: (sink, options) => createToolCallPipeline(handlers, sink, options && { ...options, handlers: modern }),
    onToolsChanged: (listener) => tools.onChanged(listener),
    onNotice: (listener) => link.onNotice(listener),
    rounds,
    listens,
    close: async () => {
      tools.close();
      listens.clear();
      link.clear();
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
  let pipeline: ToolCallPipeline | undefined;
  return {
    server,
    connect: async (transport) => {
      if (transport instanceof StdioServerLineTransport) {
        const taking = (pipeline = surface.pipeline(transport));
        transport.intercept = (message) => taking.take(message);
        await server.connect(transport);
        return;
      }
      await server.connect(transport);
      const taking = (pipeline = surface.pipeline(transport));
      const inner = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (!taking.take(message)) inner?.(message, extra);
      };
    },
    close: async () => {
      stop();
      // Calls in flight end with the session (answered, and cancelled downstream) before its servers are let go.
      pipeline?.close();
      await surface.close();
      await server.close();
    },
  };
}
