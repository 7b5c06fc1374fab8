import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { InputRounds, type RoundOutcome } from '../../src/server/input-rounds.js';
import { Cancellation } from '../../src/shared/cancellation.js';

/**
 * The input rounds of MCP 2026-07-28 calls (README "Protocol eras"), on their own: a call that never asks holds
 * nothing once it completes, a call that asks becomes a round its retry continues, and a cancelled or closed call is
 * cancelled downstream whether or not it has asked yet.
 */
const done: CallToolResult = { content: [{ type: 'text', text: 'done' }] };
const noNotify = (): void => {};
const sampling = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } } as const;

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('InputRounds', () => {
  test('a call that completes without asking comes back complete, and nothing is held for it', async () => {
    const rounds = new InputRounds();
    const outcome = await rounds.start('me', async () => done, new Cancellation(), noNotify);
    assert.deepEqual(outcome, { kind: 'complete', result: done });
    assert.equal(rounds.size, 0);
  });

  test('asks of one turn travel in one round; the retry answers them and gets the result', async () => {
    const rounds = new InputRounds();
    const first = await rounds.start(
      'me',
      async (ask) => {
        const signal = new AbortController().signal;
        const [a, b] = await Promise.all([ask(sampling as never, signal), ask(sampling as never, signal)]);
        return { content: [{ type: 'text', text: `${String(a.answer)}+${String(b.answer)}` }] };
      },
      new Cancellation(),
      noNotify,
    );
    assert.equal(first.kind, 'input');
    const { round, inputRequests } = first as Extract<RoundOutcome, { kind: 'input' }>;
    assert.deepEqual(Object.keys(inputRequests), ['sampling-1', 'sampling-2']);
    assert.equal(rounds.size, 1);
    assert.equal(rounds.resume('someone else', round, {}, undefined, noNotify), undefined);
    const second = await rounds.resume('me', round, { 'sampling-1': { answer: 'x' }, 'sampling-2': { answer: 'y' } }, new Cancellation(), noNotify);
    assert.deepEqual(second, { kind: 'complete', result: { content: [{ type: 'text', text: 'x+y' }] } });
    assert.equal(rounds.size, 0);
    assert.equal(rounds.resume('me', round, {}, undefined, noNotify), undefined);
  });

  test("a call that ends keeps the asks other calls joined to its round: they reach the client, and its outcome follows", async () => {
    const rounds = new InputRounds();
    const joined = deferred<{ answer: Promise<Record<string, unknown>> }>();
    const first = await rounds.start(
      'me',
      async (ask) => {
        // Another call's request (a handshake-era server's request joins the newest call's round); this call then ends.
        joined.resolve({ answer: ask(sampling as never, new AbortController().signal) });
        return done;
      },
      new Cancellation(),
      noNotify,
    );
    assert.equal(first.kind, 'input', JSON.stringify(first));
    const { round, inputRequests } = first as Extract<RoundOutcome, { kind: 'input' }>;
    assert.deepEqual(Object.keys(inputRequests), ['sampling-1']);
    const second = await rounds.resume('me', round, { 'sampling-1': { answer: 'x' } }, new Cancellation(), noNotify);
    assert.deepEqual(second, { kind: 'complete', result: done });
    assert.deepEqual(await (await joined.promise).answer, { answer: 'x' });
    assert.equal(rounds.size, 0);
  });


  /** The older call's round holds the question handed over to it; answering it completes that call with the answer. */
  async function answerHandedOver(rounds: InputRounds, first: RoundOutcome, answer: string): Promise<void> {
    assert.equal(first.kind, 'input', JSON.stringify(first));
    const { round, inputRequests } = first as Extract<RoundOutcome, { kind: 'input' }>;
    assert.deepEqual(Object.keys(inputRequests), ['sampling-1']);
    const second = await rounds.resume('me', round, { 'sampling-1': { answer } }, new Cancellation(), noNotify);
    assert.deepEqual(second, { kind: 'complete', result: { content: [{ type: 'text', text: answer }] } });
    assert.equal(rounds.size, 0);
  }
  test("a call the client cancels hands the asks other calls joined to its round on to its owner's newest other call", async () => {
    const rounds = new InputRounds();
    const question = deferred<Promise<Record<string, unknown>>>();
    const older = rounds.start('me', async () => ({ content: [{ type: 'text', text: String((await (await question.promise)).answer) }] }), new Cancellation(), noNotify);
    const cancel = new Cancellation();
    const cancelled = deferred<unknown>();
    const newer = rounds.start(
      'me',
      (ask, c) => {
        c.onCancel((reason) => cancelled.resolve(reason));
        // The older call's request joins the newest call's round; the client cancels the newest call at once.
        question.resolve(ask(sampling as never, new AbortController().signal));
        return new Promise<CallToolResult>(() => {});
      },
      cancel,
      noNotify,
    );
    cancel.cancel('gone');
    await assert.rejects(newer, (error) => error === 'gone');
    assert.equal(await cancelled.promise, 'cancelled by the client');
    const first = await older;
    await answerHandedOver(rounds, first, 'x');
  });

  test("a round that expires hands the asks other calls joined to it on to its owner's newest other call", async () => {
    const rounds = new InputRounds(20);
    const question = deferred<Promise<Record<string, unknown>>>();
    const older = rounds.start('me', async () => ({ content: [{ type: 'text', text: String((await (await question.promise)).answer) }] }), undefined, noNotify);
    const newer = await rounds.start(
      'me',
      (ask) => (question.resolve(ask(sampling as never, new AbortController().signal)), new Promise<CallToolResult>(() => {})),
      undefined,
      noNotify,
    );
    assert.equal(newer.kind, 'input');
    // No client comes back for the newer call's round; the expiry does not hold the process open, this does.
    const keepAlive = setTimeout(() => {}, 5_000);
    let first: RoundOutcome;
    try {
      first = await older;
    } finally {
      clearTimeout(keepAlive);
    }
    await answerHandedOver(rounds, first, 'y');
  });

  test("the client's cancel before any ask cancels the call, and the request rejects with its reason", async () => {
    const rounds = new InputRounds();
    const request = new Cancellation();
    const cancelled = deferred<unknown>();
    const outcome = rounds.start(
      'me',
      (_ask, cancellation) => {
        cancellation.onCancel((reason) => cancelled.resolve(reason));
        return new Promise<CallToolResult>(() => {});
      },
      request,
      noNotify,
    );
    request.cancel('gone');
    await assert.rejects(outcome, (error) => error === 'gone');
    assert.equal(await cancelled.promise, 'cancelled by the client');
    assert.equal(rounds.size, 0);
  });

  test('closeAll cancels running calls that have not asked, and rounds held for their client', async () => {
    const rounds = new InputRounds();
    const reasons: unknown[] = [];
    const running = rounds.start('me', (_ask, c) => (c.onCancel((r) => reasons.push(r)), new Promise<CallToolResult>(() => {})), undefined, noNotify);
    const held = await rounds.start(
      'me',
      (ask, c) => (c.onCancel((r) => reasons.push(r)), ask(sampling as never, new AbortController().signal).then(() => done)),
      undefined,
      noNotify,
    );
    assert.equal(held.kind, 'input');
    assert.equal(rounds.size, 2);
    rounds.closeAll('closing');
    assert.deepEqual(reasons, ['closing', 'closing']);
    assert.equal(rounds.size, 0);
    void running;
  });

  test('a round no client comes back for ends after the expiry, cancelling its call', async () => {
    const rounds = new InputRounds(20);
    const cancelled = deferred<unknown>();
    const first = await rounds.start(
      'me',
      (ask, c) => (c.onCancel((r) => cancelled.resolve(r)), ask(sampling as never, new AbortController().signal).then(() => done)),
      undefined,
      noNotify,
    );
    assert.equal(first.kind, 'input');
    // The expiry does not hold the process open: this does, until it has fired.
    const keepAlive = setTimeout(() => {}, 5_000);
    try {
      assert.match(String(await cancelled.promise), /no answer from the client/);
    } finally {
      clearTimeout(keepAlive);
    }
    assert.equal(rounds.size, 0);
  });
});
