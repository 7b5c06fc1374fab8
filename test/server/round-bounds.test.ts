import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { isInputRequiredResult, type CallToolResult, type Client } from '@modelcontextprotocol/client';
import { startEra } from '../helpers/era-workbench.js';
import { inputRound } from '../helpers/input-round.js';
import { fixtureServer, node, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

/**
 * Input a downstream server asks of the client is bounded by the call that asked (README "Protocol eras",
 * "Timeouts"): a question the client never answers ends the call at the server's timeoutMs like any other silent
 * call, and the question is withdrawn from the client (notifications/cancelled) so nothing stays waiting.
 */
const modernFixture = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));

/** Questions the client was asked and never answered, and the ones withdrawn from it. */
interface Questions {
  asked: string[];
  withdrawn: string[];
}

/** An elicitation handler that never answers: it only notes the question, and its withdrawal. */
function neverAnswers(questions: Questions): (client: Client) => void {
  return (client) => {
    client.setRequestHandler('elicitation/create', (request, ctx) => {
      questions.asked.push(request.params.message);
      return new Promise((_resolve, reject) => {
        ctx.mcpReq.signal.addEventListener('abort', () => {
          questions.withdrawn.push(request.params.message);
          reject(new Error('withdrawn'));
        });
      });
    });
  };
}

describe('a modern server asks a handshake-era client, which never answers', () => {
  for (const over of ['stdio', 'http'] as const) {
    test(`over ${over}: the call times out at timeoutMs and the question is withdrawn`, async () => {
      const questions: Questions = { asked: [], withdrawn: [] };
      const config = { toolboxes: { mix: { mcpServers: { new: { command: node, args: [modernFixture], env: { MODERN_FIXTURE_AS_LEGACY: '0' }, timeoutMs: 1500 } } } } };
      const wb = await startEra(over, 'legacy', config, neverAnswers(questions), { elicitation: { form: {} } });
      try {
        const params = { name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: 'mix__new__ask', arguments: { question: 'ship it?' } } };
        // Far above timeoutMs: before the fix the call waited for the client forever, and this is what ended it.
        const result = (await wb.client.callTool(params, { timeout: 30_000 })) as CallToolResult;
        assert.equal(result.isError, true, textOf(result));
        assert.equal(workbenchErrorCode(result), 'CALL_TIMEOUT', textOf(result));
        assert.match(textOf(result), /tool "ask".*did not answer within 1500 ms/s);
        assert.deepEqual(questions.asked, ['ship it?']);
        await waitFor(() => questions.withdrawn.length === 1, { timeoutMs: 10_000, what: 'the unanswered elicitation to be withdrawn from the client' });
        // The server is still usable.
        assert.equal(textOf((await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: 'mix__new__echo', arguments: { text: 'hi' } } })) as CallToolResult), 'echo: hi');
      } finally {
        await wb.close();
      }
    });
  }
});

describe('one modern user with more calls waiting for input than the limit', () => {
  const config = { toolboxes: { mix: { mcpServers: { old: fixtureServer('--odd') } } } };
  const params = { name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: 'mix__old__ask', arguments: { kind: 'elicitation' } } };

  for (const over of ['stdio', 'http'] as const) {
    test(`over ${over}: with 64 calls waiting, the 65th is refused with what to do, and the 64 complete`, async () => {
      const wb = await startEra(over, 'modern', config, () => {}, { elicitation: { form: {} } });
      try {
        // One after another, so each call's question is in its own round (a server's request joins the newest call).
        const waiting: unknown[] = [];
        for (let i = 0; i < 64; i++) {
          const first = await wb.client.callTool(params, { allowInputRequired: true });
          assert.equal(Object.keys(inputRound(first).inputRequests).length, 1);
          waiting.push(first);
        }
        const refused = (await wb.client.callTool(params, { allowInputRequired: true })) as CallToolResult;
        assert.equal(refused.isError, true, JSON.stringify(refused));
        assert.equal(workbenchErrorCode(refused), 'INPUT_ROUNDS_FULL');
        assert.match(textOf(refused), /64 calls of this client are waiting for its input already \(at most 64 at once\); answer or cancel them, then make this call again/);
        const answered = await Promise.all(waiting.map((round) => answerEveryRound(wb.client, params, round)));
        for (const result of answered) assert.equal(JSON.parse(textOf(result)).action, 'accept', textOf(result));
      } finally {
        await wb.close();
      }
    });

    test(`over ${over}: of 65 calls at once, a refusal fails only its own call, never the others`, async () => {
      const wb = await startEra(over, 'modern', config, () => {}, { elicitation: { form: {} } });
      try {
        const outcomes = await Promise.all(Array.from({ length: 65 }, () => answerEveryRound(wb.client, params)));
        // How many questions are open at once depends on how fast they are answered: at most one is over the limit.
        const refused = outcomes.filter((r) => r.isError === true);
        assert.ok(refused.length <= 1, refused.map(textOf).join('\n'));
        for (const result of refused) assert.match(textOf(result), /64 calls of this client are waiting for its input already/);
        for (const result of outcomes.filter((r) => r.isError !== true)) assert.equal(JSON.parse(textOf(result)).action, 'accept', textOf(result));
      } finally {
        await wb.close();
      }
    });
  }
});

/** Makes the call (or takes its `first` answer) and answers every input round it gets (accepting each elicitation) until it completes. */
async function answerEveryRound(client: Client, params: { name: string; arguments: Record<string, unknown> }, first?: unknown): Promise<CallToolResult> {
  let result: unknown = first;
  for (let round = 0; round < 70; round++) {
    result ??= await client.callTool(params, { allowInputRequired: true, timeout: 60_000 });
    if (!isInputRequiredResult(result)) return result as CallToolResult;
    const answers = Object.fromEntries(Object.keys(result.inputRequests ?? {}).map((key) => [key, { action: 'accept', content: { name: key } }]));
    // Retry params of MCP 2026-07-28 (the SDK's CallToolRequest type does not list them yet).
    const retry = { ...params, inputResponses: answers, requestState: result.requestState } as typeof params;
    result = await client.callTool(retry, { allowInputRequired: true, timeout: 60_000 });
  }
  throw new Error('the call never completed');
}
