import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ERAS, startEra, until, type EraName, type EraWorkbench, type Over } from '../helpers/era-workbench.js';
import { everythingServer } from '../helpers/workbench-process.js';

// Resources, prompts and completions of the reference server (server-everything) through the built workbench, for
// clients of both protocol eras over stdio and HTTP, compared with the same requests made to the server directly
// (README "Resources, prompts and completions").

const CONFIG = { toolboxes: { demo: { mcpServers: { everything: everythingServer() } } } };
const SOURCE = 'mcp-workbench/source';

/** The dynamic resources of server-everything carry the time they were made: masked before comparing. */
function masked(value: unknown): unknown {
  const time = /\d{1,2}:\d{2}:\d{2}(\s?[AP]M)?/g;
  return JSON.parse(
    JSON.stringify(value, (key, v: unknown) => {
      if (key === 'blob' && typeof v === 'string') return Buffer.from(v, 'base64').toString('utf8').replace(time, 'TIME');
      return typeof v === 'string' ? v.replace(time, 'TIME') : v;
    }),
  );
}

/** A listed item without the workbench's source in `_meta` (and without `_meta` when nothing else was in it). */
function withoutSource(item: { _meta?: Record<string, unknown> }): unknown {
  const { _meta, ...rest } = item;
  const { [SOURCE]: _source, ...meta } = _meta ?? {};
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}

/** The parts of a result the server wrote (the workbench's serverInfo stamp on a modern answer aside). */
function body<T extends Record<string, unknown>>(result: T, key: keyof T): unknown {
  return result[key];
}

async function useTool(client: Client, tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'demo', tool_name: tool, arguments: args } })) as CallToolResult;
}

let direct: Client;
before(async () => {
  direct = new Client({ name: 'direct', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'legacy' } });
  const server = everythingServer();
  await direct.connect(new StdioClientTransport({ command: server.command, args: server.args, stderr: 'ignore' }), { prior: { kind: 'legacy' } });
});
after(async () => {
  await direct?.close();
});

/** Resources: links a tool returned read back as a direct read does; lists and templates as the server lists them. */
async function resourcesJourney(client: Client, era: EraName, changes: () => number): Promise<void> {
  assert.deepEqual((await client.listResources()).resources, [], 'nothing is listed before a toolbox is open');
  const links = await useTool(client, 'get-resource-links', { count: 3 });
  assert.notEqual(links.isError, true, JSON.stringify(links));
  if (era === 'legacy') assert.ok(await until(() => changes() > 0), 'resources/list_changed when the toolbox opened');
  const uris = links.content.flatMap((c) => (c.type === 'resource_link' ? [c.uri] : []));
  assert.equal(uris.length, 3);
  for (const uri of uris) {
    const through = await client.readResource({ uri });
    assert.deepEqual(masked(body(through, 'contents')), masked((await direct.readResource({ uri })).contents), uri);
    assert.equal(through.contents[0]!.uri, uri, 'the URI is never rewritten');
  }
  const listed = await client.listResources({}, { cacheMode: 'refresh' } as never);
  const directList = await direct.listResources();
  assert.deepEqual(listed.resources.map(withoutSource), directList.resources);
  for (const item of listed.resources) assert.deepEqual(item._meta?.[SOURCE], { toolbox: 'demo', server: 'everything' });
  if (era === 'modern') {
    // Built from a handshake-era server's pages, which carry no caching hint: nothing may be kept.
    const hinted = listed as typeof listed & { ttlMs?: number; cacheScope?: string };
    assert.equal(hinted.ttlMs, 0);
    assert.equal(hinted.cacheScope, 'private');
  }
  const fixed = directList.resources[0]!.uri;
  assert.deepEqual((await client.readResource({ uri: fixed })).contents, (await direct.readResource({ uri: fixed })).contents, 'a static resource, byte for byte');
  const templates = await client.listResourceTemplates();
  assert.deepEqual(templates.resourceTemplates.map(withoutSource), (await direct.listResourceTemplates()).resourceTemplates);
  const made = templates.resourceTemplates[0]!.uriTemplate.replace('{resourceId}', '7');
  assert.deepEqual(masked((await client.readResource({ uri: made })).contents), masked((await direct.readResource({ uri: made })).contents), 'a URI of a template');
}

/** Prompts listed under their workbench names and rendered as the server renders them; completions routed. */
async function promptsJourney(client: Client): Promise<void> {
  const directPrompts = (await direct.listPrompts()).prompts;
  const listed = (await client.listPrompts({}, { cacheMode: 'refresh' } as never)).prompts;
  assert.deepEqual(
    listed.map((p) => p.name),
    directPrompts.map((p) => `demo__everything__${p.name}`),
  );
  assert.deepEqual(listed.map((p) => withoutSource({ ...p, name: p.name.replace('demo__everything__', '') } as never)), directPrompts);
  const args: Record<string, Record<string, string>> = {
    'simple-prompt': {},
    'args-prompt': { city: 'Paris', state: 'Texas' },
    'completable-prompt': { department: 'Engineering', name: 'Alice' },
    'resource-prompt': { resourceType: 'Text', resourceId: '2' },
  };
  for (const prompt of directPrompts) {
    const through = await client.getPrompt({ name: `demo__everything__${prompt.name}`, arguments: args[prompt.name] ?? {} });
    const straight = await direct.getPrompt({ name: prompt.name, arguments: args[prompt.name] ?? {} });
    assert.deepEqual(masked(through.messages), masked(straight.messages), prompt.name);
  }
  const department = { ref: { type: 'ref/prompt' as const, name: 'completable-prompt' }, argument: { name: 'department', value: 'S' } };
  const completed = await client.complete({ ...department, ref: { ...department.ref, name: 'demo__everything__completable-prompt' } });
  assert.deepEqual(completed.completion, (await direct.complete(department)).completion);
  const withContext = { argument: { name: 'name', value: '' }, context: { arguments: { department: 'Sales' } } };
  const named = await client.complete({ ref: { type: 'ref/prompt', name: 'demo__everything__completable-prompt' }, ...withContext });
  assert.deepEqual(named.completion.values, ['David', 'Eve', 'Frank']);
  const template = (await direct.listResourceTemplates()).resourceTemplates[0]!.uriTemplate;
  const variable = { ref: { type: 'ref/resource' as const, uri: template }, argument: { name: 'resourceId', value: '1' } };
  assert.deepEqual((await client.complete(variable)).completion, (await direct.complete(variable)).completion);
  await assert.rejects(client.getPrompt({ name: 'demo__nope__x' }), /no server "nope".*prompts\/list/s);
}

for (const over of ['stdio', 'http'] as const satisfies readonly Over[]) {
  describe(`server-everything's resources, prompts and completions over ${over}`, () => {
    for (const era of ERAS) {
      test(`a client of the ${era} era`, async () => {
        let changes = 0;
        const wb: EraWorkbench = await startEra(over, era, CONFIG, (client) => {
          client.setNotificationHandler('notifications/resources/list_changed', () => void changes++);
        });
        try {
          const caps = wb.client.getServerCapabilities();
          assert.ok(caps?.resources && caps.prompts && caps.completions, JSON.stringify(caps));
          // Both eras subscribe: with resources/subscribe, or by naming URIs on a subscriptions/listen stream.
          assert.equal(caps.resources.subscribe, true);
          await resourcesJourney(wb.client, era, () => changes);
          await promptsJourney(wb.client);
        } finally {
          await wb.close();
        }
      });
    }
  });
}
