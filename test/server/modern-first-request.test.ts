import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';
import { startEra, until, type Over } from '../helpers/era-workbench.js';
import { everythingServer, filesystemServer, tempDir, textOf } from '../helpers/workbench-process.js';
import { logLines } from '../helpers/log-lines.js';

// A client of MCP 2026-07-28 declares its capabilities on every request (README "Serving over HTTP", "Capabilities"):
// whichever request first starts a server — a prompt, a completion, not only a tool call — the server is told them.
// server-everything lists its sampling, elicitation and roots tools only to a client that declares those.

const CAPABILITIES = { sampling: {}, elicitation: { form: {} }, roots: {} };

function answering(client: Client): void {
  client.setRequestHandler('sampling/createMessage', () => ({ role: 'assistant', content: { type: 'text', text: 'sampled here' }, model: 'test' }));
  client.setRequestHandler('elicitation/create', () => ({ action: 'decline' }));
  client.setRequestHandler('roots/list', () => ({ roots: [] }));
}

describe("a 2026-07-28 client's capabilities reach the server its first request starts, whatever that request is", () => {
  for (const over of ['stdio', 'http'] as const satisfies readonly Over[]) {
    for (const first of ['prompts/get', 'completion/complete'] as const) {
      test(`over ${over}, first ${first}`, async () => {
        const config = { toolboxes: { ev: { mcpServers: { everything: everythingServer() } } } };
        const wb = await startEra(over, 'modern', config, answering, CAPABILITIES);
        try {
          if (first === 'prompts/get') await wb.client.getPrompt({ name: 'ev__everything__simple-prompt' });
          else await wb.client.complete({ ref: { type: 'ref/prompt', name: 'ev__everything__completable-prompt' }, argument: { name: 'department', value: '' } });
          const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'ev' } })) as CallToolResult;
          const names = ((opened.structuredContent as { tools?: { original_name: string }[] }).tools ?? []).map((t) => t.original_name);
          for (const tool of ['trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list']) assert.ok(names.includes(tool), `${tool} listed: ${names.join(', ')}`);
          const sampled = (await wb.client.callTool({
            name: 'use_tool',
            arguments: { toolbox_name: 'ev', tool_name: 'trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } },
          })) as CallToolResult;
          assert.notEqual(sampled.isError, true, textOf(sampled));
          assert.match(textOf(sampled), /sampled here/);
        } finally {
          await wb.close();
        }
      });
    }
  }
});

test('over HTTP, first a subscriptions/listen stream naming a resource of a shared server', async () => {
  // The stream subscribes on the server before any other request: the connection it makes is the client's set's.
  const config = { toolboxes: { ev: { mcpServers: { everything: { ...everythingServer(), shared: true } } } } };
  const wb = await startEra('http', 'modern', config, answering, CAPABILITIES);
  try {
    const listening = await wb.client.listen({ resourceSubscriptions: ['demo://resource/static/document/architecture.md'] });
    const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'ev' } })) as CallToolResult;
    const names = ((opened.structuredContent as { tools?: { original_name: string }[] }).tools ?? []).map((t) => t.original_name);
    assert.ok(names.includes('trigger-sampling-request'), names.join(', '));
    await listening.close();
  } finally {
    await wb.close();
  }
});

describe('a server that asks a 2026-07-28 client for roots outside of any call', () => {
  for (const over of ['stdio', 'http'] as const satisfies readonly Over[]) {
    test(`over ${over}: refused, and said in the log`, async () => {
      const { dir, cleanup } = await tempDir('wb-modern-roots-');
      const root = join(dir, 'served');
      await mkdir(root);
      // server-filesystem asks its client for roots as soon as it is initialized, outside of any call.
      const config = { toolboxes: { dev: { mcpServers: { filesystem: filesystemServer(root) } } } };
      const wb = await startEra(over, 'modern', config, answering, CAPABILITIES, { env: { WORKBENCH_LOG_FORMAT: 'json' } });
      try {
        const listed = (await wb.client.callTool({
          name: 'use_tool',
          arguments: { toolbox_name: 'dev', tool_name: 'list_allowed_directories', arguments: {} },
        })) as CallToolResult;
        assert.notEqual(listed.isError, true, textOf(listed));
        const said = (): ReturnType<typeof logLines> => logLines(wb.stderr()).filter((l) => l.fields.event === 'request_unrelayable');
        assert.ok(await until(() => said().length > 0), wb.stderr());
        assert.deepEqual({ level: said()[0]!.level, server: said()[0]!.fields.server, method: said()[0]!.fields.method }, { level: 'warn', server: 'dev/filesystem', method: 'roots/list' });
      } finally {
        await wb.close();
        await cleanup();
      }
    });
  }
});
