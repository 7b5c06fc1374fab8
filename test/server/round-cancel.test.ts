import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/client';
import { startEra } from '../helpers/era-workbench.js';
import { inputRound } from '../helpers/input-round.js';
import { fixtureEvents, fixtureServer, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

/**
 * A handshake-era server's request names no call, so it joins the round of the user's newest call on that server
 * (README "Protocol eras"): cancelling that call must cancel it alone. The questions other calls put into its round
 * go on to the round of another live call of the user, so those calls still complete.
 */
describe("cancelling a call whose round holds another call's question", () => {
  test('over stdio: the question moves to the other call, which completes; only the cancelled call ends downstream', async () => {
    const temp = await tempDir('wb-round-cancel-');
    const log = join(temp.dir, 'fixture.log');
    const trigger = join(temp.dir, 'ask-now');
    const config = { toolboxes: { mix: { mcpServers: { old: { ...fixtureServer('--odd', '--log', log), timeoutMs: 60_000 } } } } };
    const wb = await startEra('stdio', 'modern', config, () => {}, { elicitation: { form: {} } });
    const called = async (tool: string): Promise<boolean> => (await fixtureEvents(log)).some((e) => e.event === 'call' && e.tool === tool);
    try {
      // The older call: it asks once the test says so, when the newer call is in flight.
      const askParams = { name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: 'mix__old__ask', arguments: { kind: 'elicitation', after: trigger } } };
      const older = wb.client.callTool(askParams, { allowInputRequired: true, timeout: 60_000 });
      await waitFor(() => called('ask'), { timeoutMs: 15_000, what: 'the older call to reach the server' });
      const hangParams = { name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: 'mix__old__hang', arguments: {} } };
      const newer = wb.client.callTool(hangParams, { allowInputRequired: true, timeout: 60_000 });
      await waitFor(() => called('hang'), { timeoutMs: 15_000, what: 'the newer call to reach the server' });
      await writeFile(trigger, '');
      // The older call's question joins the newest call's round.
      const joined = inputRound(await newer);
      assert.equal(Object.keys(joined.inputRequests).length, 1, JSON.stringify(joined));

      // The client cancels the newer call: its retry is aborted as soon as it is sent.
      const abort = new AbortController();
      const transport = wb.client.transport!;
      const send = transport.send.bind(transport);
      transport.send = (message: JSONRPCMessage, options) => {
        const sent = send(message, options);
        const params = 'method' in message ? (message.params as Record<string, unknown> | undefined) : undefined;
        if (params?.requestState === joined.requestState) abort.abort('the user cancelled it');
        return sent;
      };
      const retry = { ...hangParams, inputResponses: {}, requestState: joined.requestState } as typeof hangParams;
      await assert.rejects(wb.client.callTool(retry, { allowInputRequired: true, signal: abort.signal }));
      transport.send = send;

      // The question is the older call's now: answered there, that call completes with the answer.
      const round = inputRound(await older);
      const keys = Object.keys(round.inputRequests);
      assert.equal(keys.length, 1, JSON.stringify(round));
      const answers = { [keys[0]!]: { action: 'accept', content: { name: 'Ada' } } };
      const answered = (await wb.client.callTool({ ...askParams, inputResponses: answers, requestState: round.requestState } as typeof askParams, {
        allowInputRequired: true,
        timeout: 60_000,
      })) as CallToolResult;
      assert.notEqual(answered.isError, true, textOf(answered));
      assert.deepEqual(JSON.parse(textOf(answered)), { action: 'accept', content: { name: 'Ada' } });
      // The cancelled call, and only it, was cancelled downstream.
      await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'cancelled' && e.tool === 'hang'), {
        timeoutMs: 15_000,
        what: 'the cancelled call to be cancelled downstream',
      });
      assert.deepEqual((await fixtureEvents(log)).filter((e) => e.event === 'cancelled').map((e) => e.tool), ['hang']);
    } finally {
      await wb.close();
      await temp.cleanup();
    }
  });
});
