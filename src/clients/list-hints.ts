import type { JSONRPCMessage, RequestId, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import type { Logger } from '../log.js';
import { cutClientText, quoteClientText } from '../shared/client-text.js';

/** The array each cacheable list result carries, by which such a result is known. */
const LIST_KEYS = ['tools', 'prompts', 'resources', 'resourceTemplates'] as const;

/** The requests whose results carry caching hints: only the answers to these are looked at. */
const LIST_METHODS: ReadonlySet<string> = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']);

/**
 * Makes a modern server's malformed caching hints safe before the SDK reads its list results (README "Catalog
 * cache", "Why this reading of the caching hints is safe"). The SDK refuses a whole list whose `ttlMs` is not a
 * non-negative safe integer or whose `cacheScope` is not `public`/`private` (or is missing), which left such a
 * server unusable with a misleading "connection closed". Here a malformed `ttlMs` (negative, fractional, too large,
 * not a number, or none) counts as `0` — the list is revalidated — and a missing or unknown `cacheScope` as `private`: the
 * list is never shared across users or capability sets. Each kind of fault is said once per `said` set (the slot
 * keeps one across reconnects). Only results that carry `resultType` (a modern server's) are touched: a legacy
 * server's list (no `resultType`, no hints) still fails the modern era check of listAllTools.
 *
 * Only the answers to the list requests sent on this transport are looked at: their ids are noted as they are sent
 * and forgotten when answered, cancelled, or the transport closes; tool results and notifications pass straight on.
 * Installed on the transport after the Client connected (its handler is the one the fixed message goes on to).
 */
export function guardListHints(transport: Transport, log: Logger, label: string, said: Set<string>): void {
  const asked = new Set<RequestId>();
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    noteOutgoing(message, options, asked);
    return send(message, options);
  };
  const inner = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const id = (message as { id?: RequestId }).id;
    // A response (no method): a request from the server may reuse one of our ids in its own numbering.
    if (id !== undefined && asked.size > 0 && !('method' in message) && asked.delete(id)) sayFaults(fixHints(message), log, label, said);
    inner?.(message, extra);
  };
  const closed = transport.onclose;
  transport.onclose = () => {
    asked.clear();
    closed?.();
  };
}

/** Notes a list request's id; forgets one the SDK gives up on (a cancellation, or its request stream aborted). */
function noteOutgoing(message: JSONRPCMessage, options: TransportSendOptions | undefined, asked: Set<RequestId>): void {
  const m = message as { id?: RequestId; method?: unknown; params?: { requestId?: RequestId } };
  if (m.id !== undefined && typeof m.method === 'string' && LIST_METHODS.has(m.method)) {
    const id = m.id;
    asked.add(id);
    // Over Streamable HTTP a modern connection cancels by ending the request's stream, with no notification.
    options?.requestSignal?.addEventListener('abort', () => asked.delete(id), { once: true });
  } else if (m.method === 'notifications/cancelled' && m.params?.requestId !== undefined) {
    asked.delete(m.params.requestId);
  }
}

function sayFaults(faults: readonly HintFault[], log: Logger, label: string, said: Set<string>): void {
  for (const fault of faults) {
    if (said.has(fault.text)) continue;
    said.add(fault.text);
    const taken = fault.hint === 'cacheScope' ? '"private" (kept to this user and these capabilities)' : '0 (the list is asked for again each time)';
    log.warn(`${label} sent a malformed caching hint with a list: ${fault.text}; it is taken as ${taken}. Report this to the server's maintainers.`, {
      problem: 'malformed-cache-hint',
      hint: fault.hint,
    });
  }
}

interface HintFault {
  hint: 'ttlMs' | 'cacheScope';
  text: string;
}

/** Repairs the hints of one list result in place; the faults found, described. */
function fixHints(message: JSONRPCMessage): HintFault[] {
  const result = (message as { result?: unknown }).result;
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return [];
  const body = result as Record<string, unknown>;
  if (body.resultType !== 'complete' || !LIST_KEYS.some((key) => Array.isArray(body[key]))) return [];
  const faults: HintFault[] = [];
  if (!validTtl(body.ttlMs)) {
    const text = body.ttlMs === undefined ? 'no ttlMs' : `ttlMs ${describe(body.ttlMs)}, not a whole number of milliseconds from 0 to ${Number.MAX_SAFE_INTEGER}`;
    faults.push({ hint: 'ttlMs', text });
    body.ttlMs = 0;
  }
  if (body.cacheScope !== 'public' && body.cacheScope !== 'private') {
    const text = body.cacheScope === undefined ? 'no cacheScope' : `cacheScope ${describe(body.cacheScope)}, neither "public" nor "private"`;
    faults.push({ hint: 'cacheScope', text });
    body.cacheScope = 'private';
  }
  return faults;
}

function validTtl(ttlMs: unknown): boolean {
  return typeof ttlMs === 'number' && Number.isSafeInteger(ttlMs) && ttlMs >= 0;
}

function describe(value: unknown): string {
  // A string is quoted (so "60000" is told from 60000); anything else is shown as JSON.
  return typeof value === 'string' ? quoteClientText(value, 40) : cutClientText(String(JSON.stringify(value)), 40);
}
