import type { Client, ServerCapabilities } from '@modelcontextprotocol/client';
import { ANY_OBJECT } from './list-tools.js';
import { honouredTtl } from '../shared/list-ttl.js';

/**
 * What a downstream server offers besides tools — resources, resource templates, prompts, completions — read through
 * its SDK Client without the SDK's spec parsing, so every field comes back exactly as the server sent it (a read is
 * passed on byte for byte). The workbench's own faces decide which server a request goes to (src/core/resources.ts,
 * prompts.ts, completions.ts).
 */

/** The list methods and the key of their items. */
export const LIST_KEYS = {
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
  'prompts/list': 'prompts',
} as const;

export type ListMethod = keyof typeof LIST_KEYS;

/** Every item of every page, and the caching hint of the strictest page (a modern server's; none from a legacy one). */
export interface FeatureList {
  items: Record<string, unknown>[];
  /** The shortest ttlMs of any page (modern servers). */
  ttlMs?: number;
  /** `private` when any page said so, `public` when every page did. */
  cacheScope?: 'public' | 'private';
}

/** A server answering with the same cursor again is stopped there (it would go round forever). */
const MAX_PAGES = 1000;

/** Which capability a method needs of the server. */
export function offers(capabilities: ServerCapabilities | undefined, method: ListMethod | 'completion/complete' | 'resources/subscribe'): boolean {
  if (!capabilities) return false;
  if (method === 'prompts/list') return capabilities.prompts !== undefined;
  if (method === 'completion/complete') return capabilities.completions !== undefined;
  if (method === 'resources/subscribe') return capabilities.resources?.subscribe === true;
  return capabilities.resources !== undefined;
}

/**
 * Every page of a list method (none when the server lacks the capability). Items that are not objects are dropped;
 * every other field is kept as sent. Throws what the request throws (a JSON-RPC error, a timeout, a lost connection).
 */
export async function listEveryPage(client: Client, method: ListMethod, timeout: number): Promise<FeatureList> {
  if (!offers(client.getServerCapabilities(), method)) return { items: [] };
  const key = LIST_KEYS[method];
  const list: FeatureList = { items: [] };
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.request({ method, params: cursor ? { cursor } : {} }, ANY_OBJECT, { timeout });
    const items = result[key];
    if (Array.isArray(items)) for (const item of items) if (typeof item === 'object' && item !== null && !Array.isArray(item)) list.items.push(item as Record<string, unknown>);
    noteHint(list, result, page);
    cursor = typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined;
    if (!cursor || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return list;
}

function noteHint(list: FeatureList, page: Record<string, unknown>, index: number): void {
  const ttlMs = honouredTtl(page.ttlMs);
  if (ttlMs !== undefined) list.ttlMs = Math.min(list.ttlMs ?? Infinity, ttlMs);
  if (page.cacheScope === 'private') list.cacheScope = 'private';
  else if (page.cacheScope === 'public' && index === 0) list.cacheScope = 'public';
  else if (page.cacheScope !== 'public' && list.cacheScope === 'public') delete list.cacheScope;
}

/**
 * One request (resources/read, resources/subscribe, prompts/get, completion/complete, …) answered as the server sent
 * it, except for a modern server's `resultType: "complete"`, which belongs to that hop.
 */
export async function featureRequest(
  client: Client,
  method: string,
  params: Record<string, unknown>,
  options: { timeout: number; signal?: AbortSignal },
): Promise<Record<string, unknown>> {
  const result = await client.request({ method, params } as never, ANY_OBJECT, { timeout: options.timeout, ...(options.signal ? { signal: options.signal } : {}) });
  if (result.resultType === 'complete') {
    const { resultType: _complete, ...rest } = result;
    return rest;
  }
  return result;
}
