import type { Result } from '@modelcontextprotocol/client';
import { WorkbenchError, errorMessage } from '../errors.js';
import type { Cancellation } from '../shared/cancellation.js';
import type { RelayedMethod, RelayedRequest } from './types.js';

/**
 * Multi-round-trip requests (MRTR) of modern downstream servers: a `tools/call` answered with
 * `resultType: 'input_required'` carries `inputRequests` (key → `{ method, params }`) and an opaque `requestState`;
 * the client fulfils each request and calls again with `inputResponses` (same keys) and the `requestState` echoed.
 * The workbench fulfils them through the same relay as a legacy server's own server → client requests, so the
 * upstream client sees the same elicitation/sampling/roots requests whichever era the server speaks.
 */

/** Rounds of input a call may ask for before the workbench gives up on it. */
export const MAX_INPUT_ROUNDS = 8;

/** Sends one relayed request to the upstream client that made the call. */
export type InputRelay = (request: RelayedRequest, signal: AbortSignal) => Promise<Result>;

const RELAYABLE = new Set<string>(['elicitation/create', 'sampling/createMessage', 'roots/list']);

export function isInputRequired(result: Record<string, unknown>): boolean {
  return result.resultType === 'input_required';
}

/**
 * Fulfils every input request of an `input_required` result, one after another (a user answers one question at a
 * time), and returns the `inputResponses` for the retry. Throws WorkbenchError CALL_FAILED naming `what` when a
 * request cannot be relayed or the client refuses it.
 */
export async function fulfilInputRequests(
  result: Record<string, unknown>,
  relay: InputRelay,
  cancellation: Cancellation | undefined,
  what: string,
): Promise<Record<string, unknown>> {
  const requests = result.inputRequests as Record<string, unknown>;
  const responses: Record<string, unknown> = {};
  const abort = new AbortController();
  const onCancel = (reason: unknown): void => abort.abort(reason);
  cancellation?.onCancel(onCancel);
  try {
    for (const [key, request] of Object.entries(requests)) {
      const { method, params } = (request ?? {}) as { method?: unknown; params?: unknown };
      if (typeof method !== 'string' || !RELAYABLE.has(method)) {
        throw new WorkbenchError('CALL_FAILED', `${what} asked the client for input the workbench cannot relay (input request "${key}": method ${JSON.stringify(method)}). Report this to the server's maintainers.`);
      }
      try {
        responses[key] = await relay({ method: method as RelayedMethod, ...(isObject(params) ? { params } : {}) }, abort.signal);
      } catch (error) {
        if (cancellation?.cancelled) throw error;
        throw new WorkbenchError('CALL_FAILED', `${what} asked the client for input (${method}) and that failed: ${errorMessage(error)}`, { cause: error });
      }
    }
  } finally {
    cancellation?.offCancel(onCancel);
  }
  return responses;
}

/**
 * Fulfils `result`'s input requests and retries (through `retry`, a new request each time) until the server answers
 * with anything but `input_required`, at most MAX_INPUT_ROUNDS times; then fails with CALL_FAILED naming `what`.
 */
export async function untilComplete(
  result: Record<string, unknown>,
  retry: (inputResponses: Record<string, unknown>, requestState: string | undefined) => Promise<Record<string, unknown>>,
  relay: InputRelay,
  cancellation: Cancellation | undefined,
  what: string,
): Promise<Record<string, unknown>> {
  for (let round = 1; isInputRequired(result); round++) {
    if (round > MAX_INPUT_ROUNDS) {
      throw new WorkbenchError('CALL_FAILED', `${what} asked the client for input ${MAX_INPUT_ROUNDS} times without completing, so the workbench stopped it. Report this to the server's maintainers.`);
    }
    const inputResponses = await fulfilInputRequests(result, relay, cancellation, what);
    result = await retry(inputResponses, typeof result.requestState === 'string' ? result.requestState : undefined);
  }
  return result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
