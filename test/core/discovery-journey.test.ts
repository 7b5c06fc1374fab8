import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TRANSPORTS, startOver, type AnyWorkbench } from '../helpers/both-transports.js';
import { sampleArgs } from '../helpers/sample-args.js';
import { fixtureServer, memoryServer, tempDir } from '../helpers/workbench-process.js';

/**
 * The promise of progressive discovery, walked as a model would walk it: knowing only the `initialize` instructions,
 * reach and correctly call any tool of a 100-tool toolbox in at most three calls — open the toolbox (an index that
 * names every tool), ask for that tool's schema, call it — and never receive a result over 25,000 characters (Claude
 * Code's default cap on an MCP tool result; README: "open_toolbox").
 */
const RESULT_CAP = 25_000;

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

interface IndexedTool {
  name: string;
}

/** Every canonical name an answer mentions, whatever its level of detail (full, index, names grouped by server). */
function namesIn(toolbox: string, answer: { tools: unknown[] }): string[] {
  return answer.tools.flatMap((t) => {
    const entry = t as { name?: string; names?: string[]; prefix?: string };
    if (entry.name !== undefined) return [entry.name];
    // Names grouped by server: the canonical name is the group's prefix followed by the name.
    return (entry.names ?? []).map((n) => `${entry.prefix}${n}`);
  });
}

for (const transport of TRANSPORTS) {
  describe(`a model reaches every tool of a 100-tool toolbox in three calls (${transport})`, () => {
    let data: { dir: string; cleanup: () => Promise<void> };
    let wb: AnyWorkbench;
    before(async () => {
      data = await tempDir('wb-journey-');
      // 81 realistic generated tools (long descriptions, mixed naming styles) and the fixture's own tools but for its
      // fault modes, plus the 9 of the reference memory server: 100 in all.
      const config = {
        toolboxes: {
          work: {
            description: 'A big toolbox',
            mcpServers: {
              catalog: { ...fixtureServer('--catalog', '81'), disabledTools: ['bad_output', 'slow', 'hang', 'crash', 'fail', 'throw_jsonrpc', 'huge'] },
              memory: memoryServer(join(data.dir, 'memory.jsonl')),
            },
          },
        },
      };
      wb = await startOver(transport, config, [], { MCP_WORKBENCH_CACHE_DIR: join(data.dir, 'cache') });
    });
    after(async () => {
      await wb?.close();
      await data?.cleanup();
    });

    it('the instructions alone say how; the index names every tool; each tool is one schema and one call away', async () => {
      const instructions = wb.client.getInstructions() ?? '';
      assert.match(instructions, /work/);
      assert.match(instructions, /open_toolbox/);
      assert.match(instructions, /use_tool/);

      // Call 1 (shared by every tool): the toolbox's default answer.
      const opened = await wb.call('open_toolbox', { toolbox_name: 'work' });
      assert.ok(!opened.isError, textOf(opened));
      assert.ok(textOf(opened).length <= RESULT_CAP, `open_toolbox answered ${textOf(opened).length} characters`);
      const index = JSON.parse(textOf(opened)) as { detail: string; tools: unknown[] };
      const names = namesIn('work', index);
      assert.equal(names.length, 100, `the default answer names every tool (got ${names.length})`);

      for (const name of names) {
        // Call 2: the schema of just this tool.
        const detail = await wb.call('open_toolbox', { toolbox_name: 'work', tools: [name] });
        const detailText = textOf(detail);
        assert.ok(!detail.isError, detailText);
        assert.ok(detailText.length <= RESULT_CAP, `${name}: detail answered ${detailText.length} characters`);
        const entry = (JSON.parse(detailText) as { tools: (IndexedTool & { inputSchema?: Parameters<typeof sampleArgs>[0] })[] }).tools[0];
        assert.equal(entry?.name, name);
        assert.ok(entry.inputSchema, `${name}: the detail answer carries the input schema`);

        // Call 3: the call itself, with arguments built from that schema alone.
        const result = await wb.useTool('work', name, sampleArgs(entry.inputSchema));
        const meta = result._meta as Record<string, { code?: string }> | undefined;
        assert.equal(meta?.['mcp-workbench/error'], undefined, `${name}: the workbench refused the call: ${textOf(result)}`);
        assert.ok(textOf(result).length <= RESULT_CAP, `${name}: the result is ${textOf(result).length} characters`);
      }
    });
  });
}
