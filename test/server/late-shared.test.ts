import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StreamableHTTPClientTransport, type CallToolResult, type Client } from '@modelcontextprotocol/client';
import { ERAS, eraClient, type EraName } from '../helpers/era-workbench.js';
import { startHttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureEvents, fixtureServer, tempDir, waitFor } from '../helpers/workbench-process.js';
import { LOG_LEVEL_KEY, chatterCancelled, chatterOf, failuresIn, lateProgress, lateTicks, listen, useTool } from '../helpers/late-chatter.js';

/**
 * Late messages over HTTP, where more than one client is served (README "Serving over HTTP"): a `shared: true`
 * server's log messages and requests about one user's call that is over reach nobody — not the other user, the only
 * one still connected — and a session that expires while its `${user:id}` server still talks about a cancelled call
 * takes that server's process with it; the user's next session is served.
 */

const TOKENS = ['token-of-alice-0123456789', 'token-of-bob-0123456789ab'];

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Sampling requests this client was sent. */
  asked: unknown[];
}

async function connect(url: string, token: string, era: EraName, open: Client[]): Promise<Connected> {
  const asked: unknown[] = [];
  const client = eraClient(era, { sampling: {} });
  client.setRequestHandler('sampling/createMessage', (request) => {
    asked.push(request.params);
    return { model: 'test', role: 'assistant', content: { type: 'text', text: 'from bob' } };
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
  open.push(client);
  return { client, transport, asked };
}

async function sharedServer(era: EraName): Promise<void> {
  const temp = await tempDir('wb-late-shared-');
  const log = join(temp.dir, 'fx.log');
  const config = { toolboxes: { t: { mcpServers: { fx: { ...fixtureServer('--odd', '--log', log), shared: true, timeoutMs: 600_000 } } } } };
  const wb = await startHttpWorkbench(config, ['--http', '0'], { WORKBENCH_TOKEN: TOKENS.join(','), MCP_WORKBENCH_CACHE_DIR: join(temp.dir, 'cache') });
  const open: Client[] = [];
  try {
    const bob = await connect(wb.url, TOKENS[1]!, era, open);
    const bobHeard = listen(bob.client);
    const first = (await bob.client.callTool(useTool('echo', { text: 'bob' }, { [LOG_LEVEL_KEY]: 'info' }), { timeout: 60_000 })) as CallToolResult;
    assert.notEqual(first.isError, true, JSON.stringify(first));
    const alice = await connect(wb.url, TOKENS[0]!, era, open);
    await chatterCancelled(alice.client, { ms: 2500, ask: 'sampling' });
    if (era === 'legacy') await alice.transport.terminateSession();
    await alice.client.close();
    await lateTicks(log, 5);
    const events = await fixtureEvents(log);
    const ask = events.find((e) => e.event === 'late_ask');
    assert.match(String(ask?.outcome), /^refused/, JSON.stringify(ask));
    const last = (await bob.client.callTool(useTool('echo', { text: 'bob again' }), { timeout: 60_000 })) as CallToolResult;
    assert.notEqual(last.isError, true, JSON.stringify(last));
    const heard = chatterOf(bobHeard.messages);
    assert.deepEqual(heard.progress, [], "no progress of alice's call reaches bob");
    assert.deepEqual(heard.logs, [], "no log message about alice's call reaches bob");
    assert.deepEqual(bob.asked, [], "the shared server's late question does not reach bob");
    assert.deepEqual(failuresIn(wb.stderr()), []);
  } finally {
    await Promise.allSettled(open.map((c) => c.close()));
    await wb.stop();
    await temp.cleanup();
  }
}

async function expiredSession(era: EraName): Promise<void> {
  const temp = await tempDir('wb-late-idle-');
  const logs = join(temp.dir, 'logs');
  await mkdir(logs);
  const config = { toolboxes: { t: { mcpServers: { fx: { ...fixtureServer('--odd', '--log', join(logs, 'fx-${user:id}.log')), timeoutMs: 600_000 } } } } };
  const wb = await startHttpWorkbench(config, ['--http', '0', '--session-idle-timeout', '1'], { WORKBENCH_TOKEN: TOKENS.join(','), MCP_WORKBENCH_CACHE_DIR: join(temp.dir, 'cache') });
  const open: Client[] = [];
  try {
    const alice = await connect(wb.url, TOKENS[0]!, era, open);
    const heard = listen(alice.client);
    await chatterCancelled(alice.client, { ms: 60_000 });
    const [file] = await readdir(logs);
    const log = join(logs, file!);
    const pid = (await fixtureEvents(log)).find((e) => e.event === 'start')!.pid as number;
    const before = heard.messages.length;
    await waitFor(async () => (await fixtureEvents(log)).some((e) => e.event === 'chatter' && e.late === true), { timeoutMs: 30_000, what: 'a late tick' });
    await waitFor(() => !alive(pid), { timeoutMs: 60_000, what: `the expired session's server (pid ${pid}) to exit` });
    const late = chatterOf(heard.messages.slice(before));
    assert.deepEqual(await lateProgress(late.progress, log), [], 'no progress the server sent after the cancel reaches the client');
    if (era === 'modern') assert.deepEqual(late.logs, [], 'a modern client is sent no log message outside its calls');
    await alice.client.close();
    const again = await connect(wb.url, TOKENS[0]!, era, open);
    const echoed = (await again.client.callTool(useTool('echo', { text: 'again' }), { timeout: 60_000 })) as CallToolResult;
    assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
    assert.deepEqual(failuresIn(wb.stderr()), []);
  } finally {
    await Promise.allSettled(open.map((c) => c.close()));
    await wb.stop();
    await temp.cleanup();
  }
}

for (const era of ERAS) {
  describe(`late messages over HTTP, ${era} clients`, () => {
    it("a shared server's log, progress and request about a cancelled call of one user reach no other user", () => sharedServer(era));
    it("an expired session: its ${user:id} server, still talking about a cancelled call, is ended; the user's next session is served", () => expiredSession(era));
  });
}
