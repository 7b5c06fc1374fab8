import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { logLines } from '../helpers/log-lines.js';
import { fixtureServer, textOf, workbenchErrorCode } from '../helpers/workbench-process.js';

// README "Downstream servers": a server that prints on stdout what is not JSON-RPC (a banner, a progress display) has
// those lines skipped and logged. A progress display redraws its line with "\r" and never ends it, so the server's
// next message arrives on the same line as the noise: the message is still read, not dropped with the noise (the call
// used to wait for its answer until the client gave up).

// useToolWaitMs: a lost initialize answer fails the call with CONNECT_TIMEOUT in 20 s, not at the client's own timeout.
const CONFIG = { useToolWaitMs: 20_000, toolboxes: { tb: { mcpServers: { ok: fixtureServer(), noisy: fixtureServer('--progress-stdout') } } } };

const combos: [Over, EraName][] = [['stdio', 'legacy'], ['stdio', 'modern'], ['http', 'legacy'], ['http', 'modern']];
describe('a server that prints a progress display on stdout, beside a healthy one', () => {
  for (const [over, era] of combos) {
    it(`answers calls to both; the noise is logged, the messages on its line are read (${over}, ${era} client)`, async () => {
      assert.ok(ERAS.includes(era));
      const wb = await startEra(over, era, CONFIG, undefined, {}, { args: ['--log-format', 'json'] });
      try {
        const use = async (tool: string, text: string): Promise<CallToolResult> =>
          (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: tool, arguments: { text } } })) as CallToolResult;
        for (const round of [1, 2]) {
          const healthy = await use('tb__ok__echo', `ok ${round}`);
          assert.equal(textOf(healthy), `ok ${round}`, JSON.stringify(healthy));
          const noisy = await use('tb__noisy__echo', `noisy ${round}`);
          assert.notEqual(noisy.isError, true, `${workbenchErrorCode(noisy)}: ${textOf(noisy)}`);
          assert.equal(textOf(noisy), `noisy ${round}`);
        }
        const noise = logLines(wb.stderr()).filter((l) => l.fields.event === 'stdout_noise' && l.scope === 'tb/noisy');
        assert.ok(noise.length > 0, `the noise was logged on stderr:\n${wb.stderr()}`);
        assert.ok(noise.every((l) => !l.message.includes('jsonrpc')), 'only the noise is quoted, not the message after it');
      } finally {
        await wb.close();
      }
    });
  }
});
