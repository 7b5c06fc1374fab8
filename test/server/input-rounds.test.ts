import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { createRequestStateCodec, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { InputRounds, type RoundOutcome } from '../../src/server/input-rounds.js';
import { createModernUseTool, finishModernAnswer, type RequestStatePayload } from '../../src/server/modern-use-tool.js';
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

  test('abandon ends a round sent to its client at once, and only a round no retry has come back for, of that owner', async () => {
    const rounds = new InputRounds();
    const reasons: unknown[] = [];
    const first = await rounds.start(
      'me',
      (ask, c) => (c.onCancel((r) => reasons.push(r)), ask(sampling as never, new AbortController().signal).then(() => done)),
      undefined,
      noNotify,
    );
    assert.equal(first.kind, 'input');
    const { round } = first as Extract<RoundOutcome, { kind: 'input' }>;
    rounds.abandon('someone else', round, 'gone');
    assert.equal(rounds.size, 1);
    // A retry that came back and waits: the round is its now, and a late abandon of the first answer leaves it be.
    const retry = new Cancellation();
    const second = rounds.resume('me', round, {}, retry, noNotify);
    assert.ok(second);
    const resent = (await second) as Extract<RoundOutcome, { kind: 'input' }>;
    assert.equal(resent.kind, 'input');
    assert.deepEqual(reasons, []);
    rounds.abandon('me', round, 'gone');
    assert.deepEqual(reasons, ['gone']);
    assert.equal(rounds.size, 0);
    assert.equal(rounds.resume('me', round, {}, undefined, noNotify), undefined);
    rounds.abandon('me', round, 'again');
    assert.deepEqual(reasons, ['gone']);
  });

  test('a second retry while the first waits on the round is refused, and the first gets the result', async () => {
    const rounds = new InputRounds();
    const finish = deferred<void>();
    const first = await rounds.start(
      'me',
      async (ask) => {
        const answer = await ask(sampling as never, new AbortController().signal);
        await finish.promise;
        return { content: [{ type: 'text', text: String(answer.answer) }] };
      },
      new Cancellation(),
      noNotify,
    );
    const { round } = first as Extract<RoundOutcome, { kind: 'input' }>;
    const waiting = rounds.resume('me', round, { 'sampling-1': { answer: 'x' } }, new Cancellation(), noNotify)!;
    assert.deepEqual(await rounds.resume('me', round, { 'sampling-1': { answer: 'y' } }, new Cancellation(), noNotify), { kind: 'busy' });
    finish.resolve();
    assert.deepEqual(await waiting, { kind: 'complete', result: { content: [{ type: 'text', text: 'x' }] } });
    assert.equal(rounds.size, 0);
  });
});

/**
 * The input-required answer of a modern use_tool is signed in the request's context (the SDK's) before it is written.
 * A client that cancels the request (or goes away) meanwhile never learns of the round, so the call must end then, not
 * ten minutes later.
 */
describe('modern use_tool answers that carry an input round', () => {
  const owner = 'me';
  const args = { toolbox_name: 'box', tool_name: 'box__srv__ask', arguments: { q: 1 } };

  /** A modern use_tool whose call asks the client once; the call's downstream cancellation is reported. */
  function askingUseTool(rounds: InputRounds) {
    const cancelled = deferred<unknown>();
    const codec = createRequestStateCodec<RequestStatePayload>({ key: randomBytes(32), bind: () => owner });
    const useTool = createModernUseTool({
      rounds,
      owner,
      codec,
      checkedUseTool: (_args, call) => {
        call.cancellation.onCancel((reason) => cancelled.resolve(reason));
        return call.request(sampling as never, new AbortController().signal).then(() => done);
      },
    });
    return { useTool, cancelled: cancelled.promise };
  }

  function requestContext(signal: AbortSignal): ServerContext {
    return { mcpReq: { signal } } as unknown as ServerContext;
  }

  test('a request cancelled while its requestState is being signed ends the call at once', async () => {
    const rounds = new InputRounds();
    const { useTool, cancelled } = askingUseTool(rounds);
    const answer = await useTool(args, { cancellation: new Cancellation(), meta: undefined, notify: noNotify });
    assert.ok('finish' in answer, 'the call asked for input');
    assert.equal(rounds.size, 1);
    const request = new AbortController();
    const written = finishModernAnswer(answer, requestContext(request.signal));
    request.abort(new Error('cancelled by the client'));
    await written;
    assert.match(String(await cancelled), /cancelled by the client before its answer was written/);
    assert.equal(rounds.size, 0);
  });

  test('a request cancelled before its answer is framed ends the call at once', async () => {
    const rounds = new InputRounds();
    const { useTool, cancelled } = askingUseTool(rounds);
    const answer = await useTool(args, { cancellation: new Cancellation(), meta: undefined, notify: noNotify });
    const request = new AbortController();
    request.abort();
    await finishModernAnswer(answer, requestContext(request.signal));
    assert.match(String(await cancelled), /before its answer was written/);
    assert.equal(rounds.size, 0);
  });

  test('an answer written before any cancel keeps its round for the retry, whatever the request does after', async () => {
    const rounds = new InputRounds();
    const { useTool } = askingUseTool(rounds);
    const answer = await useTool(args, { cancellation: new Cancellation(), meta: undefined, notify: noNotify });
    const request = new AbortController();
    const result = (await finishModernAnswer(answer, requestContext(request.signal))) as { resultType?: string; requestState?: string };
    assert.equal(result.resultType, 'input_required');
    assert.equal(typeof result.requestState, 'string');
    // Over HTTP the request's signal aborts when its response closes, after the answer was written.
    request.abort();
    assert.equal(rounds.size, 1);
    rounds.closeAll('done');
  });
});
