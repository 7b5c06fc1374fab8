import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MODERN_ENVELOPE, rawModernStdio, rawStdio, type RawWire } from '../helpers/raw-clients.js';
import { fixtureServer } from '../helpers/workbench-process.js';

/**
 * README "Protocol eras": a request whose `_meta` is not an object, or whose progress token is neither a string nor a
 * number, is not a valid JSON-RPC request of MCP. Over HTTP it was answered -32600; over stdio the SDK dropped it
 * silently, so the client waited until its own timeout. Now stdio answers it -32600 with its id, as HTTP does, and
 * goes on serving.
 */
const config = { toolboxes: { mix: { mcpServers: { old: fixtureServer() } } } };
const add = { toolbox_name: 'mix', tool_name: 'mix__old__add', arguments: { a: 1, b: 2 } };

describe('a stdio request with a malformed _meta', () => {
  for (const era of ['legacy', 'modern'] as const) {
    test(`is refused with its id, and the next request is served (${era} client)`, async () => {
      const wire: RawWire = era === 'modern' ? await rawModernStdio(config) : await rawStdio(config);
      const envelope = era === 'modern' ? MODERN_ENVELOPE : {};
      try {
        for (const [id, meta] of [
          [11, null],
          [12, []],
          [13, { ...envelope, progressToken: { a: 1 } }],
        ] as const) {
          const body = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'use_tool', arguments: add, _meta: meta } };
          const answer = await wire.exchange(body, (messages) => messages.some((m) => (JSON.parse(m) as { id?: unknown }).id === id));
          const reply = JSON.parse(answer.find((m) => (JSON.parse(m) as { id?: unknown }).id === id)!) as { error?: { code: number; message: string } };
          assert.equal(reply.error?.code, -32600, JSON.stringify(reply));
          assert.match(reply.error!.message, /_meta/);
        }
        const ok = await wire.exchange({ jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'use_tool', arguments: add, _meta: envelope } }, (messages) =>
          messages.some((m) => (JSON.parse(m) as { id?: unknown }).id === 20),
        );
        assert.match(ok.join('\n'), /"sum\\":3/);
      } finally {
        await wire.close();
      }
    });
  }
});
