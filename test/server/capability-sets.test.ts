import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/client';
import { capabilitiesKey, relayableCapabilities } from '../../src/clients/capabilities-key.js';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { fixtureServer } from '../helpers/workbench-process.js';

/**
 * Downstream connections and cached lists are shared per set of client capabilities (README "Serving over HTTP",
 * "Catalog cache"): only what the spec defines counts, so made-up members inside a capability neither split
 * connections (one client could otherwise start a server per request) nor reach a downstream server.
 */

const junk = (i: number): ClientCapabilities => ({ sampling: { nonce: i } } as unknown as ClientCapabilities);

describe('capability sets', () => {
  it('keys only what the spec defines: made-up members are dropped, an empty elicitation is its form mode', () => {
    assert.equal(capabilitiesKey(junk(1)), capabilitiesKey(junk(2)));
    assert.equal(capabilitiesKey(junk(1)), capabilitiesKey({ sampling: {} }));
    assert.equal(capabilitiesKey({ elicitation: {} }), capabilitiesKey({ elicitation: { form: {} } }));
    assert.notEqual(capabilitiesKey({ elicitation: { form: {} } }), capabilitiesKey({ elicitation: { url: {} } }));
    assert.notEqual(capabilitiesKey({ sampling: {} }), capabilitiesKey({ sampling: { tools: {} } }));
    assert.notEqual(capabilitiesKey({ sampling: {} }), capabilitiesKey({}));
    assert.notEqual(capabilitiesKey({ roots: {} }), capabilitiesKey({ roots: { listChanged: true } }));
    // No downstream server is told of tasks, so they are no reason for a connection of its own.
    assert.equal(capabilitiesKey({ sampling: {}, tasks: { list: {}, requests: { sampling: { createMessage: {} } } } }), capabilitiesKey({ sampling: {} }));
    assert.deepEqual(relayableCapabilities({ sampling: { tools: { x: 1 } }, roots: { listChanged: true, extra: 1 }, experimental: { a: {} } } as unknown as ClientCapabilities), {
      sampling: { tools: {} },
      roots: { listChanged: true },
    });
  });

  for (const era of ERAS) {
    it(`${era} clients whose capabilities differ only in made-up members share one downstream server; real differences do not`, async () => {
      // shared: one process per capability set for every session (both eras); a modern client's own servers are per
      // token × capability set too.
      const config = { toolboxes: { t: { mcpServers: { own: fixtureServer(), shared: { ...fixtureServer(), shared: true } } } } };
      // --log-level debug: each modern client's opening is a debug line (README "Command line", Logs).
      const wb = await startEra('http', era, config, undefined, junk(0), { args: ['--metrics', '--log-level', 'debug'] });
      try {
        const pidOf = async (client: typeof wb.client, server: string): Promise<number> => {
          const result = (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 't', tool_name: `t__${server}__pid`, arguments: {} } })) as CallToolResult;
          assert.notEqual(result.isError, true, JSON.stringify(result));
          return (result.structuredContent as { pid: number }).pid;
        };
        const first = await pidOf(wb.client, 'shared');
        for (let i = 1; i <= 4; i++) assert.equal(await pidOf(await wb.another(junk(i)), 'shared'), first, `client ${i}`);
        if (era === 'modern') {
          const own = await pidOf(wb.client, 'own');
          assert.equal(await pidOf(await wb.another(junk(9)), 'own'), own, 'a modern client with the same real capabilities shares its servers');
        }
        assert.notEqual(await pidOf(await wb.another({}), 'shared'), first, 'no sampling at all is another set');
        assert.equal((wb.stderr().match(/has its own downstream servers/g) ?? []).length, era === 'modern' ? 2 : 0, wb.stderr());
        // /healthz counts both kinds of client: six handshake-era sessions, or two modern capability sets
        const origin = /listening on (http:\/\/[^/\s]+)\/mcp/.exec(wb.stderr())![1]!;
        const health = (await (await fetch(`${origin}/healthz`)).json()) as { sessions: number };
        assert.equal(health.sessions, era === 'modern' ? 2 : 6);
        // the shared server runs once per capability set (two here), the modern client's own server once
        const metrics = await (await fetch(`${origin}/metrics`)).text();
        assert.match(metrics, new RegExp(`^mcp_workbench_servers_connected ${era === 'modern' ? 3 : 2}$`, 'm'), metrics);
      } finally {
        await wb.close();
      }
    });
  }
});
