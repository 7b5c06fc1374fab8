import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MODERN_ENVELOPE, rawModernStdio, rawStdio, type RawWire } from '../helpers/raw-clients.js';
import { fixtureServer } from '../helpers/workbench-process.js';

/**
 * README "Protocol eras": over stdio the client's first message picks the era of the connection. A client of MCP
 * 2026-07-28 that then sends a request whose `_meta` names another protocol version (2025-06-18) used to be served
 * as if it had named 2026-07-28; it is now refused with -32022 (Unsupported protocol version), as the SDK refuses an
 * `initialize` on that connection and as HTTP refuses such a request, naming what to do. A handshake-era connection
 * ignores the 2026-07-28 `_meta` keys of a request, as a handshake-era HTTP session does, and answers in its own era.
 */
const config = { toolboxes: { mix: { mcpServers: { old: fixtureServer() } } } };
const add = { toolbox_name: 'mix', tool_name: 'mix__old__add', arguments: { a: 1, b: 2 } };
type Reply = { id?: unknown; result?: { resultType?: string; structuredContent?: unknown }; error?: { code: number; message: string; data?: unknown } };

async function ask(wire: RawWire, id: number, method: string, params: Record<string, unknown>): Promise<Reply> {
  const answer = await wire.exchange({ jsonrpc: '2.0', id, method, params }, (messages) => messages.some((m) => (JSON.parse(m) as Reply).id === id));
  return JSON.parse(answer.find((m) => (JSON.parse(m) as Reply).id === id)!) as Reply;
}

describe('a stdio request naming another protocol version than its connection', () => {
  test('on a MCP 2026-07-28 connection is refused -32022, and the next request is served', async () => {
    const wire = await rawModernStdio(config);
    const old = { ...MODERN_ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2025-06-18' };
    try {
      assert.deepEqual((await ask(wire, 1, 'tools/call', { name: 'use_tool', arguments: add, _meta: MODERN_ENVELOPE })).result?.structuredContent, { sum: 3 });
      for (const [id, method, params] of [
        [2, 'tools/call', { name: 'use_tool', arguments: add, _meta: old }],
        [3, 'tools/list', { _meta: old }],
        [4, 'tools/call', { name: 'use_tool', arguments: add, _meta: { ...old, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }],
      ] as const) {
        const reply = await ask(wire, id, method, params);
        assert.equal(reply.error?.code, -32022, JSON.stringify(reply));
        const requested = (params._meta as Record<string, unknown>)['io.modelcontextprotocol/protocolVersion'];
        assert.deepEqual(reply.error.data, { supported: ['2026-07-28'], requested });
        assert.match(reply.error.message, new RegExp(`${requested}.*2026-07-28.*initialize`));
      }
      assert.deepEqual((await ask(wire, 5, 'tools/call', { name: 'use_tool', arguments: add, _meta: MODERN_ENVELOPE })).result?.structuredContent, { sum: 3 });
    } finally {
      await wire.close();
    }
  });

  test('on a handshake-era connection is served in the handshake era', async () => {
    const wire = await rawStdio(config);
    try {
      const call = await ask(wire, 1, 'tools/call', { name: 'use_tool', arguments: add, _meta: MODERN_ENVELOPE });
      assert.deepEqual(call.result?.structuredContent, { sum: 3 });
      assert.equal(call.result?.resultType, undefined);
      const list = await ask(wire, 2, 'tools/list', { _meta: MODERN_ENVELOPE });
      assert.ok(list.result && !('resultType' in list.result), JSON.stringify(list).slice(0, 300));
    } finally {
      await wire.close();
    }
  });
});
