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

/** One client pinned to an era, connected and warmed up (300 calls), timing `use_tool` echo calls on demand. */
export interface EraSession {
  /** The times of `calls` sequential calls, one at a time. */
  times(calls: number): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * A client pinned to `era` on a stdio workbench of its own (`dir` holds its config), calling server-everything's
 * `echo` through `use_tool`.
 */
export async function openStdioEra(era: ClientEra, dir: string): Promise<EraSession> {
  const configPath = join(dir, `config-${era}.json`);
  await writeFile(configPath, JSON.stringify(CONFIG));
  const client = eraClient(era, `bench-${era}`);
  await connect(client, era, new StdioClientTransport({ command: node, args: [paths.cli, 'serve', '--config', configPath, '--no-catalog-cache'], stderr: 'ignore', cwd: dir }));
  return warmed(client, () => client.close());
}

/** The same as {@link openStdioEra} over Streamable HTTP: one `serve --http` workbench, one client pinned to `era`. */
export async function openHttpEra(era: ClientEra): Promise<EraSession> {
  const wb = await startHttpWorkbench(CONFIG, ['--http', '127.0.0.1:0', '--no-catalog-cache']);
  const client = eraClient(era, `bench-http-${era}`);
  const close = async (): Promise<void> => {
    await client.close().catch(() => {});
    await wb.stop();
  };
  try {
    await connect(client, era, new StreamableHTTPClientTransport(new URL(wb.url)));
  } catch (error) {
    await close();
    throw error;
  }
  return warmed(client, close);
}

/**
 * The client's own share: the same client and calls made directly to `era-echo-server.mjs`, which answers each with
 * the bytes the workbench sends in that era and does no MCP work. What one era costs more here is the SDK client's
 * (and the larger messages' pipe time), not anything the workbench can change.
 */
export async function openDirectEra(era: ClientEra): Promise<EraSession> {
  const client = eraClient(era, `bench-direct-${era}`);
  await connect(client, era, new StdioClientTransport({ command: node, args: [ECHO_SERVER], stderr: 'ignore' }));
  return warmed(client, () => client.close());
}

/** A session over a connected client: 300 warm-up calls first (closing the client if they fail). */
async function warmed(client: Client, close: () => Promise<void>): Promise<EraSession> {
  const call = () => client.callTool({ name: 'use_tool', arguments: { toolbox_name: 'bench', tool_name: 'bench__srv__echo', arguments: { message: 'x' } } });
  try {
    for (let i = 0; i < 300; i++) await call();
  } catch (error) {
    await close();
    throw error;
  }
  return {
    times: async (calls) => {
      const times: number[] = [];
      for (let i = 0; i < calls; i++) {
        const start = performance.now();
        await call();
        times.push(performance.now() - start);
      }
      return times;
    },
    close,
  };
}
