import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startEra, type Over } from '../helpers/era-workbench.js';
import { countByConstructor, signalledSnapshot } from '../helpers/heap-snapshot.js';
import { inputRound } from '../helpers/input-round.js';
import { fixtureServer, textOf } from '../helpers/workbench-process.js';

/**
 * README "Protocol eras": a server's question during a call reaches an MCP 2026-07-28 client as an input round, which
 * the client's retry continues. Once answered and finished, nothing of that round may stay in the workbench's memory:
 * a workbench left running all day would otherwise keep every such call (and over HTTP, the client's downstream
 * connections) for good. The only outward sign is memory, so the test counts the workbench's live `Round` objects in
 * a heap snapshot (taken after a full garbage collection) once many rounds are over.
 */
const ROUNDS = 20;

describe('finished input rounds are not kept in memory', () => {
  for (const over of ['stdio', 'http'] as Over[]) {
    test(`${ROUNDS} answered rounds leave no Round behind (over ${over})`, { timeout: 300_000 }, async () => {
      const config = { toolboxes: { mix: { mcpServers: { old: { ...fixtureServer('--odd'), timeoutMs: 60_000 } } } } };
      const wb = await startEra(over, 'modern', config, () => {}, { elicitation: { form: {} } }, { env: { NODE_OPTIONS: '--heapsnapshot-signal=SIGUSR2' } });
      try {
        const params = { name: 'use_tool', arguments: { toolbox_name: 'mix', tool_name: 'mix__old__ask', arguments: { kind: 'elicitation' } } };
        for (let i = 0; i < ROUNDS; i++) {
          const round = inputRound(await wb.client.callTool(params, { allowInputRequired: true, timeout: 60_000 }));
          const [key] = Object.keys(round.inputRequests);
          const retry = { ...params, inputResponses: { [key!]: { action: 'accept', content: { name: `Ada ${i}` } } }, requestState: round.requestState } as typeof params;
          const done = await wb.client.callTool(retry, { allowInputRequired: true, timeout: 60_000 });
          assert.deepEqual(JSON.parse(textOf(done as never)), { action: 'accept', content: { name: `Ada ${i}` } });
        }
        const counts = await countByConstructor(await signalledSnapshot(wb.pid, wb.dir));
        const rounds = counts.get('Round')?.count ?? 0;
        // The round class is named in the build (no minifier); a live one or two may be the last call's, on its way out.
        assert.ok(counts.has('InputRounds'), `the snapshot is the workbench's (it holds an InputRounds): ${[...counts.keys()].filter((k) => /Round/.test(k)).join(', ')}`);
        assert.ok(rounds <= 2, `${rounds} Round objects are still alive after ${ROUNDS} finished rounds`);
      } finally {
        await wb.close();
      }
    });
  }
});
