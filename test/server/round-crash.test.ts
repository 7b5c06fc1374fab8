import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { startEra, type Over } from '../helpers/era-workbench.js';
import { inputRound } from '../helpers/input-round.js';
import { fixtureEvents, fixtureServer, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

/**
 * README "Protocol eras": a handshake-era server's question held as an input round for an MCP 2026-07-28 client. When
 * the server dies while the round waits for the client, the client's retry is answered at once with the call's
 * failure (SERVER_EXITED), not left waiting, and the next call starts the server again and asks anew.
 */
describe('a handshake-era server that dies while its input round waits for the client', () => {
  for (const over of ['stdio', 'http'] as Over[]) {
    test(`the retry gets SERVER_EXITED, and the next call asks again (over ${over})`, async () => {
      const temp = await tempDir('wb-round-crash-');
      const log = join(temp.dir, 'fx.log');
      const config = { toolboxes: { mix: { mcpServers: { old: { ...fixtureServer('--odd', '--log', log), timeoutMs: 60_000 } } } } };
      const wb = await startEra(over, 'modern', config, () => {}, { elicitation: { form: {} } });
      try {
        const params = { name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: 'mix__old__ask', arguments: { kind: 'elicitation' } } };
        const round = inputRound(await wb.client.callTool(params, { allowInputRequired: true, timeout: 60_000 }));
        const pid = (await fixtureEvents(log)).find((e) => e.event === 'call')!.pid;
        process.kill(pid, 'SIGKILL');
        const gone = async (): Promise<boolean> => {
          try {
            process.kill(pid, 0);
            return false;
          } catch {
            return true;
          }
        };
        assert.ok(await waitFor(gone, 15_000), 'the server died');
        const keys = Object.keys(round.inputRequests);
        const retry = { ...params, inputResponses: { [keys[0]!]: { action: 'accept', content: { name: 'Ada' } } }, requestState: round.requestState } as typeof params;
        const r = (await wb.client.callTool(retry, { allowInputRequired: true, timeout: 30_000 })) as CallToolResult;
        assert.equal(r.isError, true, JSON.stringify(r));
        assert.equal((r._meta?.['mcp-workbench/error'] as { code?: string } | undefined)?.code, 'SERVER_EXITED', textOf(r));
        const next = inputRound(await wb.client.callTool(params, { allowInputRequired: true, timeout: 60_000 }));
        assert.ok(next.requestState);
      } finally {
        await wb.close();
        await temp.cleanup();
      }
    });
  }
});
