import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
  Server,
  type CallToolRequest,
  type CallToolResult,
  type ClientCapabilities,
  type RequestId,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { SessionScope } from '../core/scope.js';
import type { Workbench } from '../core/workbench.js';
import { Cancellation } from '../shared/cancellation.js';
import { quoteClientText } from '../shared/client-text.js';
import { RELAY_TIMEOUT_MS, type ClientLink } from './client-link.js';
import { featureCapabilities, registerFeatureHandlers } from './feature-handlers.js';
import { OPEN_TOOLBOX, USE_TOOL } from './meta-tools.js';
import type { AcceptedEnvelopes } from './modern-wire.js';
import { finishModernAnswer, type ModernUseToolDeps, type RequestStatePayload } from './modern-use-tool.js';
import type { SurfaceTools } from './surface-tools.js';
import type { MetaToolCall, ModernAnswer, ModernHandlers, ModernUseToolCall, ToolCallHandlers, UseToolCall } from './tool-call-pipeline.js';
import { invalidParams } from './tool-params.js';

export type Era = 'legacy' | 'modern';

/** How long a client of MCP 2026-07-28 may keep the tool list without asking again (it is the same for everyone). */
const TOOLS_LIST_TTL_MS = 60_000;

/** What the server instances of one surface are made from: its pieces, shared by every instance of every era. */
export interface InstanceParts {
  serverInfo: { name: string; title: string; version: string };
  workbench: Pick<Workbench, 'instructions' | 'featureScope'>;
  scope: SessionScope;
  /** Signs and verifies `requestState` (bound to the surface's owner): the instance verifies what a client echoes. */
  codec: ModernUseToolDeps['codec'];
  /** The way back to the client; a legacy instance becomes its `legacy`, a modern request sets its `declared`. */
  link: ClientLink;
  tools: SurfaceTools;
  /** Envelopes the SDK accepted (modern era): requests carrying one of them may take the pipeline. */
  envelopes: AcceptedEnvelopes;
  /** Answers the modern pipeline worked out and left to the MCP server to frame, by request id. */
  handedOver: Map<RequestId, Promise<ModernAnswer>>;
  handlers: ToolCallHandlers;
  modernUseTool: ModernHandlers['useTool'];
  /** A management tool's answer, or undefined for any other name; absent when the surface offers none. */
  manage?: (name: string, args: Record<string, unknown>) => Promise<CallToolResult> | CallToolResult | undefined;
}

/**
 * A server instance of `era` over the surface's parts: tools/list, the resource, prompt and completion handlers, and
 * tools/call for what the tool-call pipeline does not take (management tools, unknown tool names, task-augmented
 * calls; and every call of a client of MCP 2026-07-28). A legacy instance becomes the link's way to its client.
 * `handed`: the answer the pipeline worked out for the one request this (modern, per-request) instance serves.
 */
export function createInstance(parts: InstanceParts, era: Era, handed?: Promise<ModernAnswer>): Server {
  const server = new Server(parts.serverInfo, {
    capabilities: { tools: { listChanged: true }, logging: {}, ...featureCapabilities(era) },
    instructions: parts.workbench.instructions(),
    cacheHints: { 'tools/list': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' } },
    requestState: { verify: parts.codec.verify },
  });
  if (era === 'legacy') {
    parts.link.legacy = server;
    server.setNotificationHandler('notifications/roots/list_changed', () => parts.scope.manager.notifyRootsChanged());
  }
  server.setRequestHandler('tools/list', () => ({ tools: parts.tools.list() }));
  registerFeatureHandlers(server, era, () => parts.workbench.featureScope(parts.scope), era === 'modern' ? (ctx) => noteDeclared(parts, ctx) : undefined);
  const bound: Bound = { answer: handed };
  server.setRequestHandler('tools/call', (request, ctx) => answerToolCall(parts, era, bound, request, ctx));
  return server;
}

/** The answer handed to a per-request instance, until its request takes it. */
interface Bound {
  answer: Promise<ModernAnswer> | undefined;
}

async function answerToolCall(parts: InstanceParts, era: Era, bound: Bound, request: CallToolRequest, ctx: ServerContext): Promise<CallToolResult> {
  const name = request.params.name;
  const args = (request.params.arguments ?? {}) as Record<string, unknown>;
  const meta = request.params._meta as Record<string, unknown> | undefined;
  if (era === 'modern') {
    const answer = takeHandedAnswer(parts, bound, ctx);
    if (answer !== undefined) return finishModernAnswer(await answer, ctx);
  }
  if (name === OPEN_TOOLBOX) return parts.handlers.openToolbox(args, metaToolCall(ctx, meta));
  if (name === USE_TOOL) {
    if (era === 'modern') return finishModernAnswer(await parts.modernUseTool(args, modernUseToolCall(ctx, meta)), ctx);
    return parts.handlers.useTool(args, legacyUseToolCall(ctx, meta));
  }
  const managed = parts.manage?.(name, args);
  if (managed) return managed;
  // An unknown top-level tool is a protocol fault (the MCP spec answers it with -32602), not a refusal.
  throw invalidParams(`Unknown tool ${quoteClientText(String(name))}. This server's tools are: ${parts.tools.names.join(', ')}.`);
}

/**
 * A modern request's envelope noted (the capabilities it declares, the envelope accepted for the pipeline), and the
 * answer the pipeline worked out for it and left to this handler to frame, taken, if there is one.
 */
function takeHandedAnswer(parts: InstanceParts, bound: Bound, ctx: ServerContext): Promise<ModernAnswer> | undefined {
  parts.envelopes.accept(noteDeclared(parts, ctx));
  const answer = bound.answer;
  if (answer !== undefined) {
    bound.answer = undefined;
    return answer;
  }
  const handed = parts.handedOver.get(ctx.mcpReq.id);
  if (handed !== undefined) parts.handedOver.delete(ctx.mcpReq.id);
  return handed;
}

/**
 * The capabilities a modern request declares, noted as the client's (what the servers it starts are told, and the
 * catalog cache is keyed by): by every request that may start a server, not only tool calls. Returns the envelope.
 */
function noteDeclared(parts: InstanceParts, ctx: ServerContext): Record<string, unknown> | undefined {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const caps = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  if (caps) parts.link.declared = caps as ClientCapabilities;
  return envelope;
}

/** A meta-tool call answered by the MCP server (either era): the request's progress token, notifications tied to it. */
function metaToolCall(ctx: ServerContext, meta: Record<string, unknown> | undefined): MetaToolCall {
  return {
    progressToken: meta?.progressToken as MetaToolCall['progressToken'],
    notify: (notification) => void ctx.mcpReq.notify(notification).catch(() => {}),
  };
}

/** A handshake-era use_tool call: relayed requests go back on the request's own stream. */
function legacyUseToolCall(ctx: ServerContext, meta: Record<string, unknown> | undefined): UseToolCall {
  return {
    ...metaToolCall(ctx, meta),
    cancellation: Cancellation.from(ctx.mcpReq.signal) ?? new Cancellation(),
    meta,
    request: (relayed, signal) =>
      ctx.mcpReq.send(relayed as never, { signal, timeout: RELAY_TIMEOUT_MS, resetTimeoutOnProgress: true }) as Promise<Record<string, unknown>>,
  };
}

/** A use_tool call of a client of MCP 2026-07-28: a retry brings its verified requestState and input responses. */
function modernUseToolCall(ctx: ServerContext, meta: Record<string, unknown> | undefined): ModernUseToolCall {
  const logLevel = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined;
  return {
    cancellation: Cancellation.from(ctx.mcpReq.signal),
    meta,
    ...(logLevel !== undefined && { logLevel }),
    notify: progressSender(ctx),
    state: ctx.mcpReq.requestState<RequestStatePayload>(),
    responses: (ctx.mcpReq.inputResponses ?? {}) as Record<string, unknown>,
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
