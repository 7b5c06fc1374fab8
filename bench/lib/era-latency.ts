import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { node, paths } from '../../test/helpers/workbench-process.js';
import { startHttpWorkbench } from '../../test/helpers/http-workbench.js';
import { servers } from './processes.js';

/** The two kinds of SDK v2 client the eras bench compares: pinned to the handshake era, or to MCP 2026-07-28. */
export type ClientEra = 'legacy' | 'modern';

const ECHO_SERVER = fileURLToPath(new URL('./era-echo-server.mjs', import.meta.url));
const CONFIG = { toolboxes: { bench: { mcpServers: { srv: servers.everything() } } } };

function eraClient(era: ClientEra, name: string): Client {
  return new Client({ name, version: '1' }, { versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
}

/** Connects `client` over `transport` in its era (a handshake-era client says so up front: no probe). */
function connect(client: Client, era: ClientEra, transport: Parameters<Client['connect']>[0]): Promise<void> {
  return client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
}

/**
 * Sequential `use_tool` → server-everything `echo` latencies of one SDK v2 client pinned to `era`, on a stdio workbench
 * of its own (`dir` holds its config).
 */
export async function stdioEraLatencies(era: ClientEra, calls: number, dir: string): Promise<number[]> {
  const configPath = join(dir, `config-${era}.json`);
  await writeFile(configPath, JSON.stringify(CONFIG));
  const client = eraClient(era, `bench-${era}`);
  await connect(client, era, new StdioClientTransport({ command: node, args: [paths.cli, 'serve', '--config', configPath, '--no-catalog-cache'], stderr: 'ignore', cwd: dir }));
  try {
    return await timeEchoes(client, calls);
  } finally {
    await client.close();
  }
}

/** The same as {@link stdioEraLatencies} over Streamable HTTP: one `serve --http` workbench, one client pinned to `era`. */
export async function httpEraLatencies(era: ClientEra, calls: number): Promise<number[]> {
  const wb = await startHttpWorkbench(CONFIG, ['--http', '127.0.0.1:0', '--no-catalog-cache']);
  const client = eraClient(era, `bench-http-${era}`);
  try {
    await connect(client, era, new StreamableHTTPClientTransport(new URL(wb.url)));
    return await timeEchoes(client, calls);
  } finally {
    await client.close().catch(() => {});
    await wb.stop();
  }
}

/**
 * The client's own share: the same calls of the same client, made directly to `era-echo-server.mjs`, which answers
 * each with the bytes the workbench sends in that era and does no MCP work. What one era costs more here is the SDK
 * client's (and the larger messages' pipe time), not anything the workbench can change.
 */
export async function directEraLatencies(era: ClientEra, calls: number): Promise<number[]> {
  const client = eraClient(era, `bench-direct-${era}`);
  await connect(client, era, new StdioClientTransport({ command: node, args: [ECHO_SERVER], stderr: 'ignore' }));
  try {
    return await timeEchoes(client, calls);
  } finally {
    await client.close();
  }
}

/** 300 warm-up `use_tool` echo calls, then the times of `calls` more, one at a time. */
async function timeEchoes(client: Client, calls: number): Promise<number[]> {
  const call = () => client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'bench', tool_name: 'bench__srv__echo', arguments: { message: 'x' } } });
  for (let i = 0; i < 300; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  return times;
}
