import { DEFAULT_INHERITED_ENV_VARS } from '@modelcontextprotocol/sdk/client/stdio.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerConfig, StdioServerConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import { ChildProcessTransport } from './stdio-transport.js';

/**
 * One place that turns a server entry into a transport. stdio children get the same safe default environment the
 * MCP SDK gives them (HOME, PATH, …, never shell functions) plus the entry's `env`, or the whole workbench
 * environment with `inheritEnv: true`.
 */
export function childEnvironment(server: StdioServerConfig, workbenchEnv: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  if (server.inheritEnv) {
    for (const [key, value] of Object.entries(workbenchEnv)) if (value !== undefined) env[key] = value;
  } else {
    for (const key of DEFAULT_INHERITED_ENV_VARS) {
      const value = workbenchEnv[key];
      // Exported shell functions ("() { …") are a known injection vector; the SDK skips them too.
      if (value !== undefined && !value.startsWith('()')) env[key] = value;
    }
  }
  return { ...env, ...server.env };
}

export interface TransportOptions {
  workbenchEnv: Record<string, string | undefined>;
  maxMessageBytes: number;
  log: Logger;
}

export function createTransport(server: ServerConfig, options: TransportOptions): Transport {
  switch (server.type) {
    case 'stdio':
      return new ChildProcessTransport({
        command: server.command,
        args: server.args,
        env: childEnvironment(server, options.workbenchEnv),
        cwd: server.cwd,
        maxMessageBytes: options.maxMessageBytes,
        log: options.log,
      });
    case 'http':
      return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } });
    case 'sse':
      return new SSEClientTransport(new URL(server.url), {
        requestInit: { headers: server.headers },
        eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...server.headers, ...(init?.headers as Record<string, string> | undefined) } }) },
      });
  }
}
