import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { RelayedRequest } from '../clients/types.js';
import { Cancellation } from '../shared/cancellation.js';

/**
 * Multi round-trip `use_tool` calls for clients of MCP 2026-07-28, which cannot be sent requests: when the server a
 * call reaches asks for sampling, elicitation or roots (a legacy server's request during the call, or a modern server's
 * input-required answer, which the downstream side turns into the same relayed requests), the call's answer to the
 * client becomes an input-required result naming those requests, and the client's retry (with `inputResponses` and
 * the `requestState` it was given) carries the answers back to exactly the requests of that call. The downstream call
 * keeps running in between, so its state lives here, in this process, keyed by an unguessable round id that only the
 * signed `requestState` carries (README "Protocol eras").
 */
export type RoundOutcome =
  | { kind: 'complete'; result: CallToolResult }
  | { kind: 'input'; round: string; inputRequests: Record<string, RelayedRequest> };

interface Ask {
  request: RelayedRequest;
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
}

interface Round {
  id: string;
  /** The principal the round belongs to: a retry from anyone else never finds it. */
  owner: string;
  cancellation: Cancellation;
  /** Asked and not yet sent to the client. */
  fresh: Map<string, Ask>;
  /** Sent to the client, awaiting its answers. */
  sent: Map<string, Ask>;
  settled: { result: CallToolResult } | { error: unknown } | undefined;
  /** Wakes the request that is waiting on this round (a new ask, or the call settled). */
  wake: (() => void) | undefined;
  next: number;
  expiry: NodeJS.Timeout | undefined;
  /** Where the call's notifications (progress) go: the request now waiting on the round. */
  notify: Notify;
}

/** Sends a notification on the request that is waiting on a round. */
export type Notify = (notification: { method: string; params?: Record<string, unknown> }) => void;

/** Rounds no client came back for end (and their downstream call is cancelled) after this long. */
export const ROUND_TTL_MS = 10 * 60_000;
/** The most asks one round keeps open at a time. */
const MAX_OPEN_ASKS = 64;
/** The most rounds one client (one surface) may leave waiting for its input: each holds a live downstream call. */
export const MAX_ROUNDS = 64;

export class InputRounds {
  private readonly rounds = new Map<string, Round>();

  constructor(private readonly ttlMs = ROUND_TTL_MS) {}

  /**
   * Starts a call whose relayed requests become input rounds. `run` gets the request function the call's relays go
   * through and the call's cancellation; the first outcome comes back when the call completes or first needs input.
   */
  start(
    owner: string,
    run: (
      ask: (request: Ask['request'], signal: AbortSignal) => Promise<Record<string, unknown>>,
      cancellation: Cancellation,
      notify: Notify,
    ) => Promise<CallToolResult>,
    signal: Cancellation | undefined,
    notify: Notify,
  ): Promise<RoundOutcome> {
    if (this.waiting() >= MAX_ROUNDS) {
      return Promise.reject(
        Object.assign(
          new Error(`mcp-workbench: ${MAX_ROUNDS} calls of this client are waiting for its input already; answer or cancel them before starting another that asks`),
          { code: -32603 },
        ),
      );
    }
    const round: Round = {
      id: randomUUID(),
      owner,
      cancellation: new Cancellation(),
      fresh: new Map(),
      sent: new Map(),
      settled: undefined,
      wake: undefined,
      next: 0,
      expiry: undefined,
      notify,
    };
    const ask = (request: Ask['request'], askSignal: AbortSignal): Promise<Record<string, unknown>> =>
      new Promise((resolve, reject) => {
        if (round.settled || round.fresh.size + round.sent.size >= MAX_OPEN_ASKS) {
          reject(new Error(`mcp-workbench: too many open ${request.method} requests in one call (at most ${MAX_OPEN_ASKS})`));
          return;
        }
        const key = `${request.method.split('/')[0]}-${++round.next}`;
        const entry: Ask = { request, resolve, reject };
        round.fresh.set(key, entry);
        askSignal.addEventListener('abort', () => {
          round.fresh.delete(key);
          round.sent.delete(key);
          reject(askSignal.reason ?? new Error('cancelled'));
        }, { once: true });
        round.wake?.();
      });
    let promise: Promise<CallToolResult>;
    try {
      promise = run(ask, round.cancellation, (notification) => round.notify(notification));
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (result) => this.settle(round, { result }),
      (error: unknown) => this.settle(round, { error }),
    );
    this.rounds.set(round.id, round);
    return this.wait(round, signal);
  }

  /**
   * Continues the round `id` with the client's answers. Answers for keys the round did not ask are ignored; asks
   * left unanswered are asked again. Undefined when there is no such round for this owner (expired, finished, or
   * started in another process).
   */
  resume(owner: string, id: string, responses: Record<string, unknown>, signal: Cancellation | undefined, notify: Notify): Promise<RoundOutcome> | undefined {
    const round = this.rounds.get(id);
    if (!round || round.owner !== owner) return undefined;
    round.notify = notify;
    for (const [key, ask] of round.sent) {
      const response = responses[key];
      if (response === undefined) continue;
      round.sent.delete(key);
      if (typeof response === 'object' && response !== null && !Array.isArray(response)) ask.resolve(response as Record<string, unknown>);
      else ask.reject(new Error(`the client's answer to ${ask.request.method} was not an object`));
    }
    // Unanswered asks go out again with the next round.
    for (const [key, ask] of round.sent) round.fresh.set(key, ask);
    round.sent.clear();
    return this.wait(round, signal);
  }

  /** Ends every round (shutdown, or the principal's scope closing): their downstream calls are cancelled. */
  closeAll(reason: string): void {
    for (const round of [...this.rounds.values()]) this.end(round, reason);
  }

  get size(): number {
    return this.rounds.size;
  }

  /** Rounds waiting for the client to come back (their expiry is running). */
  private waiting(): number {
    let count = 0;
    for (const round of this.rounds.values()) if (round.expiry !== undefined) count++;
    return count;
  }

  private wait(round: Round, signal: Cancellation | undefined): Promise<RoundOutcome> {
    if (round.expiry) clearTimeout(round.expiry);
    round.expiry = undefined;
    return new Promise<RoundOutcome>((resolve, reject) => {
      const onAbort = (): void => {
        // The client gave up on this request: the call it continues is cancelled with it.
        this.end(round, 'cancelled by the client');
        reject(signal!.reason ?? new Error('cancelled'));
      };
      const check = (): void => {
        if (round.settled) {
          round.wake = undefined;
          signal?.offCancel(onAbort);
          this.rounds.delete(round.id);
          if ('result' in round.settled) resolve({ kind: 'complete', result: round.settled.result });
          else reject(round.settled.error);
          return;
        }
        if (round.fresh.size === 0) return;
        // Asks made in the same turn (a modern server's several input requests) travel in one round.
        round.wake = undefined;
        setImmediate(() => {
          if (round.settled) return check();
          signal?.offCancel(onAbort);
          const inputRequests: Extract<RoundOutcome, { kind: 'input' }>['inputRequests'] = {};
          for (const [key, ask] of round.fresh) {
            inputRequests[key] = ask.request;
            round.sent.set(key, ask);
          }
          round.fresh.clear();
          round.expiry = setTimeout(() => this.end(round, `no answer from the client within ${Math.round(this.ttlMs / 1000)} s`), this.ttlMs);
          round.expiry.unref();
          resolve({ kind: 'input', round: round.id, inputRequests });
        });
      };
      if (signal?.cancelled) return onAbort();
      signal?.onCancel(onAbort);
      round.wake = check;
      check();
    });
  }

  private settle(round: Round, settled: NonNullable<Round['settled']>): void {
    if (round.settled) return;
    round.settled = settled;
    for (const ask of [...round.fresh.values(), ...round.sent.values()]) ask.reject(new Error('the call ended'));
    round.fresh.clear();
    round.sent.clear();
    // With no request waiting (the client has not come back yet), the outcome waits for its retry, within the expiry.
    round.wake?.();
  }

  private end(round: Round, reason: string): void {
    this.rounds.delete(round.id);
    if (round.expiry) clearTimeout(round.expiry);
    for (const ask of [...round.fresh.values(), ...round.sent.values()]) ask.reject(new Error(reason));
    round.fresh.clear();
    round.sent.clear();
    round.cancellation.cancel(reason);
  }
}
