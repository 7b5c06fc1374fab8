import { ProtocolError, ProtocolErrorCode, type Server, type ServerCapabilities, type ServerContext } from '@modelcontextprotocol/server';
import type { ServerNotice } from '../clients/feature-notices.js';
import { complete } from '../core/completions.js';
import type { AggregatedList, FeatureScope } from '../core/feature-scope.js';
import { getPrompt, listPrompts } from '../core/prompts.js';
import { listResourceTemplates, listResources, readResource, subscribeResource, unsubscribeResource } from '../core/resources.js';

/**
 * The MCP face of resources, prompts and completions (README "Resources, prompts and completions"): handlers of an
 * SDK Server instance of either era, each a thin frame around one function of src/core that decides the answer. On
 * stdio and HTTP alike every method but use_tool/open_toolbox tools/call reaches the SDK Server, so registering them
 * here serves every client.
 */

type Era = 'legacy' | 'modern';

/**
 * Which lists a handshake-era instance's client has asked for: list changes are sent only for those (a client that
 * never listed resources has no list to refresh, and notifications it never asked about would only be noise). A
 * modern client says what it wants on its subscriptions/listen stream, which the SDK filters by.
 */
const listedBy = new WeakMap<Server, { era: Era; listed: Set<'resources' | 'prompts'> }>();

/**
 * What the workbench declares. A handshake-era client subscribes with resources/subscribe; a client of MCP 2026-07-28
 * names the URIs on its subscriptions/listen stream, which the workbench follows (src/core/listen-subscriptions.ts).
 * The SDK's listen router honours `resourceSubscriptions` only when `subscribe` is declared. Lists change whenever a
 * toolbox opens, so `listChanged` always holds.
 */
export function featureCapabilities(_era: Era): Pick<ServerCapabilities, 'resources' | 'prompts' | 'completions'> {
  return {
    resources: { subscribe: true, listChanged: true },
    prompts: { listChanged: true },
    completions: {},
  };
}

/**
 * Registers the resource, prompt and completion handlers on `server`, each answering for `scope()`. `noted` sees each
 * request first (a modern request declares its client's capabilities, which the servers it starts are told).
 */
export function registerFeatureHandlers(server: Server, era: Era, scope: () => FeatureScope, noted?: (ctx: ServerContext) => void): void {
  const state = { era, listed: new Set<'resources' | 'prompts'>() };
  listedBy.set(server, state);
  /** A list result; to a modern client with caching hints no looser than the strictest downstream page's. */
  const params = (request: { params?: unknown }): Record<string, unknown> => (request.params ?? {}) as Record<string, unknown>;
  /** One page of a list result; to a modern client with caching hints no looser than the strictest downstream page's. */
  const listed = (key: string, list: AggregatedList, request: { params?: unknown }): never => {
    state.listed.add(key === 'prompts' ? 'prompts' : 'resources');
    const page = pageOf(key, list.items, params(request).cursor);
    return { [key]: page.items, ...(page.next !== undefined && { nextCursor: page.next }), ...(era === 'modern' ? { ttlMs: list.ttlMs, cacheScope: list.cacheScope } : {}) } as never;
  };

  const at = (ctx: ServerContext): FeatureScope => {
    noted?.(ctx);
    return scope();
  };

  server.setRequestHandler('resources/list', async (request, ctx) => listed('resources', await listResources(at(ctx)), request));
  server.setRequestHandler('resources/templates/list', async (request, ctx) => listed('resourceTemplates', await listResourceTemplates(at(ctx)), request));
  server.setRequestHandler('resources/read', async (request, ctx) => (await readResource(at(ctx), params(request))) as never);
  if (era === 'legacy') {
    server.setRequestHandler('resources/subscribe', async (request, ctx) => (await subscribeResource(at(ctx), params(request))) as never);
    server.setRequestHandler('resources/unsubscribe', async (request, ctx) => (await unsubscribeResource(at(ctx), params(request))) as never);
  }
  server.setRequestHandler('prompts/list', async (request, ctx) => listed('prompts', await listPrompts(at(ctx)), request));
  server.setRequestHandler('prompts/get', async (request, ctx) => (await getPrompt(at(ctx), params(request))) as never);
  server.setRequestHandler('completion/complete', async (request, ctx) => (await complete(at(ctx), params(request))) as never);
}

/** Items per page of an aggregated list: far below what a client's transport takes whole (10 MiB for the SDK's stdio). */
const PAGE_ITEMS = 500;
const LIST_METHOD: Record<string, string> = { resources: 'resources/list', resourceTemplates: 'resources/templates/list', prompts: 'prompts/list' };

/**
 * The page of `items` a list request's `cursor` asks for (none: the first), and the cursor of the next when there is
 * one. A cursor names its list and the offset a previous page gave (`resources:500`); any other — made up, or given by
 * another list — is refused as invalid params, as the spec has servers do.
 */
function pageOf<T>(key: string, items: readonly T[], cursor: unknown): { items: T[]; next?: string } {
  let start = 0;
  if (cursor !== undefined) {
    const match = typeof cursor === 'string' && cursor.startsWith(`${key}:`) ? /^[1-9]\d{0,8}$/.exec(cursor.slice(key.length + 1)) : null;
    if (!match || Number(match[0]) % PAGE_ITEMS !== 0) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor ${JSON.stringify(String(cursor)).slice(0, 60)} for ${LIST_METHOD[key] ?? key}: pass the nextCursor of a previous page of this list, or none for the first`);
    }
    start = Number(match[0]);
  }
  const end = start + PAGE_ITEMS;
  return { items: items.slice(start, end), ...(end < items.length && { next: `${key}:${end}` }) };
}

/**
 * Sends a resource or prompt notice to the client of a connected instance (handshake era, or modern stdio listen); a
 * list change only to a handshake-era client that has listed that kind (see listedBy).
 */
export function sendNotice(server: Server, notice: ServerNotice): void {
  if (!server.transport) return;
  const state = listedBy.get(server);
  if (state?.era === 'legacy' && notice.kind !== 'updated' && !state.listed.has(notice.kind)) return;
  const sent =
    notice.kind === 'resources'
      ? server.sendResourceListChanged()
      : notice.kind === 'prompts'
        ? server.sendPromptListChanged()
        : server.sendResourceUpdated(notice.params as { uri: string });
  void sent.catch(() => {});
}
