import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { eraClient } from '../helpers/era-workbench.js';
import { inputRound } from '../helpers/input-round.js';
import { logLines } from '../helpers/log-lines.js';
import { waitFor } from '../helpers/wait-for.js';
import { isAlive } from '../../src/shared/process-tree.js';
import { fixtureServer, textOf, workbenchErrorCode } from '../helpers/workbench-process.js';

// Clients of MCP 2026-07-28 over --http have no session: what keeps two users apart is the token that admitted each
// request (README "Protocol eras"). Each token of a comma-separated --token list is one user with downstream servers
// of its own; clients with the same token share theirs; an input round of one user is never reachable by another.

const TOKEN_A = 'alice-0123456789abcdef0123456789abcdef';
const TOKEN_B = 'bob-0123456789abcdef0123456789abcdef0123';

const CONFIG = { toolboxes: { fx: { mcpServers: { state: fixtureServer('--odd') } } } };

async function modernClient(url: string, token: string): Promise<Client> {
  const client = new Client(
    { name: 'principal-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'decline' }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  assert.equal(client.getProtocolEra(), 'modern');
  return client;
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

const use = (client: Client, tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: tool, arguments: args }, ...extra } as never, {
    allowInputRequired: true,
  });

describe('modern HTTP clients are kept apart by their token', () => {
  let wb: HttpWorkbench;
  before(async () => {
    wb = await startHttpWorkbench(CONFIG, ['--http', '0'], { WORKBENCH_TOKEN: `${TOKEN_A},${TOKEN_B}` });
  });
  after(async () => {
    await wb?.stop();
  });

  test('each token is one user: same-token clients share downstream state, other tokens never see it', async () => {
    const a1 = await modernClient(wb.url, TOKEN_A);
    const a2 = await modernClient(wb.url, TOKEN_A);
    const b = await modernClient(wb.url, TOKEN_B);
    try {
      await use(a1, 'set', { key: 'k', value: 'alice' });
      assert.equal(text(await use(a2, 'get', { key: 'k' })), 'alice', 'a second client with the same token reaches the same server process');
      assert.equal(text(await use(b, 'get', { key: 'k' })), '', "another token's server process has none of it");
      await use(b, 'set', { key: 'k', value: 'bob' });
      assert.equal(text(await use(a1, 'get', { key: 'k' })), 'alice');
    } finally {
      await Promise.allSettled([a1.close(), a2.close(), b.close()]);
    }
  });

  test("one user's input round cannot be continued by another", async () => {
    const a = await modernClient(wb.url, TOKEN_A);
    const b = await modernClient(wb.url, TOKEN_B);
    try {
      const first = inputRound(await use(a, 'ask', { kind: 'elicitation' }));
      const key = Object.keys(first.inputRequests)[0]!;
      const answer = { inputResponses: { [key]: { action: 'accept', content: { name: 'mallory' } } }, requestState: first.requestState };
      // The requestState is bound to the user it was handed to: another token's echo is refused before any lookup.
      await assert.rejects(use(b, 'ask', { kind: 'elicitation' }, answer), /Invalid or expired requestState/);
      // The owner's retry still works: the other user's attempt changed nothing.
      const own = await use(a, 'ask', { kind: 'elicitation' }, { ...answer, inputResponses: { [key]: { action: 'accept', content: { name: 'alice' } } } });
      assert.deepEqual(JSON.parse(text(own)), { action: 'accept', content: { name: 'alice' } });
    } finally {
      await Promise.allSettled([a.close(), b.close()]);
    }
  });

  test('a user may leave at most 64 calls waiting for input; the 65th is refused (isError) and says why', async () => {
    const a = await modernClient(wb.url, TOKEN_A);
    const b = await modernClient(wb.url, TOKEN_B);
    try {
      // One after the other: a legacy server's request names no call, so it goes to the newest call of the session.
      for (let i = 0; i < 64; i++) {
        const waiting = (await use(a, 'ask', { kind: 'elicitation' })) as { resultType?: string };
        assert.equal(waiting.resultType, 'input_required', `call ${i + 1}`);
      }
      const refused = (await use(a, 'ask', { kind: 'elicitation' })) as CallToolResult;
      assert.equal(refused.isError, true, JSON.stringify(refused));
      assert.equal(workbenchErrorCode(refused), 'INPUT_ROUNDS_FULL');
      assert.match(textOf(refused), /64 calls of this client are waiting for its input already/);
      // Another user is not affected, and calls that do not ask still work for the first.
      assert.equal((await use(b, 'ask', { kind: 'elicitation' }) as { resultType?: string }).resultType, 'input_required');
    } finally {
      await Promise.allSettled([a.close(), b.close()]);
    }
  });

  test('a request without a valid token is refused before anything runs', async () => {
    const client = new Client({ name: 'x', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(wb.url), { requestInit: { headers: { Authorization: 'Bearer wrong-token-value-000000000000000' } } })));
  });
});

// A server that inherits the workbench's environment (`inheritEnv: true`) must not inherit the users' tokens: any user
// who can make such a server show its environment (server-everything's get-env, a shell) would read every other
// user's token and could then act as them (README "Configuration", inheritEnv).
describe('a server that inherits the environment of a workbench with several tokens', () => {
  for (const era of ['legacy', 'modern'] as const) {
    test(`is not given WORKBENCH_TOKEN (${era === 'modern' ? 'MCP 2026-07-28' : 'handshake-era'} client); the rest of the environment still comes`, async () => {
      const config = { toolboxes: { fx: { mcpServers: { state: { ...fixtureServer('--env-digest'), inheritEnv: true } } } } };
      const wb = await startHttpWorkbench(config, ['--http', '0'], { WORKBENCH_TOKEN: `${TOKEN_A},${TOKEN_B}`, SOME_SETTING: 'inherited' });
      const client = eraClient(era);
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(wb.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN_B}` } } }), era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
        const digest = async (name: string): Promise<string> => text(await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'fx', tool_name: 'env_digest', arguments: { name } } }));
        assert.equal(await digest('WORKBENCH_TOKEN'), 'unset', "the users' tokens are not the server's");
        assert.equal(await digest('SOME_SETTING'), createHash('sha256').update('inherited').digest('hex'));
      } finally {
        await client.close().catch(() => {});
        await wb.stop();
      }
    });
  }
});

describe('a modern HTTP client left idle', () => {
  let wb: HttpWorkbench;
  before(async () => {
    // A client's end is a debug line (README "Command line", Logs).
    wb = await startHttpWorkbench(CONFIG, ['--http', '0', '--session-idle-timeout', '1'], { WORKBENCH_TOKEN: TOKEN_A, WORKBENCH_LOG_FORMAT: 'json', WORKBENCH_LOG_LEVEL: 'debug' });
  });
  after(async () => {
    await wb?.stop();
  });

  test('is closed after the idle timeout, with its downstream servers; the JSON line says which client and why', async () => {
    const client = await modernClient(wb.url, TOKEN_A);
    const pid = (((await use(client, 'pid', {})) as CallToolResult).structuredContent as { pid?: unknown } | undefined)?.pid;
    assert.equal(typeof pid, 'number');
    await client.close();
    const closings = () => logLines(wb.stderr()).filter((l) => l.fields.event === 'client_closed' && l.fields.client !== undefined);
    await waitFor(() => closings().length > 0, { timeoutMs: 20_000, what: "the modern client's client_closed line" });
    const [closed] = closings();
    assert.equal(closed!.fields.reason, 'idle', wb.stderr());
    assert.equal(typeof closed!.fields.client, 'string');
    assert.equal((closed!.fields.client as string).length, 8);
    assert.ok(!TOKEN_A.startsWith(closed!.fields.client as string), 'the client key is not the token');
    assert.equal(closed!.fields.session, undefined, 'a modern client has no session');
    await waitFor(() => !isAlive(pid as number), { timeoutMs: 10_000, what: 'its downstream process to stop' });
  });
});
