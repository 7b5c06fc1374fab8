import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rawStdio } from '../helpers/raw-clients.js';
import { fixtureServer } from '../helpers/workbench-process.js';

/**
 * Arguments nested so deeply that they cannot be written as JSON for the downstream server are the caller's to fix:
 * refused as INVALID_ARGUMENTS, never reported as the tool's failure (README "Errors"). Sent as raw text, since an SDK
 * client cannot write them either.
 */
describe('arguments nested too deeply to send', () => {
  it('are INVALID_ARGUMENTS naming why, and the workbench and the server keep serving', async () => {
    const wire = await rawStdio({ toolboxes: { tb: { mcpServers: { fx: fixtureServer() } } } });
    try {
      const depth = 20_000;
      const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      const call = (id: number, args: string): string =>
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"use_tool","arguments":{"toolbox_name":"tb","tool_name":"tb__fx__throw_jsonrpc","arguments":{"code":-32001,"message":"x","data":${args}}}}}`;
      const [answer] = await wire.exchange(call(1, deep), (m) => m.some((l) => l.includes('"id":1')));
      const result = (JSON.parse(answer!) as { result: { isError?: boolean; content: { text: string }[]; _meta: Record<string, { code: string; hint?: string }> } }).result;
      assert.equal(result.isError, true);
      assert.equal(result._meta['mcp-workbench/error']!.code, 'INVALID_ARGUMENTS', result.content[0]!.text);
      assert.match(result.content[0]!.text, /nested too deeply/);
      const [after] = await wire.exchange(call(2, '{"ok":true}'), (m) => m.some((l) => l.includes('"id":2')));
      assert.match(after!, /returned a JSON-RPC error \(code -32001\): x/);
    } finally {
      await wire.close();
    }
  });
});
