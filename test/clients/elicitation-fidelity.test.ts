import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, type CallToolResult, type ClientCapabilities } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ERAS, startEra } from '../helpers/era-workbench.js';
import { everythingServer } from '../helpers/workbench-process.js';

// What a downstream server asks the user reaches the client as the server asked it (README "Elicitation"): a form's
// schema with its titles, defaults and enums untouched, URL-mode elicitation relayed to a client that declares it,
// and the client's answer back unchanged — compared with the same request made to the server directly.

const CAPABILITIES: ClientCapabilities = { elicitation: { form: {}, url: {} } };
const URL_ARGS = { url: 'https://example.com/consent', message: 'Open this page to continue' };

type Asked = Record<string, unknown>[];

/** A client that records every elicitation request it gets and accepts it with fixed content. */
function recording(client: Client, asked: Asked): void {
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params as Record<string, unknown>);
    return request.params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada' } };
  });
}

/** Request params without what differs per call by design (a fresh elicitation id). */
function comparable(params: Record<string, unknown>): Record<string, unknown> {
  const { elicitationId: _id, ...rest } = params;
  return rest;
}

const directlyAsked: Asked = [];
const directResults: CallToolResult[] = [];
let direct: Client;

before(async () => {
  direct = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: CAPABILITIES, versionNegotiation: { mode: 'legacy' } });
  recording(direct, directlyAsked);
  const server = everythingServer();
  await direct.connect(new StdioClientTransport({ command: server.command, args: server.args, stderr: 'ignore' }), { prior: { kind: 'legacy' } });
  directResults.push((await direct.callTool({ name: 'trigger-elicitation-request', arguments: {} })) as CallToolResult);
  directResults.push((await direct.callTool({ name: 'trigger-url-elicitation', arguments: URL_ARGS })) as CallToolResult);
});
after(async () => {
  await direct?.close();
});

describe('elicitation requests reach the client as the server sent them', () => {
  for (const era of ERAS) {
    test(`a ${era} client over stdio gets the same form and URL requests as a direct client`, async () => {
      const asked: Asked = [];
      const wb = await startEra('stdio', era, { toolboxes: { demo: { mcpServers: { everything: everythingServer() } } } }, (client) => recording(client, asked), CAPABILITIES);
      try {
        const call = (tool: string, args: Record<string, unknown>): Promise<CallToolResult> =>
          wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'demo', tool_name: tool, arguments: args } }) as Promise<CallToolResult>;
        const form = await call('trigger-elicitation-request', {});
        assert.notEqual(form.isError, true, JSON.stringify(form));
        const url = await call('trigger-url-elicitation', URL_ARGS);
        assert.notEqual(url.isError, true, JSON.stringify(url));
        assert.equal(asked.length, 2);
        assert.deepEqual(asked[0], directlyAsked[0], 'the form request, schema and all');
        const schema = (asked[0]!.requestedSchema as { properties: Record<string, Record<string, unknown>> }).properties;
        assert.ok(Object.values(schema).some((p) => p.default !== undefined), 'defaults kept');
        assert.ok(Object.values(schema).some((p) => p.enum !== undefined || p.oneOf !== undefined || p.items !== undefined), 'choices kept');
        assert.deepEqual(comparable(asked[1]!), comparable(directlyAsked[1]!), 'the URL-mode request');
        assert.equal(asked[1]!.mode, 'url');
        // The answer went back unchanged: the tool reports what the direct call reported.
        assert.deepEqual(form.content, directResults[0]!.content);
      } finally {
        await wb.close();
      }
    });
  }
});
