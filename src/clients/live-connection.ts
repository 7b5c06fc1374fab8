import type { Client, McpSubscription, Tool, Transport } from '@modelcontextprotocol/client';
import type { CallChannel } from './call-channel.js';
import type { ToolList } from './list-tools.js';

/** One live connection of a ServerSlot: the SDK client, the call channel beside it, and what the server listed. */
export interface Live {
  client: Client;
  transport: Transport;
  /** tools/call goes here, beside the Client (see CallChannel). */
  calls: CallChannel;
  tools: Tool[];
  /** Names the server listed more than once (each kept once in `tools`). */
  duplicates: string[];
  /** Why the tools shown are not all the server listed (see ToolList). */
  notes: string[];
  cacheScope?: 'public' | 'private';
  /** A modern server's ttlMs for its list, and when the list was read: past that, open_toolbox lists again. */
  ttlMs?: number;
  listedAt: number;
  /** The era the server speaks (a modern server's calls carry the `_meta` envelope and may ask for input). */
  era: 'legacy' | 'modern';
  protocolVersion?: string;
  /** A modern server's `subscriptions/listen` stream for tools/list_changed. */
  subscription?: McpSubscription;
  startedAt: number;
  /** The capabilities this connection declared to the server (see capabilitiesKey): its tool list may depend on them. */
  capabilitiesKey: string;
  dead: boolean;
}

/**
 * Takes a fresh tools/list into the connection: the tools, the caching hints of a modern server (and when the list was
 * read, for its ttlMs), and the parameter headers its calls carry over Streamable HTTP (`http`: a stdio server's
 * calls never carry headers; an SSE server is legacy and declares none).
 */
export function applyList(live: Live, list: ToolList, http: boolean): void {
  live.tools = list.tools;
  live.duplicates = list.duplicates;
  live.notes = list.notes;
  if (list.cacheScope) live.cacheScope = list.cacheScope;
  else delete live.cacheScope;
  if (list.ttlMs !== undefined) live.ttlMs = list.ttlMs;
  else delete live.ttlMs;
  live.listedAt = Date.now();
  if (http) live.calls.declareHeaders(list.paramHeaders);
}
