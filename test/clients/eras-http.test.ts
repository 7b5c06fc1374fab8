import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TRANSPORTS } from '../helpers/both-transports.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { startModernHttp } from '../helpers/http-servers.js';
import { startWorkbench, textOf } from '../helpers/workbench-process.js';

// A modern-only (2026-07-28) downstream server over Streamable HTTP: the SDK's era probe picks the modern era over
// HTTP, calls carry the `_meta` envelope, and its input requests reach the (legacy, SDK v1) client of the workbench.



for (const transport of TRANSPORTS) {
  describe(`a modern-only Streamable HTTP server downstream, workbench over ${transport}`, () => {
    it('is connected in the modern era; echo and an elicitation round trip work', async () => {
      const server = await startModernHttp();
      const config = { toolboxes: { web: { mcpServers: { modern: { type: 'http', url: server.url } } } } };
      const caps = { capabilities: { elicitation: {} } };
      let close: () => Promise<void>;
      let client;
      if (transport === 'stdio') {
        const wb = await startWorkbench(config, { clientCapabilities: caps });
        client = wb.client;
        close = wb.close;
      } else {
        const wb = await startHttpWorkbench(config, ['--http', '0']);
        const session = await wb.connect({}, caps);
        client = session.client;
        close = async () => {
          await session.close().catch(() => {});
          await wb.stop();
        };
      }
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { answer: 'over http' } }));
      const use = (tool: string, args: Record<string, unknown>) =>
        client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'web', tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
      try {
        const echoed = await use('web__modern__echo', { text: 'hi' });
        assert.equal(textOf(echoed), 'echo: hi', textOf(echoed));
        const asked = await use('web__modern__ask', { question: 'really?' });
        assert.equal(textOf(asked), 'answer: over http', textOf(asked));
      } finally {
        await close();
        await server.close();
      }
    });
  });
}
