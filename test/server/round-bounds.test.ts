import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra } from '../helpers/era-workbench.js';
import { node, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

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
