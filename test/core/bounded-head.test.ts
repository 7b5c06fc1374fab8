import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { fixtureServer, node, waitFor } from '../helpers/workbench-process.js';

/**
 * An open_toolbox answer's head (servers failed, still starting) takes at most a quarter of the context budget
 * (README "open_toolbox: context budget, detail on demand, search"): many servers that fail with long stderr never
 * push the working servers' tools out of the answer, nor the answer over the budget.
 */
const noisy = (i: number) => ({
  command: node,
  args: ['-e', `process.stderr.write(('Traceback line ${i} ' + 'z'.repeat(300) + '\\n').repeat(40)); process.exit(3)`],
});

/** Servers that fail with real stderr (each spawns a process that writes it and exits). */
const NOISY = 10;

/**
 * The working fixture beside `failing` failures: the first NOISY with long stderr, the rest unable to start as written
 * (see unstartable: they spawn nothing, so forty failures cost ten process starts, not forty, on a loaded machine).
 * The toolbox's open waits up to 50 s, so an open waits for every start to end rather than naming some as starting.
 */
function config(failing: number): unknown {
  const servers: Record<string, unknown> = { fx: fixtureServer() };
  for (let i = 0; i < Math.min(failing, NOISY); i++) servers[`noisy${i}`] = noisy(i);
  Object.assign(servers, unstartable('dev', failing - NOISY));
  return { toolboxes: { dev: { openWaitMs: 50_000, mcpServers: servers } } };
}

/** Each open of the toolbox tries its failed servers again, so a request may take the whole open wait. */
const OPEN_TIMEOUT = { timeout: 120_000 };

interface Answer {
  detail: string;
  tools: { name: string; inputSchema?: unknown }[];
  servers_failed: { server: string; error: string; failure?: { stderrTail?: string[] } }[];
  next_cursor?: string;
}

for (const [over, era] of [['stdio', 'legacy'], ['http', 'modern']] as [Over, EraName][]) {
  describe(`the head of an open_toolbox answer is bounded (${over}, ${era} client)`, () => {
    for (const failing of [NOISY, 40]) {
      const title = failing === NOISY ? `${failing} servers failing with long stderr` : `${failing} servers failing (${NOISY} with long stderr)`;
      it(`${title} beside one that works: every tool in full, within the budget`, { timeout: 400_000 }, async () => {
        const wb = await startEra(over, era, config(failing));
        try {
          // Until an answer in which every server has started or failed: the open waits for each start to end (see
          // config), and opens again should a loaded machine take longer than that.
          let result: CallToolResult | undefined;
          const settled = async (): Promise<boolean> => {
            result = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'dev' } }, OPEN_TIMEOUT)) as CallToolResult;
            return (result.structuredContent as { servers_pending?: unknown }).servers_pending === undefined;
          };
          assert.ok(await waitFor(settled, 240_000), 'every server settled');
          const text = (result!.content[0] as { text: string }).text;
          assert.ok(text.length <= 20_000, `${text.length} characters`);
          const answer = result!.structuredContent as unknown as Answer;
          assert.equal(answer.detail, 'full', 'the working server\'s tools come in full');
          assert.ok(answer.tools.some((t) => t.name === 'dev__fx__echo' && t.inputSchema));
          assert.equal(answer.next_cursor, undefined);
          if (failing === NOISY) {
            const tails = answer.servers_failed.map((f) => f.failure?.stderrTail?.join('\n') ?? '');
            assert.ok(tails.some((tail) => /Traceback line \d+ z{100}/.test(tail)), 'the real stderr is told, cut');
          }
          for (const failed of answer.servers_failed) {
            assert.ok(failed.error.length <= 400, failed.error.slice(0, 100));
            assert.ok((failed.failure?.stderrTail?.length ?? 0) <= 2);
          }
          const rest = answer.servers_failed.find((f) => /^\(\d+ more\)$/.test(f.server));
          if (failing === 40) {
            assert.ok(rest, 'the failures that do not fit are counted');
            const shown = answer.servers_failed.length - 1;
            assert.equal(Number(/\d+/.exec(rest.server)![0]), failing - shown);
            assert.match(rest.error, /failed to connect \([A-Z_]+ ×\d+.*\); open_toolbox with detail:"full" lists each/);
            assert.match(rest.error, /mcp-workbench doctor/);
          }
          // Asked in full, the head is whole.
          const whole = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'dev', detail: 'full' } }, OPEN_TIMEOUT)) as CallToolResult;
          const full = whole.structuredContent as unknown as Answer & { servers_pending?: unknown[] };
          assert.ok(!full.servers_failed.some((f) => f.server.endsWith(' more)')), 'nothing counted away');
          assert.equal(full.servers_failed.length + (full.servers_pending?.length ?? 0), failing);
        } finally {
          await wb.close();
        }
      });
    }
  });
}

/** Servers that cannot start as written (an unset variable in the command): failures that spawn nothing. */
function unstartable(toolbox: string, count: number): Record<string, unknown> {
  const servers: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) servers[`bad${i}`] = { command: `\${WB_HEAD_UNSET_${toolbox.toUpperCase()}_${i}}` };
  return servers;
}

for (const [over, era] of [['stdio', 'legacy'], ['http', 'modern']] as [Over, EraName][]) {
  describe(`the head of a search across toolboxes is bounded (${over}, ${era} client)`, () => {
    it('the failures counted away are not said to be of one toolbox', async () => {
      const config = { toolboxes: { one: { mcpServers: { fx: fixtureServer(), ...unstartable('one', 15) } }, two: { mcpServers: unstartable('two', 15) } } };
      const wb = await startEra(over, era, config);
      try {
        const result = (await wb.client.callTool({ name: 'open_toolbox', arguments: { query: 'echo' } })) as CallToolResult;
        const answer = result.structuredContent as unknown as Answer;
        const rest = answer.servers_failed.find((f) => /^\(\d+ more\)$/.test(f.server));
        assert.ok(rest, JSON.stringify(answer.servers_failed.map((f) => f.server)));
        assert.match(rest.error, /^\d+ more servers failed to connect \(ENV_MISSING ×\d+\); open_toolbox with detail:"full" lists each/);
      } finally {
        await wb.close();
      }
    });
  });
}

/**
 * Servers whose lists had tools left out (each tool's inputSchema of type "string"): `servers_partial` is part of the
 * head and shares its quarter of the budget (README "open_toolbox"), with the same "(N more)" entry as servers_failed.
 */
function leavingOut(count: number): unknown {
  const servers: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const defs = Array.from({ length: 7 }, (_, t) => ({ name: `left_out_${i}_${t}_${'w'.repeat(48)}`, inputSchema: { type: 'string' } }));
    servers[`part${i}`] = { ...fixtureServer('--name', `part${i}`), env: { FIXTURE_TOOL_DEFS: JSON.stringify(defs) } };
  }
  return { catalogBudget: 4000, toolboxes: { dev: { mcpServers: servers } } };
}

for (const [over, era] of [['stdio', 'legacy'], ['http', 'modern']] as [Over, EraName][]) {
  describe(`servers_partial is bounded with the rest of the head (${over}, ${era} client)`, () => {
    it('eight servers that each leave tools out: the first within the budget, the rest counted', { timeout: 180_000 }, async () => {
      const servers = 8;
      const wb = await startEra(over, era, leavingOut(servers));
      try {
        let result: CallToolResult | undefined;
        const settled = async (): Promise<boolean> => {
          result = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'dev' } })) as CallToolResult;
          const answer = result.structuredContent as { servers_pending?: unknown; servers_connected: string[] };
          return answer.servers_pending === undefined && answer.servers_connected.length === servers;
        };
        assert.ok(await waitFor(settled, 120_000), 'every server connected');
        const text = (result!.content[0] as { text: string }).text;
        assert.ok(text.length <= 4000, `${text.length} characters`);
        const partial = (result!.structuredContent as { servers_partial?: { server: string; note: string }[] }).servers_partial ?? [];
        const rest = partial.find((p) => /^\(\d+ more\)$/.test(p.server));
        assert.ok(rest, JSON.stringify(partial.map((p) => p.server)));
        assert.equal(Number(/\d+/.exec(rest.server)![0]), servers - (partial.length - 1));
        assert.match(rest.note, /more servers list tools that are not all shown.*detail:"full"/);
        for (const p of partial) assert.ok(p.note.length <= 400, p.note.slice(0, 100));
        // Asked in full, every partial server is named with its whole note.
        const whole = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'dev', detail: 'full' } })) as CallToolResult;
        const full = (whole.structuredContent as { servers_partial?: { server: string; note: string }[] }).servers_partial ?? [];
        assert.deepEqual(full.map((p) => p.server).sort(), Array.from({ length: servers }, (_, i) => `part${i}`).sort());
        assert.ok(full.every((p) => /and 2 more$/.test(p.note)), full[0]?.note);
      } finally {
        await wb.close();
      }
    });
  });
}
