import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { ERAS, startEra, type EraName } from '../helpers/era-workbench.js';
import { node, tempDir, textOf } from '../helpers/workbench-process.js';

// README "Catalog cache": a private list is filed under a hash of the server's credentials, so it is never shown under
// other credentials. Credentials are not only in entries named like them: an inherited OPENAI_API_KEY (`inheritEnv`),
// or the user info of a `DATABASE_URL` (postgres://alice:…@db). Each case runs two workbenches on one cache
// directory: the second, with other credentials, must not be answered with the first one's list. The fixture lists one
// more tool named by MODERN_FIXTURE_EXTRA_TOOL: it stands for what the server lists for that account.

const modern = fileURLToPath(new URL('../fixtures/modern-server.mjs', import.meta.url));
const server = (extra: object): unknown => ({ toolboxes: { dev: { mcpServers: { db: { command: node, args: [modern, '--private', '--ttl-ms', '0'], ...extra } } } } });

interface Opened {
  names: string[];
  cached: boolean;
}

async function openOnce(era: EraName, config: unknown, cacheDir: string, env: Record<string, string>): Promise<Opened> {
  const wb = await startEra('stdio', era, config, undefined, {}, { env: { MCP_WORKBENCH_CACHE_DIR: cacheDir, ...env } });
  try {
    const opened = (await wb.client.callTool({ name: 'open_toolbox', arguments: { toolbox_name: 'dev' } })) as CallToolResult;
    assert.notEqual(opened.isError, true, textOf(opened));
    const answer = opened.structuredContent as { tools: { name: string }[]; servers_cached?: unknown[]; servers_connected: string[] };
    // Wait for the live list to be kept (the background check), so the next process finds it.
    if (answer.servers_cached) await wb.client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'dev', tool_name: 'dev__db__echo', arguments: { text: 'x' } } });
    return { names: answer.tools.map((t) => t.name), cached: (answer.servers_cached?.length ?? 0) > 0 };
  } finally {
    await wb.close();
  }
}

const cases: { label: string; config: unknown; alice: Record<string, string>; bob: Record<string, string> }[] = [
  {
    label: 'an inherited OPENAI_API_KEY (inheritEnv)',
    config: server({ inheritEnv: true }),
    alice: { OPENAI_API_KEY: 'sk-alice-0123456789', MODERN_FIXTURE_EXTRA_TOOL: 'alice_tool' },
    bob: { OPENAI_API_KEY: 'sk-bob-0123456789ab', MODERN_FIXTURE_EXTRA_TOOL: 'bob_tool' },
  },
  {
    label: 'the user info of a DATABASE_URL',
    config: server({ env: { DATABASE_URL: '${DB}', MODERN_FIXTURE_EXTRA_TOOL: '${EXTRA}' } }),
    alice: { DB: 'postgres://alice:alice-pw@db.example/x', EXTRA: 'alice_tool' },
    bob: { DB: 'postgres://bob:bob-pw@db.example/x', EXTRA: 'bob_tool' },
  },
];

describe('the catalog cache under credentials not named like them', () => {
  for (const era of ERAS) {
    for (const { label, config, alice, bob } of cases) {
      it(`keys ${label}: another account's list is never shown, the same account's is (${era} client)`, async () => {
        const { dir, cleanup } = await tempDir('wb-cache-credentials-');
        const cacheDir = join(dir, 'cache');
        try {
          const first = await openOnce(era, config, cacheDir, alice);
          assert.ok(first.names.includes('dev__db__alice_tool') && !first.cached, first.names.join(', '));
          const other = await openOnce(era, config, cacheDir, bob);
          assert.ok(!other.names.includes('dev__db__alice_tool'), `another account: ${other.names.join(', ')}`);
          assert.equal(other.cached, false, 'nothing cached under these credentials');
          // The same credentials in another process (its HOME, state file and the rest differ): the cache answers.
          const again = await openOnce(era, config, cacheDir, alice);
          assert.equal(again.cached, true, 'the same account is answered from the cache');
          assert.ok(again.names.includes('dev__db__alice_tool'), again.names.join(', '));
        } finally {
          await cleanup();
        }
      });
    }
  }
});
