import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { join } from 'node:path';
import { startEra, type EraName, type EraWorkbench, type Over } from '../helpers/era-workbench.js';
import { MAX_SERVER_TOOLS } from '../../src/clients/list-tools.js';
import { fixtureEvents, fixtureServer, tempDir, textOf, waitFor, workbenchErrorCode } from '../helpers/workbench-process.js';

// README "Tool names and calls" and "Downstream servers": a server whose tool list is broken in part — thousands of
// pages, tools with odd names, schemas that are not objects or that ajv cannot compile — costs only its bad tools.
// The healthy server beside it and the server's own good tools keep working, and open_toolbox says what it left out
// (servers_partial) so the model knows the list it sees is not the whole one.

interface Partial {
  server: string;
  note: string;
}
interface Opened {
  servers_connected: string[];
  servers_partial?: Partial[];
  tools: { name: string }[];
}

const LONG = 'y'.repeat(200);
const cycle = { type: 'object', $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, properties: { v: { $ref: '#/$defs/a' } } };
const defs = [
  { name: 'a.b', inputSchema: { type: 'object' } },
  { name: 'a/b', inputSchema: { type: 'object' } },
  { name: 'has space', inputSchema: { type: 'object' } },
  { name: 'ünï😀', inputSchema: { type: 'object' } },
  { name: LONG, inputSchema: { type: 'object' } },
  { name: 'string_schema', inputSchema: { type: 'string' } },
  { name: 'no_schema' },
  { name: 'cycle', inputSchema: cycle },
  { name: 'self_ref', inputSchema: { type: 'object', properties: { v: { $ref: '#/properties/v' } } } },
  { name: 'bad_keyword', inputSchema: { type: 'object', properties: { v: { type: 'nonsense' } } } },
  { name: 'bad_pattern', inputSchema: { type: 'object', properties: { v: { type: 'string', pattern: '([' } } } },
];

const combos: [Over, EraName][] = [['stdio', 'legacy'], ['stdio', 'modern'], ['http', 'modern']];

async function open(wb: EraWorkbench): Promise<Opened> {
  const result = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'tb', detail: 'index' } })) as CallToolResult;
  assert.notEqual(result.isError, true, textOf(result));
  return result.structuredContent as unknown as Opened;
}

async function use(wb: EraWorkbench, tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: tool, arguments: args } })) as CallToolResult;
}

for (const [over, era] of combos) {
  describe(`a server with broken tools beside a healthy one (${over}, ${era} client)`, () => {
    it('thousands of pages: the listing stops at 1,000 pages and open_toolbox says the list is partial', { timeout: 180_000 }, async () => {
      const config = { toolboxes: { tb: { mcpServers: { good: fixtureServer('--name', 'good'), many: fixtureServer('--name', 'many', '--tools', '3000', '--page-size', '2') } } } };
      const wb = await startEra(over, era, config);
      try {
        // A thousand pages take longer than open_toolbox's wait on a loaded machine: until both are connected.
        let opened: Opened = await open(wb);
        await waitFor(async () => (opened = await open(wb)).servers_connected.length === 2, { timeoutMs: 120_000, what: 'both servers to connect' });
        assert.deepEqual([...opened.servers_connected].sort(), ['good', 'many']);
        const partial = opened.servers_partial?.find((p) => p.server === 'many');
        assert.ok(partial, JSON.stringify(opened.servers_partial));
        assert.match(partial.note, /1000 pages/);
        assert.match(partial.note, /2000 tools/);
        assert.equal(opened.servers_partial?.length, 1, 'the healthy server is not partial');
        assert.equal(textOf(await use(wb, 'tb__good__echo', { text: 'still here' })), 'still here');
        assert.equal(textOf(await use(wb, 'tb__many__gen_0007')), 'gen_0007');
      } finally {
        await wb.close();
      }
    });

    it(`more than ${MAX_SERVER_TOOLS} tools, on one page or on pages of 5,000: the rest are left out and open_toolbox says so`, { timeout: 240_000 }, async () => {
      const { dir, cleanup } = await tempDir('wb-many-tools-');
      const logFile = join(dir, 'paged.log');
      const servers = {
        one: fixtureServer('--name', 'one', '--tools', '12000'),
        paged: fixtureServer('--name', 'paged', '--tools', '12000', '--page-size', '5000', '--log', logFile),
      };
      const wb = await startEra(over, era, { toolboxes: { tb: { mcpServers: servers } } });
      try {
        let opened: Opened | undefined;
        await waitFor(async () => (opened = await open(wb)).servers_connected.length === 2, { timeoutMs: 180_000, what: 'both servers to connect' });
        for (const server of ['one', 'paged']) {
          const partial = opened!.servers_partial?.find((p) => p.server === server);
          assert.ok(partial, JSON.stringify(opened!.servers_partial));
          assert.match(partial.note, /more than 10000 tools, so only the 10000 tools among its first 10000 are shown/);
          assert.equal(textOf(await use(wb, `tb__${server}__gen_09000`)), 'gen_09000');
          const refused = await use(wb, `tb__${server}__gen_11999`);
          assert.equal(workbenchErrorCode(refused), 'TOOL_NOT_FOUND', textOf(refused));
        }
        // The paged server's third page was never asked for.
        const cursors = (await fixtureEvents(logFile)).filter((e) => e.event === 'list').map((e) => e.cursor);
        assert.ok(!cursors.includes('fixture-page:10000'), JSON.stringify(cursors));
      } finally {
        await wb.close();
        await cleanup();
      }
    });

    it('odd names and uncompilable schemas still work; tools without an object schema are named with why, in open_toolbox and use_tool', { timeout: 120_000 }, async () => {
      const bad = { ...fixtureServer('--name', 'bad'), env: { FIXTURE_TOOL_DEFS: JSON.stringify(defs) } };
      const wb = await startEra(over, era, { toolboxes: { tb: { mcpServers: { good: fixtureServer('--name', 'good'), bad } } } });
      try {
        const opened = await open(wb);
        assert.deepEqual([...opened.servers_connected].sort(), ['bad', 'good']);
        const partial = opened.servers_partial ?? [];
        assert.deepEqual(partial.map((p) => p.server), ['bad'], JSON.stringify(partial));
        assert.match(partial[0]!.note, /"string_schema"[^;]*not "object"/);
        assert.match(partial[0]!.note, /"no_schema"[^;]*no inputSchema/);
        assert.equal(textOf(await use(wb, 'tb__good__echo', { text: 'healthy' })), 'healthy');
        assert.equal(textOf(await use(wb, 'tb__bad__echo', { text: 'good tool of the bad server' })), 'good tool of the bad server');
        for (const name of ['a.b', 'a/b', 'has space', 'ünï😀', LONG, 'cycle', 'self_ref', 'bad_keyword', 'bad_pattern']) {
          const result = await use(wb, `tb__bad__${name}`, { v: 'x' });
          assert.equal(textOf(result), name, `${name}: ${textOf(result)}`);
        }
        // A left-out tool is not "unknown": the answer says it exists, why it cannot be called, and what to do.
        for (const [name, why] of [['tb__bad__string_schema', /inputSchema of type "string", not "object"/], ['string_schema', /inputSchema of type "string"/], ['tb__bad__no_schema', /has no inputSchema object/]] as const) {
          const refused = await use(wb, name);
          assert.equal(refused.isError, true, textOf(refused));
          assert.equal(workbenchErrorCode(refused), 'TOOL_NOT_FOUND', textOf(refused));
          assert.match(textOf(refused), /exists on server "bad" of toolbox "tb", but it was left out of the tools offered and cannot be called/);
          assert.match(textOf(refused), why);
          assert.match(textOf(refused), /maintainers/);
          assert.doesNotMatch(textOf(refused), /^Unknown tool/);
        }
      } finally {
        await wb.close();
      }
    });
  });
}
