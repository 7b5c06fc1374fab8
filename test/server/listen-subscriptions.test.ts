import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { startEra, until, type Over } from '../helpers/era-workbench.js';
import { fixtureEvents, fixtureServer, tempDir } from '../helpers/workbench-process.js';

// Resource subscriptions of a client of MCP 2026-07-28 (README "Resources, prompts and completions"): the URIs its
// subscriptions/listen stream names are subscribed on the owning downstream server, that server's
// notifications/resources/updated reach the stream, and closing the stream unsubscribes them.

describe('a modern client subscribes to resources on subscriptions/listen', () => {
  for (const over of ['stdio', 'http'] as const satisfies readonly Over[]) {
    test(`over ${over}`, async () => {
      const { dir, cleanup } = await tempDir('wb-listen-');
      const log = join(dir, 'a.jsonl');
      const updated: string[] = [];
      const config = { toolboxes: { lab: { mcpServers: { a: fixtureServer('--resources', '--name', 'a', '--log', log) } } } };
      const wb = await startEra(over, 'modern', config, (client) => {
        client.setNotificationHandler('notifications/resources/updated', (n) => void updated.push(n.params.uri));
      });
      const events = async (name: string): Promise<unknown[]> => (await fixtureEvents(log)).filter((e) => e.event === name).map((e) => e.uri);
      try {
        const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'lab' } })) as CallToolResult;
        assert.notEqual(opened.isError, true, JSON.stringify(opened));
        const subscription = await wb.client.listen({ resourceSubscriptions: ['fixture://a/own'] });
        assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, ['fixture://a/own'], 'the workbench honours resource subscriptions');
        let subscribed = false;
        assert.ok(await until(() => (void events('subscribe').then((uris) => (subscribed = uris.includes('fixture://a/own'))), subscribed)), 'subscribed downstream');

        const touch = async (uri: string): Promise<void> => {
          const result = (await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'lab', tool_name: 'touch', arguments: { uri } } })) as CallToolResult;
          assert.notEqual(result.isError, true, JSON.stringify(result));
        };
        await touch('fixture://a/other');
        await touch('fixture://a/own');
        assert.ok(await until(() => updated.includes('fixture://a/own')), `heard ${JSON.stringify(updated)}; stderr: ${wb.stderr().slice(-2000)}`);
        assert.ok(!updated.includes('fixture://a/other'), 'a URI the stream does not name is not delivered');

        await subscription.close();
        let unsubscribed = false;
        assert.ok(await until(() => (void events('unsubscribe').then((uris) => (unsubscribed = uris.includes('fixture://a/own'))), unsubscribed)), 'unsubscribed downstream');
      } finally {
        await wb.close();
        await cleanup();
      }
    });
  }
});
