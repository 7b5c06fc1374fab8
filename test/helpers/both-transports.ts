import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startHttpWorkbench } from './http-workbench.js';
import { startWorkbench } from './workbench-process.js';

/** A workbench process and one SDK client on it, over either transport, with the same shape for both. */
export interface AnyWorkbench {
  client: Client;
  /** The workbench's start directory and config file. */
  dir: string;
  configPath: string;
  stderr(): string;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  useTool(toolbox: string, tool: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

export const TRANSPORTS = ['stdio', 'http'] as const;
export type TransportName = (typeof TRANSPORTS)[number];

/** Starts the built workbench with `config` and `args` (after `serve --config <file>`), over stdio or `--http 0`. */
export async function startOver(transport: TransportName, config: unknown, args: string[] = [], env: Record<string, string> = {}): Promise<AnyWorkbench> {
  if (transport === 'stdio') {
    const wb = await startWorkbench(config, { args, env });
    return { client: wb.client, dir: wb.dir, configPath: wb.configPath, stderr: wb.stderr, call: wb.call, useTool: wb.useTool, close: wb.close };
  }
  const wb = await startHttpWorkbench(config, ['--http', '0', ...args], env);
  const session = await wb.connect();
  const call = (name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
    session.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  return {
    client: session.client,
    dir: wb.dir,
    configPath: wb.configPath,
    stderr: wb.stderr,
    call,
    useTool: (toolbox, tool, args) => call('use_tool', { toolbox_name: toolbox, tool_name: tool, ...(args ? { arguments: args } : {}) }),
    close: async () => {
      await session.close().catch(() => {});
      await wb.stop();
    },
  };
}
