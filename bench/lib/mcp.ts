import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListToolsResultSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';

/** The text of a result's first text item ('' if none). */
export function textOf(result: CallToolResult): string {
  const item = result.content.find((c) => c.type === 'text');
  return item && item.type === 'text' ? item.text : '';
}

/** Calls a tool and throws if the result is an error, so a failing call is never timed as work. */
export async function callOk(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name} returned an error: ${textOf(result).slice(0, 500)}`);
  return result;
}

/** `use_tool` through a workbench; throws on an error result. */
export function useTool(client: Client, toolbox: string, tool: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return callOk(client, 'use_tool', { toolbox_name: toolbox, tool_name: tool, arguments: args });
}

/** Every page of tools/list, and the byte size of the JSON the client received (summed over pages). */
export async function listToolsBytes(client: Client): Promise<{ tools: Tool[]; bytes: number }> {
  const tools: Tool[] = [];
  let bytes = 0;
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const result = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ListToolsResultSchema);
    bytes += Buffer.byteLength(JSON.stringify(result));
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return { tools, bytes };
}
