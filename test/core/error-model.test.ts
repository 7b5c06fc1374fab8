import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startHttpWorkbench, type HttpWorkbench } from '../helpers/http-workbench.js';
import { fixtureServer, node, paths, tempDir } from '../helpers/workbench-process.js';

// One error model (README "Errors"): every failure of a call reaches the client as an isError result whose
// `_meta["mcp-workbench/error"]` names the code, where it happened (toolbox, server, tool), what to do next (`hint`),
// whether retrying may help, a downstream JSON-RPC error's own code, and what happened to a failed server — the same
// fields for a handshake-era and an MCP 2026-07-28 client, over stdio and over HTTP.

interface ErrorMeta {
  code: string;
  retryable: boolean;
  toolbox?: string;
  server?: string;
  tool?: string;
  hint?: string;
  downstreamCode?: number;
  failure?: { kind: string };
  unknown?: string;
}

/** A loopback port nothing listens on (a server was there a moment ago): connecting to it is refused. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function configWith(port: number) {
  return {
    toolboxes: {
      tb: {
        disabledTools: ['add'],
        mcpServers: {
          fx: fixtureServer('--odd'),
          gone: { command: join(paths.fixture, '..', 'no-such-command') },
          unset: { ...fixtureServer(), env: { TOKEN: '${WB_ERRORS_NEVER_SET}' } },
          far: { type: 'http', url: `http://127.0.0.1:${port}/mcp` },
        },
      },
    },
  };
}
const ENV = { WORKBENCH_MAX_MESSAGE_BYTES: String(1024 * 1024) };

type Era = 'legacy' | 'modern';
type Transport = 'stdio' | 'http';

function errorMeta(result: CallToolResult): ErrorMeta {
  const meta = result._meta?.['mcp-workbench/error'];
  assert.ok(meta && typeof meta === 'object', `an error result carries _meta["mcp-workbench/error"]: ${JSON.stringify(result)}`);
  return meta as ErrorMeta;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

function newClient(era: Era): Client {
  return new Client({ name: `errors-${era}`, version: '1.0.0' }, { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
}

describe('one error model on every era and transport', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let configPath: string;
  let http: HttpWorkbench;

  before(async () => {
    ({ dir, cleanup } = await tempDir('wb-errors-'));
    configPath = join(dir, 'workbench-config.json');
    const config = configWith(await refusedPort());
    await writeFile(configPath, JSON.stringify(config));
    http = await startHttpWorkbench(config, ['--http', '0'], { ...ENV, MCP_WORKBENCH_CACHE_DIR: join(dir, 'http-cache') });
  });
  after(async () => {
    await http.stop();
    await cleanup();
  });

  async function connect(era: Era, transport: Transport): Promise<Client> {
    const client = newClient(era);
    if (transport === 'http') {
      await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    } else {
      const env = { ...(process.env as Record<string, string>), ...ENV, MCP_WORKBENCH_CACHE_DIR: join(dir, `cache-${era}`) };
      await client.connect(new StdioClientTransport({ command: node, args: [paths.cli, 'serve', '--config', configPath], env, stderr: 'ignore' }));
    }
    return client;
  }

  for (const era of ['legacy', 'modern'] as const) {
    for (const transport of ['stdio', 'http'] as const) {
      test(`${era} client over ${transport}`, async () => {
        const client = await connect(era, transport);
        const use = async (tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
          (await client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'tb', tool_name: tool, arguments: args } })) as CallToolResult;
        try {
          // A downstream JSON-RPC error: its message as sent, its code as a field (never passed on as ours).
          const rpc = await use('tb__fx__throw_jsonrpc', { code: -32050, message: 'database is locked' });
          assert.equal(rpc.isError, true);
          assert.deepEqual(errorMeta(rpc), {
            code: 'CALL_FAILED',
            retryable: false,
            toolbox: 'tb',
            server: 'fx',
            tool: 'throw_jsonrpc',
            downstreamCode: -32050,
          });
          assert.match(text(rpc), /database is locked/);
          assert.doesNotMatch(text(rpc), /MCP error -32050/, 'the code is said once');
          // A server's huge error message is quoted in part, saying how much was left out.
          const long = text(await use('tb__fx__throw_jsonrpc', { code: -32000, message: 'E'.repeat(200_000) }));
          assert.ok(long.length < 3_000, `${long.length} characters`);
          assert.match(long, /… \(198000 more characters\)/);
          // The arguments hint only where the error is about arguments; a fitting one for a code whose meaning is known.
          const argumentsHint = "Check the arguments against the tool's inputSchema (open_toolbox lists it), then retry.";
          const hintOf = async (args: Record<string, unknown>): Promise<string | undefined> => errorMeta(await use('tb__fx__throw_jsonrpc', args)).hint;
          assert.equal(await hintOf({ code: -32602, message: 'Invalid params' }), argumentsHint);
          assert.equal(await hintOf({ code: -32001, message: "invalid argument 'path': no such directory" }), argumentsHint);
          const capability = await hintOf({
            code: -32021,
            message: "the request's client capabilities do not declare the required capability",
            data: { requiredCapabilities: { elicitation: {} } },
          });
          assert.match(capability ?? '', /capability of the calling client \(elicitation\)/);
          assert.doesNotMatch(capability ?? '', /arguments/);

          // A message over the limit, dropped unread: named as such, with what to do.
          const big = await use('tb__fx__huge', { bytes: 3 * 1024 * 1024 });
          const bigMeta = errorMeta(big);
          assert.equal(bigMeta.code, 'MESSAGE_TOO_LARGE');
          assert.deepEqual([bigMeta.toolbox, bigMeta.server, bigMeta.tool], ['tb', 'fx', 'huge']);
          assert.equal(bigMeta.hint, 'Ask for less output (narrower arguments).');
          assert.equal(bigMeta.downstreamCode, undefined, 'the workbench made that answer: no downstream code');

          // A server that cannot start: its failure as fields, not retryable, the fix as a hint.
          const gone = await use('tb__gone__anything');
          const goneMeta = errorMeta(gone);
          assert.equal(goneMeta.code, 'CONNECT_FAILED');
          assert.equal(goneMeta.toolbox, 'tb');
          assert.equal(goneMeta.server, 'gone');
          assert.equal(goneMeta.failure?.kind, 'command-not-found');
          assert.equal(goneMeta.retryable, false);
          // In the model's words, as ever: a command line's (a doctor command to run) are for tools call alone.
          assert.equal(
            goneMeta.hint,
            'A person must install it there, or fix "command" of this server in the config; `mcp-workbench doctor` shows how, and it is tried again on next use. Use the other servers meanwhile.',
          );

          // An unknown tool of a known toolbox: where, and the next step.
          const unknown = await use('tb__fx__no_such_tool');
          assert.deepEqual(errorMeta(unknown), {
            code: 'TOOL_NOT_FOUND',
            retryable: false,
            toolbox: 'tb',
            hint: 'Call open_toolbox {"toolbox_name":"tb"} to list the valid names.',
          });

          // A full name whose server the toolbox does not have: which part of the name is unknown, as a field (no
          // server need answer, and a program need not read the config to tell).
          assert.deepEqual(errorMeta(await use('tb__zz__anything')), {
            code: 'TOOL_NOT_FOUND',
            retryable: false,
            toolbox: 'tb',
            unknown: 'server',
            hint: 'Call open_toolbox {"toolbox_name":"tb"} to list the valid names.',
          });

          // Invalid arguments: refused before anything is sent, naming the tool.
          const invalid = await use('tb__fx__throw_jsonrpc', { code: 'not a number' });
          const invalidMeta = errorMeta(invalid);
          assert.equal(invalidMeta.code, 'INVALID_ARGUMENTS');
          assert.deepEqual([invalidMeta.toolbox, invalidMeta.server, invalidMeta.tool], ['tb', 'fx', 'throw_jsonrpc']);

          // A tool the config disables: where, and what would enable it (only a person, by editing the config).
          const disabled = errorMeta(await use('tb__fx__add', { a: 1, b: 2 }));
          assert.equal(disabled.code, 'TOOL_DISABLED');
          assert.deepEqual([disabled.toolbox, disabled.server, disabled.tool], ['tb', 'fx', 'add']);
          assert.match(disabled.hint ?? '', /changing the workbench config/);

          // A server whose variable is unset: the fix as the hint, not only inside failure.problems.
          const unset = errorMeta(await use('tb__unset__echo', { text: 'x' }));
          assert.equal(unset.code, 'ENV_MISSING');
          assert.deepEqual([unset.toolbox, unset.server], ['tb', 'unset']);
          assert.match(unset.hint ?? '', /^To fix: set WB_ERRORS_NEVER_SET in the environment/);
          assert.match(unset.hint ?? '', /retrying will not help/);

          // A remote server nothing answers at: why in words (not "fetch failed"), and the next step.
          const farResult = await use('tb__far__anything');
          const far = errorMeta(farResult);
          assert.equal(far.code, 'CONNECT_FAILED');
          assert.equal(far.failure?.kind, 'unreachable');
          assert.match(text(farResult), /could not be reached: connection refused: nothing listens at that address and port \(ECONNREFUSED\)/);
          assert.match(far.hint ?? '', /Check that the server is running and its "url" is right/);

          // Many violations: the first ten are named, and how many more there were.
          const extra = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`extra_${i}`, i]));
          const many = await use('tb__fx__echo', { text: 'x', ...extra });
          assert.equal(errorMeta(many).code, 'INVALID_ARGUMENTS');
          assert.match(text(many), /- … and 40 more\n/);
          assert.ok(text(many).length < 4_000, `${text(many).length} characters`);

          // The server still serves after all of it.
          assert.equal(text(await use('tb__fx__echo', { text: 'still here' })), 'still here');
        } finally {
          await client.close();
        }
      });
    }
  }
});
