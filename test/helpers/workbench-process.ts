import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isAlive, listDescendants } from '../../src/shared/process-tree.js';
import { isOrphanWatchdog } from '../../src/clients/orphan-reaper.js';
import { waitFor } from './wait-for.js';

export { waitFor };

/** Absolute paths of the things the tests start. */
export const paths = {
  cli: fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url)),
  fixture: fileURLToPath(new URL('../fixtures/fixture-server.mjs', import.meta.url)),
  everything: fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url)),
  memory: fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-memory/dist/index.js', import.meta.url)),
  filesystem: fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', import.meta.url)),
};

export const node = process.execPath;

/** A stdio server entry that runs our fault-mode fixture with the given flags. */
export function fixtureServer(...flags: string[]): { command: string; args: string[] } {
  return { command: node, args: [paths.fixture, ...flags] };
}

export function everythingServer(): { command: string; args: string[] } {
  return { command: node, args: [paths.everything, 'stdio'] };
}

export function filesystemServer(root: string): { command: string; args: string[] } {
  return { command: node, args: [paths.filesystem, root] };
}

export function memoryServer(memoryFile: string): { command: string; args: string[]; env: Record<string, string> } {
  return { command: node, args: [paths.memory], env: { MEMORY_FILE_PATH: memoryFile } };
}

/**
 * A temp dir of the test's own. Cleanup retries while the tree is still changing: a downstream server ended with its
 * workbench may write its last log line into the dir just as it is removed (ENOTEMPTY).
 */
export async function tempDir(prefix = 'wb-test-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) };
}

export interface RunningWorkbench {
  client: Client;
  transport: StdioClientTransport;
  /** pid of the workbench process. */
  pid: number;
  dir: string;
  configPath: string;
  /** Everything the workbench wrote to stderr so far. */
  stderr(): string;
  /** Current descendants of the workbench process (children, grandchildren, …). */
  descendants(): Promise<number[]>;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  useTool(toolbox: string, tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Closes the client (stdin) and waits for the workbench to exit; removes the temp dir. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** Extra CLI arguments after `serve --config <file>`. */
  args?: string[];
  /** Extra environment for the workbench process. */
  env?: Record<string, string>;
  clientCapabilities?: ConstructorParameters<typeof Client>[1];
}

/**
 * Starts the built workbench (`dist/cli/main.js`) as a real process with the given config object and connects an
 * SDK Client to it over stdio.
 */
export async function startWorkbench(config: unknown, options: StartOptions = {}): Promise<RunningWorkbench> {
  const { dir, cleanup } = await tempDir();
  const configPath = join(dir, 'workbench-config.json');
  await writeFile(configPath, JSON.stringify(config, null, 2));
  const transport = new StdioClientTransport({
    command: node,
    args: [paths.cli, 'serve', '--config', configPath, ...(options.args ?? [])],
    // The state file lives in the test's temp dir unless a test says otherwise: never the real home.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'catalog-cache'), ...options.env },
    stderr: 'pipe',
    cwd: dir,
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'workbench-test', version: '1.0.0' }, options.clientCapabilities ?? { capabilities: {} });
  await client.connect(transport);
  const pid = transport.pid!;
  return {
    client,
    transport,
    pid,
    dir,
    configPath,
    stderr: () => stderr,
    descendants: async () => (await listDescendants(pid)).filter((child) => !isOrphanWatchdog(child)),
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>,
    useTool: (toolbox, tool, args) =>
      client.callTool({ name: 'use_tool', arguments: { toolbox_name: toolbox, tool_name: tool, ...(args ? { arguments: args } : {}) } }) as Promise<CallToolResult>,
    close: async () => {
      await client.close().catch(() => {});
      await waitFor(() => !isAlive(pid), 10_000);
      await cleanup();
    },
  };
}


/** The text of the first text content item (of a result from either SDK's client). */
export function textOf(result: Pick<CallToolResult, 'content'>): string {
  const item = result.content.find((c) => c.type === 'text');
  return item && item.type === 'text' ? item.text : '';
}

/** The workbench's own error code, if this result is an error the workbench produced. */
export function workbenchErrorCode(result: Pick<CallToolResult, '_meta'>): string | undefined {
  const meta = result._meta?.['mcp-workbench/error'] as { code?: string } | undefined;
  return meta?.code;
}

/**
 * The events our fixture server wrote to its `--log` file, parsed (empty if the file does not exist yet). Only whole
 * lines: a line being appended while the file is read (a write that spans a page boundary is seen half done) is left
 * for the next read.
 */
export async function fixtureEvents(file: string): Promise<{ event: string; pid: number; [key: string]: unknown }[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { event: string; pid: number });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `mcp-workbench …` (the built CLI) to completion with a minimal environment and empty stdin. */
export function runCli(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): CliRun {
  // `tools list` connects servers and would fill the catalog cache: keep it in a temp dir, never the real home.
  const cache = mkdtempSync(join(tmpdir(), 'wb-cli-cache-'));
  const result = spawnSync(node, [paths.cli, ...args], {
    encoding: 'utf8',
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/', MCP_WORKBENCH_CACHE_DIR: cache, ...options.env },
    input: '',
    timeout: 60_000,
  });
  rmSync(cache, { recursive: true, force: true });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * A tool result's structured answer, checked to be an object that holds `key` (a check, not a bare cast): a result
 * without one fails the test with the result shown.
 */
export function structuredAnswer<T extends object>(result: { structuredContent?: unknown }, key: keyof T & string): T {
  const body = result.structuredContent;
  assert.ok(typeof body === 'object' && body !== null && key in body, `a structured answer with "${key}": ${JSON.stringify(result).slice(0, 500)}`);
  return body as T;
}
