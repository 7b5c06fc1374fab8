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
  | { kind: 'input'; round: string; inputRequests: Record<string, RelayedRequest> }
  /** Refused: {@link MAX_ROUNDS} calls of this client wait for its input already (see ROUNDS_FULL_MESSAGE). */
  | { kind: 'full' }
  /** Refused: another request of the client continues this round already (see ROUND_BUSY_MESSAGE). */
  | { kind: 'busy' };

interface Ask {
  request: RelayedRequest;
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
  /** The round that holds it now (another call's, once the round it joined was cancelled or expired) and its key there. */
  home: Round;
  key: string;
}

/** The request waiting on a round for its outcome, and its cancellation link. */
interface Waiter {
  resolve(outcome: RoundOutcome): void;
  reject(error: unknown): void;
  signal: Cancellation | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * One call whose relayed requests become input rounds. Most calls never ask: what only a call that asks needs (its
 * id, its ask maps) is made at its first ask or its first round, so a call that completes costs one object.
 */
class Round {
  /** Minted when the round first goes to the client (the only time anyone can name it). */
  id: string | undefined = undefined;
  readonly cancellation = new Cancellation();
  /** Asked and not yet sent to the client. */
  fresh: Map<string, Ask> | undefined = undefined;
  /** Sent to the client, awaiting its answers. */
  sent: Map<string, Ask> | undefined = undefined;
  settled: { result: CallToolResult } | { error: unknown } | undefined = undefined;
  /** The request waiting on this round, until a new ask or the call's end answers it. */
  waiter: Waiter | undefined = undefined;
  /** A round is about to go to the request that waited (see check): that request still holds the round. */
  sending = false;
  next = 0;
  expiry: NodeJS.Timeout | undefined = undefined;

  constructor(
    /** The principal the round belongs to: a retry from anyone else never finds it. */
    readonly owner: string,
    /** Where the call's notifications (progress) go: the request now waiting on the round. */
    public notify: Notify,
  ) {}

  /** Holds `ask` for the next round, under a key of this round. */
  hold(ask: Ask): void {
    ask.home = this;
    ask.key = `${ask.request.method.split('/')[0]}-${++this.next}`;
    (this.fresh ??= new Map()).set(ask.key, ask);
  }

  /** The open asks, taken from this round. */
  takeAsks(): Ask[] {
    const asks = [...(this.fresh?.values() ?? []), ...(this.sent?.values() ?? [])];
    this.fresh?.clear();
    this.sent?.clear();
    return asks;
  }

  /** Rejects every open ask with `error` and forgets them. */
  dropAsks(error: Error): void {
    if (this.fresh) for (const ask of this.fresh.values()) ask.reject(error);
    if (this.sent) for (const ask of this.sent.values()) ask.reject(error);
    this.fresh?.clear();
    this.sent?.clear();
  }
}

/** Sends a notification on the request that is waiting on a round. */
export type Notify = (notification: { method: string; params?: Record<string, unknown> }) => void;

/** Rounds no client came back for end (and their downstream call is cancelled) after this long. */
export const ROUND_TTL_MS = 10 * 60_000;
/**
 * The most calls of one client (one surface) that may wait for its input at once: the most rounds it may leave
 * waiting (each holds a live downstream call), and the most requests its calls' rounds keep open (a handshake-era
 * server's request joins the round of the newest call, so one round may hold the requests of many calls).
 */
export const MAX_ROUNDS = 64;

/** The refusal of the call (or request) over {@link MAX_ROUNDS}: what the limit is, and what to do. */
export const ROUNDS_FULL_MESSAGE =
  `mcp-workbench: ${MAX_ROUNDS} calls of this client are waiting for its input already (at most ${MAX_ROUNDS} at once); ` +
  'answer or cancel them, then make this call again';

/** The refusal of a retry while another request continues the same round (a double submit). */
export const ROUND_BUSY_MESSAGE =
  "mcp-workbench: another request is continuing this call's input round already; its answers were not used. " +
  'Wait for that request\'s answer, which carries the call\'s result or its next round';

export class InputRounds {
  /** Every call not yet finished: running, or held for its client. */
  private readonly live = new Set<Round>();
  /** The rounds that went to a client, by their id. */
  private readonly byId = new Map<string, Round>();

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
    if (this.byId.size >= MAX_ROUNDS && this.waiting() >= MAX_ROUNDS) return Promise.resolve({ kind: 'full' });
    const round = new Round(owner, notify);
    this.live.add(round);
    let promise: Promise<CallToolResult>;
    try {
      promise = run(
        (request, askSignal) => this.ask(round, request, askSignal),
        round.cancellation,
        (notification) => round.notify(notification),
      );
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (result) => this.settle(round, { result }),
      (error: unknown) => this.settle(round, { error }),
    );
    return this.wait(round, signal);
  }

  /**
   * Continues the round `id` with the client's answers. Answers for keys the round did not ask are ignored; asks
   * left unanswered are asked again. Undefined when there is no such round for this owner (expired, finished, or
   * started in another process).
   */
  resume(owner: string, id: string, responses: Record<string, unknown>, signal: Cancellation | undefined, notify: Notify): Promise<RoundOutcome> | undefined {
    const round = this.byId.get(id);
    if (!round || round.owner !== owner) return undefined;
    // A request waits on the round already (the same retry sent twice): it keeps the round; this one is refused, or
    // the earlier request would never be answered and its answers could go to the wrong request.
    if (round.waiter !== undefined || round.sending) return Promise.resolve({ kind: 'busy' });
    round.notify = notify;
    const sent = round.sent;
    if (sent) {
      for (const [key, ask] of sent) {
        const response = responses[key];
        if (response === undefined) continue;
        sent.delete(key);
        if (typeof response === 'object' && response !== null && !Array.isArray(response)) ask.resolve(response as Record<string, unknown>);
        else ask.reject(new Error(`the client's answer to ${ask.request.method} was not an object`));
      }
      // Unanswered asks go out again with the next round.
      if (sent.size > 0) {
        const fresh = (round.fresh ??= new Map());
        for (const [key, ask] of sent) fresh.set(key, ask);
        sent.clear();
      }
    }
    return this.wait(round, signal);
  }

  /**
   * The request that carried round `id` to the client was cancelled before its answer was written (the client went
   * away, or cancelled it while its input-required answer was being signed): the client never learns of the round and
   * will not come back for it, so the call ends now (cancelled downstream, the asks other calls joined to it handed
   * on) instead of at the expiry. Nothing happens once a retry has come back for it, or when the round has ended.
   */
  abandon(owner: string, id: string, reason: string): void {
    const round = this.byId.get(id);
    if (!round || round.owner !== owner || round.waiter !== undefined) return;
    this.end(round, reason);
  }

  /** Ends every round (shutdown, or the principal's scope closing): their downstream calls are cancelled. */
  closeAll(reason: string): void {
    for (const round of [...this.live]) this.end(round, reason, false);
  }

  /** Calls not finished: running, or held for their client. */
  get size(): number {
    return this.live.size;
  }

  /** Requests of this client's calls held for, or sent to, it and not yet answered. */
  private openAsks(): number {
    let count = 0;
    for (const round of this.live) count += (round.fresh?.size ?? 0) + (round.sent?.size ?? 0);
    return count;
  }

  /** Rounds waiting for the client to come back (their expiry is running). */
  private waiting(): number {
    let count = 0;
    for (const round of this.byId.values()) if (round.expiry !== undefined) count++;
    return count;
  }

  /**
   * A relayed request of the round's call: held for the next round. Refused, that request alone, when the call has
   * ended or when {@link MAX_ROUNDS} requests of this client's calls are open already.
   */
  private ask(round: Round, request: Ask['request'], askSignal: AbortSignal): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      if (round.settled) {
        reject(new Error(`mcp-workbench: the call that ${request.method} was sent during has ended`));
        return;
      }
      if (this.openAsks() >= MAX_ROUNDS) {
        reject(new Error(ROUNDS_FULL_MESSAGE));
        return;
      }
      const onAbort = (): void => {
        const home = ask.home;
        home.fresh?.delete(ask.key);
        home.sent?.delete(ask.key);
        reject(askSignal.reason ?? new Error('cancelled'));
        // The last open ask of an ended call: its outcome can go now.
        this.check(home);
      };
      // The listener goes when the ask settles: the signal is a composite one (AbortSignal.any) that Node keeps alive
      // while it has listeners, and with it this round, its call and its session's connections, for ever.
      const settled = <T>(settle: (value: T) => void) => (value: T): void => {
        askSignal.removeEventListener('abort', onAbort);
        settle(value);
      };
      const ask: Ask = { request, resolve: settled(resolve), reject: settled(reject), home: round, key: '' };
      round.hold(ask);
      askSignal.addEventListener('abort', onAbort, { once: true });
      this.check(round);
    });
  }

  private wait(round: Round, signal: Cancellation | undefined): Promise<RoundOutcome> {
    if (round.expiry) clearTimeout(round.expiry);
    round.expiry = undefined;
    return new Promise<RoundOutcome>((resolve, reject) => {
      if (signal?.cancelled) {
        this.end(round, 'cancelled by the client');
        reject(signal.reason ?? new Error('cancelled'));
        return;
      }
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = (): void => {
          // The client gave up on this request: the call it continues is cancelled with it.
          if (round.waiter === waiter) round.waiter = undefined;
          this.end(round, 'cancelled by the client');
          reject(signal.reason ?? new Error('cancelled'));
        };
        signal.onCancel(waiter.onAbort);
      }
      round.waiter = waiter;
      this.check(round);
    });
  }

  /** Answers the waiting request, if any, when the call has ended or has asked something. */
  private check(round: Round): void {
    const waiter = round.waiter;
    if (waiter === undefined) return;
    const fresh = round.fresh?.size ?? 0;
    // A call that ended delivers once the requests its round holds are answered: they may be other calls' (see ask).
    if (round.settled && fresh === 0 && (round.sent?.size ?? 0) === 0) return this.deliver(round, waiter);
    if (fresh === 0) return;
    // Asks made in the same turn (a modern server's several input requests) travel in one round.
    round.waiter = undefined;
    round.sending = true;
    setImmediate(() => this.sendRound(round, waiter));
  }

  /** The call's end as the waiting request's outcome; the round is forgotten. */
  private deliver(round: Round, waiter: Waiter): void {
    round.waiter = undefined;
    if (waiter.onAbort) waiter.signal?.offCancel(waiter.onAbort);
    this.forget(round);
    const settled = round.settled!;
    if ('result' in settled) waiter.resolve({ kind: 'complete', result: settled.result });
    else waiter.reject(settled.error);
  }

  /** The asks made so far go to the client as one round, which waits for its retry until the expiry. */
  private sendRound(round: Round, waiter: Waiter): void {
    round.sending = false;
    // Ended meanwhile (the client cancelled, the session closed): the waiting request has had its answer.
    if (!this.live.has(round)) return;
    if (!round.fresh?.size) {
      // Its asks were withdrawn meanwhile: the request waits on for the next ask or the call's end.
      round.waiter = waiter;
      return this.check(round);
    }
    if (waiter.onAbort) waiter.signal?.offCancel(waiter.onAbort);
    const inputRequests: Extract<RoundOutcome, { kind: 'input' }>['inputRequests'] = {};
    const sent = (round.sent ??= new Map());
    for (const [key, ask] of round.fresh!) {
      inputRequests[key] = ask.request;
      sent.set(key, ask);
    }
    round.fresh!.clear();
    if (round.id === undefined) {
      round.id = randomUUID();
      this.byId.set(round.id, round);
    }
    round.expiry = setTimeout(() => this.end(round, `no answer from the client within ${Math.round(this.ttlMs / 1000)} s`), this.ttlMs);
    round.expiry.unref();
    waiter.resolve({ kind: 'input', round: round.id, inputRequests });
  }

  private settle(round: Round, settled: NonNullable<Round['settled']>): void {
    if (round.settled) return;
    round.settled = settled;
    // Asks still open stay: a handshake-era server's requests join the newest call's round, so they may be other
    // calls', which go on. With no request waiting (the client has not come back yet), the outcome waits for its retry, within the expiry.
    this.check(round);
  }

  private forget(round: Round): void {
    this.live.delete(round);
    if (round.id !== undefined) this.byId.delete(round.id);
  }

  /**
   * Ends the round's call (cancelled by the client, or no answer within the expiry). The asks it holds may be other
   * calls' (a handshake-era server's request joins the newest call's round): unless `handOver` is false (every round
   * ends), they go on to the round of the owner's newest other live call, and are rejected only when it has none. An
   * ask of the ended call itself goes with them until it is answered or withdrawn (its server's last call ended).
   */
  private end(round: Round, reason: string, handOver = true): void {
    this.forget(round);
    if (round.expiry) clearTimeout(round.expiry);
    const heir = handOver ? this.newest(round.owner) : undefined;
    if (heir === undefined) round.dropAsks(new Error(reason));
    else {
      const asks = round.takeAsks();
      for (const ask of asks) heir.hold(ask);
      if (asks.length > 0) this.check(heir);
    }
    round.cancellation.cancel(reason);
  }

  /** The owner's newest live round, if any. */
  private newest(owner: string): Round | undefined {
    let newest: Round | undefined;
    for (const round of this.live) if (round.owner === owner) newest = round;
    return newest;
  }
}
