import assert from 'node:assert/strict';
import type { CallToolResult, Client } from '@modelcontextprotocol/client';

/**
 * use_tool calls beside a server that never finishes its handshake (README "Tool names and calls": how long a name
 * waits for servers still starting), shared by the tests of those waits.
 */

/** The client gives up long before useToolWaitMs and the stuck server's connect limit: a call that waits fails. */
export const CLIENT_WAIT = { timeout: 30_000 };

/** The fields of a refusal's `_meta["mcp-workbench/error"]` these tests read. */
export interface ErrorMeta {
  code?: string;
  retryable?: boolean;
  server?: string;
}

export const errorOf = (result: CallToolResult): ErrorMeta => (result._meta?.['mcp-workbench/error'] ?? {}) as ErrorMeta;

/** use_tool with the client's wait above. */
export const useTool = (client: Client, toolbox: string, tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> =>
  client.callTool({ name: 'use_tool', arguments: { toolbox_name: toolbox, tool_name: tool, arguments: args } }, CLIENT_WAIT) as Promise<CallToolResult>;

/**
 * Waits until the healthy server of toolbox `mixed` is up (its full name waits for it), so only the stuck one is left
 * starting whatever the machine's load: past `openWaitMs` a server still starting with no list known is named as
 * such, healthy or not. A loaded machine may start it slower than a short useToolWaitMs: it keeps starting, so the
 * next call waits again.
 */
export async function healthyUp(client: Client): Promise<void> {
  let result = await useTool(client, 'mixed', 'mixed__healthy__echo', { text: 'up' });
  for (let tries = 1; tries < 10 && errorOf(result).code === 'CONNECT_TIMEOUT'; tries++) {
    result = await useTool(client, 'mixed', 'mixed__healthy__echo', { text: 'up' });
  }
  assert.notEqual(result.isError, true, JSON.stringify(result));
}
