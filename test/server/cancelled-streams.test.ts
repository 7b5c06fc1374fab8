import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { eraClient } from '../helpers/era-workbench.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureEvents, fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';

/**
 * README "Serving over HTTP", Limits: a session is idle when no request of its own is being answered. A request its
 * handshake-era client cancelled is not being answered (it never gets a response), so it must not keep its session
 * busy: here a `resources/read` that waits for a server still starting, which the MCP server itself handles.
 */
describe('a handshake-era HTTP session whose client cancelled a request the MCP server was handling', () => {
  it('expires when idle: the cancelled request no longer holds it', async () => {
    const temp = await tempDir('wb-cancelled-stream-');
    const log = join(temp.dir, 'fx.log');
    const config = { toolboxes: { t: { mcpServers: { fx: { ...fixtureServer('--never-initialize', '--log', log), connectTimeoutMs: 3000 } } } } };
    const wb = await startHttpWorkbench(config, ['--http', '0', '--session-idle-timeout', '1'], { MCP_WORKBENCH_CACHE_DIR: join(temp.dir, 'cache') });
    const client = eraClient('legacy');
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(wb.url)), { prior: { kind: 'legacy' } });
      const abort = new AbortController();
      const read = client.readResource({ uri: 'fixture://never', _meta: { 'mcp-workbench/source': 't/fx' } }, { signal: abort.signal, timeout: 120_000 });
      const settled = read.then(
        () => 'answered',
        () => 'rejected',
      );
      await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'stdin'), { timeoutMs: 30_000, what: 'the read to start the server' });
      abort.abort('the user cancelled it');
      assert.equal(await settled, 'rejected');
      const sessions = async (): Promise<number> => ((await (await fetch(`${wb.origin}/healthz`)).json()) as { sessions: number }).sessions;
      await waitFor(async () => (await sessions()) === 0, { timeoutMs: 60_000, what: 'the session to expire' });
    } finally {
      await client.close().catch(() => {});
      await wb.stop();
      await temp.cleanup();
    }
  });
});
