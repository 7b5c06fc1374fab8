import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { logLines } from '../helpers/log-lines.js';
import { waitFor } from '../helpers/wait-for.js';
import { fixtureServer, tempDir, textOf, workbenchErrorCode } from '../helpers/workbench-process.js';
import { isAlive } from '../../src/shared/process-tree.js';

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

// README "Downstream servers", Noise: a server that prints a banner burst at start and then only JSON-RPC, and stays
// connected, has the count of the banner lines not logged one by one said when the window ends — not hours later,
// when its connection closes. WORKBENCH_NOISE_WINDOW_SECONDS shortens the window from a minute.
describe('a server that prints 15 lines of noise at start, then goes quiet and stays connected', () => {
  for (const [over, era] of combos) {
    it(`the 5 lines held back are counted once when the window ends, the connection still open; shutdown is prompt (${over}, ${era} client)`, async () => {
      const temp = await tempDir('wb-banner-');
      const fixtureLog = join(temp.dir, 'banner.jsonl');
      const config = { toolboxes: { tb: { mcpServers: { banner: fixtureServer('--banner-stdout', '15', '--log', fixtureLog) } } } };
      const env = { MCP_WORKBENCH_CACHE_DIR: join(temp.dir, 'cache'), WORKBENCH_STATE_FILE: join(temp.dir, 'tool-state.json'), WORKBENCH_NOISE_WINDOW_SECONDS: '1' };
      const wb = await startEra(over, era, config, undefined, {}, { args: ['--log-format', 'json'], env });
      try {
        const call = async (text: string): Promise<CallToolResult> =>
          (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'tb__banner__echo', arguments: { text } } })) as CallToolResult;
        assert.equal(textOf(await call('first')), 'first');
        const counts = (): unknown[] =>
          logLines(wb.stderr()).filter((l) => l.scope === 'tb/banner' && l.fields.event === 'stdout_noise' && l.fields.suppressed !== undefined).map((l) => l.fields.suppressed);
        assert.ok(await waitFor(() => counts().length > 0, 15_000), `the count of the held-back banner lines is logged:\n${wb.stderr()}`);
        const events = (await readFile(fixtureLog, 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { event: string }).event);
        assert.deepEqual(events.filter((e) => e === 'start' || e === 'exit' || e === 'stdin_closed'), ['start'], 'the server is still the one connection, open');
        assert.equal(textOf(await call('second')), 'second', 'the server still answers');
        assert.deepEqual(counts(), [5], `one count line, of the 5 lines not logged one by one:\n${wb.stderr()}`);
      } finally {
        await wb.close();
      }
      assert.ok(await waitFor(() => !isAlive(wb.pid), 10_000), `the workbench exits on shutdown (pid ${wb.pid})`);
      await temp.cleanup();
    });

    it(`a count still held back at shutdown is said as the connection closes, and does not keep the workbench running (${over}, ${era} client)`, async () => {
      const temp = await tempDir('wb-banner-');
      const config = { toolboxes: { tb: { mcpServers: { banner: fixtureServer('--banner-stdout', '15') } } } };
      const env = { MCP_WORKBENCH_CACHE_DIR: join(temp.dir, 'cache'), WORKBENCH_STATE_FILE: join(temp.dir, 'tool-state.json') };
      const wb = await startEra(over, era, config, undefined, {}, { args: ['--log-format', 'json'], env });
      try {
        const echoed = (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: 'tb__banner__echo', arguments: { text: 'hi' } } })) as CallToolResult;
        assert.equal(textOf(echoed), 'hi');
        process.kill(wb.pid, 'SIGTERM');
        assert.ok(await waitFor(() => !isAlive(wb.pid), 10_000), `the workbench exits on SIGTERM though a noise window is open (pid ${wb.pid})\n${wb.stderr()}`);
        const counts = (): unknown[] =>
          logLines(wb.stderr()).filter((l) => l.scope === 'tb/banner' && l.fields.event === 'stdout_noise' && l.fields.suppressed !== undefined).map((l) => l.fields.suppressed);
        assert.ok(await waitFor(() => counts().length > 0, 5_000), `the count of the held-back banner lines is logged:\n${wb.stderr()}`);
        assert.deepEqual(counts(), [5], `the count is said once, at shutdown:\n${wb.stderr()}`);
      } finally {
        await wb.close();
        await temp.cleanup();
      }
    });
  }
});
