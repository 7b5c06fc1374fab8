import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer, tempDir, textOf, waitFor } from '../helpers/workbench-process.js';

// Two users (two tokens) of one `serve --http`, with clients of both eras (README "Serving over HTTP", "Files of each
// user", "Catalog cache"): a `${user:…}` server's list never reaches the other user, through a toolset, a search of
// every toolbox or a cache file left by an earlier run; a `shared: true` server's requests and log messages reach a
// session only while its calls are the only ones in flight there, whatever era each client speaks.

const TOKEN_A = 'alice-0123456789abcdef0123456789abcdef';
const TOKEN_B = 'bob-0123456789abcdef0123456789abcdef0123';
const TOKENS = { WORKBENCH_TOKEN: `${TOKEN_A},${TOKEN_B}` };
const LEVEL = 'io.modelcontextprotocol/logLevel';
type Era = 'modern' | 'legacy';

const userId = (token: string): string => createHash('sha256').update(token).digest('hex').slice(0, 16);

/** A client of `era` for `token`; what it is asked (sampling) and the log messages it gets are pushed to `heard`. */
async function user(url: string, token: string, era: Era, heard: string[]): Promise<Client> {
  const client = new Client({ name: token.slice(0, 5), version: '1.0.0' }, { capabilities: { sampling: {} }, versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
  client.setRequestHandler('sampling/createMessage', () => {
    heard.push('sampled');
    return { role: 'assistant', content: { type: 'text', text: `sampled by ${token.slice(0, 5)}` }, model: 'test' };
  });
  client.setNotificationHandler('notifications/message', (n) => void heard.push(String(n.params.data)));
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
  return client;
}

const open = async (c: Client, args: Record<string, unknown>): Promise<string> => JSON.stringify(await c.callTool({ name: 'open_toolbox', arguments: args }));

/** use_tool on toolbox `web`, asking (a modern client) for the call's log messages. */
const use = (c: Client, server: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> =>
  c.callTool({ name: 'use_tool', arguments: { toolbox_name: 'web', tool_name: `web__${server}__${tool}`, arguments: args }, _meta: { [LEVEL]: 'debug' } }, { signal, timeout: 60_000 }) as Promise<CallToolResult>;

describe("a ${user:…} server's tools stay with their user", () => {
  const config = {
    toolboxes: {
      lab: { mcpServers: { own: { ...fixtureServer(), env: { FIXTURE_EXTRA_TOOLS: 'ledger_${user:id}' } } } },
      other: { mcpServers: { plain: fixtureServer() } },
    },
    toolsets: { quick: { description: 'Quick tools', tools: ['lab__own__*', 'other__plain__echo'] } },
  };
  for (const era of ['modern', 'legacy'] as const) {
    test(`opened by both users at once through a toolset, then searched from the cache by the other (${era})`, async () => {
      const { dir, cleanup } = await tempDir();
      const env = { ...TOKENS, MCP_WORKBENCH_CACHE_DIR: join(dir, 'cache') };
      const [idA, idB] = [userId(TOKEN_A), userId(TOKEN_B)];
      let wb = await startHttpWorkbench(config, ['--http', '0'], env);
      try {
        const a = await user(wb.url, TOKEN_A, era, []);
        const b = await user(wb.url, TOKEN_B, era, []);
        const [seenA, seenB] = await Promise.all([open(a, { toolbox_name: 'quick' }), open(b, { toolbox_name: 'quick' })]);
        assert.match(seenA, new RegExp(idA));
        assert.doesNotMatch(seenA, new RegExp(idB));
        assert.match(seenB, new RegExp(idB));
        assert.doesNotMatch(seenB, new RegExp(idA));
        await Promise.allSettled([a.close(), b.close()]);
        await wb.stop();
        // A new run on the same cache: user B's first answers come from what the cache holds for B, never A's list.
        wb = await startHttpWorkbench(config, ['--http', '0'], env);
        const later = await user(wb.url, TOKEN_B, era, []);
        try {
          for (const args of [{ query: 'ledger' }, { toolbox_name: 'quick', query: 'ledger' }, { toolbox_name: 'other', query: 'ledger' }, { toolbox_name: 'quick' }, { toolbox_name: 'lab' }]) {
            const answer = await open(later, args);
            assert.doesNotMatch(answer, new RegExp(idA), `${JSON.stringify(args)}: ${answer.slice(0, 500)}`);
          }
        } finally {
          await later.close();
        }
      } finally {
        await wb.stop();
        await cleanup();
      }
    });
  }
});

describe('a "shared" server asked by one user while another user\'s call is in flight there', () => {
  for (const [eraA, eraB] of [['modern', 'modern'], ['modern', 'legacy'], ['legacy', 'modern']] as const) {
    test(`refuses its request and keeps its log message from both; alone, each user hears only its own (${eraA} A, ${eraB} B)`, async () => {
      const { dir, cleanup } = await tempDir();
      const log = join(dir, 'shared.log');
      const servers = { shared: { ...fixtureServer('--odd', '--log', log), shared: true }, own: fixtureServer('--odd') };
      const wb = await startHttpWorkbench({ toolboxes: { web: { mcpServers: servers } } }, ['--http', '0'], TOKENS);
      const [heardA, heardB] = [[] as string[], [] as string[]];
      try {
        const a = await user(wb.url, TOKEN_A, eraA, heardA);
        const b = await user(wb.url, TOKEN_B, eraB, heardB);
        const abort = new AbortController();
        const hanging = Promise.all([use(a, 'shared', 'hang', {}, abort.signal), use(a, 'own', 'hang', {}, abort.signal)]).catch(() => undefined);
        assert.ok(await waitFor(async () => (await readFile(log, 'utf8').catch(() => '')).includes('"tool":"hang"'), 30_000), "a's call is in flight");
        const asked = await use(b, 'shared', 'ask', { kind: 'sampling' });
        assert.match(textOf(asked), /refused sampling\/createMessage .*calls from 2 client sessions/);
        await use(b, 'shared', 'log', { message: 'b-while-a-calls' });
        await use(b, 'own', 'log', { message: 'b-own' });
        abort.abort();
        await hanging;
        assert.match(textOf(await use(b, 'shared', 'ask', { kind: 'sampling' })), /sampled by bob-0/);
        await use(b, 'shared', 'log', { message: 'b-alone' });
        await use(a, 'shared', 'log', { message: 'a-alone' });
        assert.ok(await waitFor(() => heardA.includes('a-alone') && heardB.includes('b-alone'), 15_000), JSON.stringify({ heardA, heardB }));
        assert.deepEqual(heardA, ['a-alone']);
        assert.deepEqual(heardB, ['b-own', 'sampled', 'b-alone']);
        await Promise.allSettled([a.close(), b.close()]);
      } finally {
        await wb.stop();
        await cleanup();
      }
    });
  }
});
