import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, eraClient, type EraName } from '../helpers/era-workbench.js';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { node, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// README "Catalog cache", "What a session changed stays its own": a `shared: true` server whose tool list is private
// (SDK v2's defaults, `ttlMs: 0, cacheScope: "private"`) lists for one user. When one user's call makes it add a tool
// (tools/list_changed), the list read again holds that user's tool: it is never written to the cache, and no other
// user is shown it — not from the cache, not in a search, not after a restart. It used to be written, because the
// session that connected the shared server had no connection of its own to it.

const modern = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
const TOKENS = ['token-of-alice-0123456789', 'token-of-bob-0123456789ab'];
const GROWN = /grown_\d+/;

async function cacheText(dir: string): Promise<string> {
  const files = await readdir(dir).catch(() => [] as string[]);
  return (await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8').catch(() => '')))).join('\n');
}

async function connect(wb: HttpWorkbench, era: EraName, token: string, open: Client[]): Promise<Client> {
  const client = eraClient(era);
  await client.connect(new StreamableHTTPClientTransport(new URL(wb.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }), era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
  open.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.notEqual(result.isError, true, textOf(result));
  return result;
}

const toolNames = async (client: Client): Promise<string[]> =>
  ((await call(client, 'open_toolbox', { toolbox_name: 'dev' })).structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);

describe('a "shared" server whose list is private, after one user made it add a tool', () => {
  for (const era of ERAS) {
    it(`keeps that tool from every other user: cache, search and restart (${era} clients over HTTP)`, async () => {
      const { dir, cleanup } = await tempDir('wb-shared-private-');
      const cacheDir = join(dir, 'cache');
      const config = { toolboxes: { dev: { mcpServers: { mod: { command: node, args: [modern, '--private', '--ttl-ms', '0'], shared: true } } } } };
      const env = { WORKBENCH_TOKEN: TOKENS.join(','), MCP_WORKBENCH_CACHE_DIR: cacheDir };
      let wb = await startHttpWorkbench(config, ['--http', '0'], env);
      const open: Client[] = [];
      try {
        const alice = await connect(wb, era, TOKENS[0]!, open);
        assert.ok((await toolNames(alice)).includes('dev__mod__grow'));
        assert.ok(await waitFor(async () => (await cacheText(cacheDir)).includes('"grow"'), 10_000), 'the list as listed on connecting is cached');
        assert.match(textOf(await call(alice, 'use_tool', { toolbox_name: 'dev', tool_name: 'dev__mod__grow' })), /added grown_/);
        assert.ok(await waitFor(async () => (await toolNames(alice)).some((n) => GROWN.test(n)), 10_000), 'the user who added it sees it');

        const bob = await connect(wb, era, TOKENS[1]!, open);
        const first = await toolNames(bob);
        assert.ok(first.includes('dev__mod__grow'), first.join(', '));
        assert.ok(!first.some((n) => GROWN.test(n)), `not from the cache: ${first.join(', ')}`);
        const search = await call(bob, 'open_toolbox', { query: 'A tool added by grow' });
        assert.doesNotMatch(JSON.stringify(search.structuredContent), GROWN, 'not in a search');
        assert.doesNotMatch(await cacheText(cacheDir), GROWN, 'never written');
      } finally {
        await Promise.allSettled(open.splice(0).map((c) => c.close()));
        await wb.stop();
      }
      wb = await startHttpWorkbench(config, ['--http', '0'], env);
      try {
        const bob = await connect(wb, era, TOKENS[1]!, open);
        const names = await toolNames(bob);
        assert.ok(names.includes('dev__mod__grow') && !names.some((n) => GROWN.test(n)), `after a restart: ${names.join(', ')}`);
      } finally {
        await Promise.allSettled(open.map((c) => c.close()));
        await wb.stop();
        await cleanup();
      }
    });
  }
});

// Only a session that uses the shared connection keeps it once its list turns out private. A mere look at the servers
// before that — the session's own prompts/list (which asks every server for cached prompts), a /metrics scrape (which
// counts every session's connections) — used to bind a session to the shared connection, so a user who had never
// touched the server was later answered from the one another user's call had changed.
describe('a session that only looked at a "shared" server before its list turned out private', () => {
  for (const era of ERAS) {
    it(`gets a connection of its own, and never the tool another user's call added (${era} clients over HTTP)`, async () => {
      const { dir, cleanup } = await tempDir('wb-shared-look-');
      const config = { toolboxes: { dev: { mcpServers: { mod: { command: node, args: [modern, '--private', '--ttl-ms', '0'], shared: true } } } } };
      const wb = await startHttpWorkbench(config, ['--http', '0', '--metrics'], { WORKBENCH_TOKEN: TOKENS.join(','), MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') });
      const open: Client[] = [];
      try {
        const bob = await connect(wb, era, TOKENS[1]!, open);
        await bob.listPrompts();
        const metrics = await fetch(`${wb.origin}/metrics`, { headers: { Authorization: `Bearer ${TOKENS[1]}` } });
        assert.equal(metrics.status, 200);
        await metrics.text();

        const alice = await connect(wb, era, TOKENS[0]!, open);
        assert.ok((await toolNames(alice)).includes('dev__mod__grow'));
        assert.match(textOf(await call(alice, 'use_tool', { toolbox_name: 'dev', tool_name: 'dev__mod__grow' })), /added grown_/);
        assert.ok(await waitFor(async () => (await toolNames(alice)).some((n) => GROWN.test(n)), 10_000), 'the user who added it sees it');

        const names = await toolNames(bob);
        assert.ok(names.includes('dev__mod__grow'), names.join(', '));
        assert.ok(!names.some((n) => GROWN.test(n)), `the other user is not shown it: ${names.join(', ')}`);
      } finally {
        await Promise.allSettled(open.map((c) => c.close()));
        await wb.stop();
        await cleanup();
      }
    });
  }
});

// A shared server runs once per set of client capabilities. When a session of another set connected the server's
// other connection, every session was told "connected", and the list of the first set — which by then held a tool one
// user's call had added — was written to the cache as if just listed: the next user of that set was shown the tool.
describe('a "shared" server whose list is private, connected for a second set of client capabilities', () => {
  for (const era of ERAS) {
    it(`does not write the first set's changed list to the cache (${era} clients over HTTP)`, async () => {
      const { dir, cleanup } = await tempDir('wb-shared-sets-');
      const cacheDir = join(dir, 'cache');
      const config = { toolboxes: { dev: { mcpServers: { mod: { command: node, args: [modern, '--private', '--ttl-ms', '0'], shared: true } } } } };
      const wb = await startHttpWorkbench(config, ['--http', '0'], { WORKBENCH_TOKEN: TOKENS.join(','), MCP_WORKBENCH_CACHE_DIR: cacheDir });
      const open: Client[] = [];
      const connectWith = async (token: string, capabilities: Record<string, unknown>): Promise<Client> => {
        const client = eraClient(era, capabilities);
        await client.connect(new StreamableHTTPClientTransport(new URL(wb.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }), era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
        open.push(client);
        return client;
      };
      try {
        const bob = await connectWith(TOKENS[1]!, {});
        assert.ok((await toolNames(bob)).includes('dev__mod__grow'));
        assert.match(textOf(await call(bob, 'use_tool', { toolbox_name: 'dev', tool_name: 'dev__mod__grow' })), /added grown_/);
        assert.ok(await waitFor(async () => (await toolNames(bob)).some((n) => GROWN.test(n)), 10_000), 'the user who added it sees it');

        // Alice declares another capability: the server's other connection starts for her, and lists on connecting.
        const alice = await connectWith(TOKENS[0]!, { elicitation: { form: {} } });
        assert.ok(!(await toolNames(alice)).some((n) => GROWN.test(n)));
        assert.ok(await waitFor(async () => (await cacheText(cacheDir)).includes('"grow"'), 10_000), 'lists are cached');

        // Another user of Bob's set: a connection of its own (the list is private); its first answer may come from the cache.
        const carol = await connectWith(TOKENS[0]!, {});
        const names = await toolNames(carol);
        assert.ok(names.includes('dev__mod__grow') && !names.some((n) => GROWN.test(n)), `not shown from the cache: ${names.join(', ')}`);
        assert.doesNotMatch(await cacheText(cacheDir), GROWN, 'never written');
      } finally {
        await Promise.allSettled(open.map((c) => c.close()));
        await wb.stop();
        await cleanup();
      }
    });
  }
});
