import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isInputRequiredResult, type CallToolResult, type Client } from '@modelcontextprotocol/client';
import { startEra } from '../helpers/era-workbench.js';
import { inputRound } from '../helpers/input-round.js';
import { fixtureServer, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

/**
 * A handshake-era server's request relayed to the client (README "Protocol eras") is withdrawn when the calls that
 * caused it have ended: no call of that server in that session is left to wait for its answer, so the client is told
 * (`notifications/cancelled`) instead of keeping a question nobody waits for.
 */
const config = (timeoutMs?: number) => ({ toolboxes: { mix: { mcpServers: { old: { ...fixtureServer('--odd'), ...(timeoutMs !== undefined && { timeoutMs }) } } } } });
const params = { name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: 'mix__old__ask', arguments: { kind: 'elicitation' } } };

/** Questions the client was asked and never answered, and the ones withdrawn from it. */
interface Questions {
  asked: number;
  withdrawn: number;
}

function neverAnswers(questions: Questions): (client: Client) => void {
  return (client) => {
    client.setRequestHandler('elicitation/create', (_request, ctx) => {
      questions.asked++;
      return new Promise((_resolve, reject) => {
        ctx.mcpReq.signal.addEventListener('abort', () => {
          questions.withdrawn++;
          reject(new Error('withdrawn'));
        });
      });
    });
  };
}

describe('a relayed question of a handshake-era server is withdrawn when its call ends', () => {
  for (const over of ['stdio', 'http'] as const) {
    test(`over ${over}, a handshake-era client: when the model's call is cancelled`, async () => {
      const questions: Questions = { asked: 0, withdrawn: 0 };
      const wb = await startEra(over, 'legacy', config(), neverAnswers(questions), { elicitation: { form: {} } });
      try {
        const abort = new AbortController();
        const call = wb.client.callTool(params, { signal: abort.signal });
        await waitFor(() => questions.asked === 1, { timeoutMs: 15_000, what: 'the relayed elicitation' });
        abort.abort('the user gave up');
        await assert.rejects(call);
        await waitFor(() => questions.withdrawn === 1, { timeoutMs: 10_000, what: 'the elicitation to be withdrawn from the client' });
      } finally {
        await wb.close();
      }
    });

    test(`over ${over}, a handshake-era client: when the call times out`, async () => {
      const questions: Questions = { asked: 0, withdrawn: 0 };
      const wb = await startEra(over, 'legacy', config(1500), neverAnswers(questions), { elicitation: { form: {} } });
      try {
        const result = (await wb.client.callTool(params, { timeout: 30_000 })) as CallToolResult;
        assert.equal(workbenchErrorCode(result), 'CALL_TIMEOUT', textOf(result));
        assert.equal(questions.asked, 1);
        await waitFor(() => questions.withdrawn === 1, { timeoutMs: 10_000, what: 'the elicitation to be withdrawn from the client' });
      } finally {
        await wb.close();
      }
    });

    test(`over ${over}, an MCP 2026-07-28 client: a call that timed out stops asking, and its retry gets the timeout`, async () => {
      const wb = await startEra(over, 'modern', config(1500), () => {}, { elicitation: { form: {} } });
      try {
        let state = inputRound(await wb.client.callTool(params, { allowInputRequired: true })).requestState;
        let outcome: unknown;
        // Coming back without an answer: the question is asked again while its call runs, and no more once it ended.
        await waitFor(
          async () => {
            outcome = await wb.client.callTool({ ...params, inputResponses: {}, requestState: state } as typeof params, { allowInputRequired: true });
            if (!isInputRequiredResult(outcome)) return true;
            state = outcome.requestState!;
            return false;
          },
          { timeoutMs: 15_000, what: 'the retry to answer with the call timeout instead of the question' },
        );
        assert.equal(workbenchErrorCode(outcome as CallToolResult), 'CALL_TIMEOUT', JSON.stringify(outcome));
      } finally {
        await wb.close();
      }
    });
  }
});
