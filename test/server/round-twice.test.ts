import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { startEra, type Over } from '../helpers/era-workbench.js';
import { inputRound } from '../helpers/input-round.js';
import { fixtureServer, textOf } from '../helpers/workbench-process.js';

/**
 * README "Protocol eras": a handshake-era server's question during a call reaches an MCP 2026-07-28 client as an input
 * round, which the client's retry continues. A client that sends that retry twice at once (a double submit) used to
 * leave the first request waiting for ever — its answer went to the second — until the client's own timeout. Now the
 * second is refused at once (INPUT_ROUND_BUSY) and the first gets the call's result.
 */
describe('a modern client that continues one input round twice at once', () => {
  for (const over of ['stdio', 'http'] as Over[]) {
    test(`gets the result on one request and a clear refusal on the other (over ${over})`, async () => {
      const config = { toolboxes: { mix: { mcpServers: { old: { ...fixtureServer('--odd'), timeoutMs: 60_000 } } } } };
      const wb = await startEra(over, 'modern', config, () => {}, { elicitation: { form: {} } });
      try {
        const params = { name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: 'mix__old__ask', arguments: { kind: 'elicitation' } } };
        const round = inputRound(await wb.client.callTool(params, { allowInputRequired: true, timeout: 60_000 }));
        const keys = Object.keys(round.inputRequests);
        assert.equal(keys.length, 1, JSON.stringify(round));
        const retry = { ...params, inputResponses: { [keys[0]!]: { action: 'accept', content: { name: 'Ada' } } }, requestState: round.requestState } as typeof params;
        const options = { allowInputRequired: true, timeout: 30_000 };
        const answers = await Promise.allSettled([wb.client.callTool(retry, options), wb.client.callTool(retry, options)]);
        const results = answers.map((a) => {
          assert.equal(a.status, 'fulfilled', `no request is left waiting: ${a.status === 'rejected' ? String(a.reason) : ''}`);
          return (a as PromiseFulfilledResult<unknown>).value as CallToolResult;
        });
        const done = results.filter((r) => r.isError !== true);
        const refused = results.filter((r) => r.isError === true);
        assert.equal(done.length, 1, JSON.stringify(results));
        assert.deepEqual(JSON.parse(textOf(done[0]!)), { action: 'accept', content: { name: 'Ada' } });
        assert.equal(refused.length, 1, JSON.stringify(results));
        // Refused as busy while the first waits; on a loaded machine the first may have finished already (then unknown).
        assert.match(textOf(refused[0]!), /another request is continuing this call's input round|not held by this workbench/);
        assert.match(JSON.stringify(refused[0]!._meta), /INPUT_ROUND_BUSY|INPUT_ROUND_UNKNOWN/);
        // The workbench goes on: a new call asks again.
        inputRound(await wb.client.callTool(params, { allowInputRequired: true, timeout: 60_000 }));
      } finally {
        await wb.close();
      }
    });
  }
});
