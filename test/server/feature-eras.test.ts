import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra, until, type Over } from '../helpers/era-workbench.js';
import { fixtureServer, node } from '../helpers/workbench-process.js';

// Resources and prompts for clients of MCP 2026-07-28 (README "Resources, prompts and completions"): list results
// carry caching hints no looser than the strictest downstream page they were built from, and a subscriptions/listen
// stream hears the list changes a handshake-era session gets as notifications.

const MODERN = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));

function modernServer(ttlMs: number): { command: string; args: string[] } {
  return { command: node, args: [MODERN, '--resources', String(ttlMs)] };
}

async function open(client: Client, toolbox: string): Promise<void> {
  const opened = (await client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: toolbox } })) as CallToolResult;
  assert.notEqual(opened.isError, true, JSON.stringify(opened));
}

type Hinted = { ttlMs?: number; cacheScope?: string };

describe('caching hints of aggregated lists', () => {
  test('no looser than the strictest downstream page: a modern server\'s ttlMs, 0 once a handshake-era server is in', async () => {
    const config = {
      toolboxes: {
        modern: { mcpServers: { m: modernServer(2_500) } },
        mixed: { mcpServers: { legacy: fixtureServer('--resources', '--name', 'legacy') } },
      },
    };
    const wb = await startEra('stdio', 'modern', config);
    try {
      await open(wb.client, 'modern');
      const resources = (await wb.client.listResources({}, { cacheMode: 'refresh' } as never)) as Awaited<ReturnType<Client['listResources']>> & Hinted;
      assert.deepEqual(resources.resources.map((r) => r.uri), ['modern://notes']);
      assert.equal(resources.ttlMs, 2_500, 'the modern server allows 2.5 s: so does the workbench');
      assert.equal(resources.cacheScope, 'private', 'the list depends on what this client opened');
      const prompts = (await wb.client.listPrompts({}, { cacheMode: 'refresh' } as never)) as Awaited<ReturnType<Client['listPrompts']>> & Hinted;
      assert.deepEqual(prompts.prompts.map((p) => p.name), ['modern__m__hello']);
      assert.equal(prompts.ttlMs, 2_500);
      const read = await wb.client.readResource({ uri: 'modern://notes' });
      assert.deepEqual(read.contents, [{ uri: 'modern://notes', mimeType: 'text/plain', text: 'modern notes' }]);

      await open(wb.client, 'mixed');
      const both = (await wb.client.listResources({}, { cacheMode: 'refresh' } as never)) as Awaited<ReturnType<Client['listResources']>> & Hinted;
      assert.equal(both.resources.length, 3);
      assert.equal(both.ttlMs, 0, 'a handshake-era page carries no hint: the whole list may not be kept');
    } finally {
      await wb.close();
    }
  });
});

describe('a modern client hears of resource and prompt list changes on subscriptions/listen', () => {
  for (const over of ['stdio', 'http'] as const satisfies readonly Over[]) {
    test(`over ${over}`, async () => {
      const heard = { resources: 0, prompts: 0 };
      const config = { toolboxes: { lab: { mcpServers: { a: fixtureServer('--resources', '--name', 'a') } } } };
      const wb = await startEra(over, 'modern', config, (client) => {
        client.setNotificationHandler('notifications/resources/list_changed', () => void heard.resources++);
        client.setNotificationHandler('notifications/prompts/list_changed', () => void heard.prompts++);
      });
      try {
        const subscription = await wb.client.listen({ resourcesListChanged: true, promptsListChanged: true });
        try {
          await open(wb.client, 'lab');
          assert.ok(await until(() => heard.resources > 0 && heard.prompts > 0), `heard ${JSON.stringify(heard)}`);
          const { resources } = await wb.client.listResources({}, { cacheMode: 'refresh' } as never);
          assert.equal(resources.length, 2);
        } finally {
          await subscription.close().catch(() => {});
        }
      } finally {
        await wb.close();
      }
    });
  }
});
