import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * The workbench's own fixed tool surface. Names are protected: no disable rule can ever hide them.
 */
export const OPEN_TOOLBOX = 'open_toolbox';
export const USE_TOOL = 'use_tool';
export const PROTECTED_TOOLS: readonly string[] = [OPEN_TOOLBOX, USE_TOOL, 'list_all_tools', 'enable_tools'];

export function metaToolDefinitions(toolboxNames: readonly string[]): Tool[] {
  const toolboxProperty = {
    type: 'string',
    description: 'Name of a toolbox or toolset, as listed in the server instructions (a toolset works wherever a toolbox does).',
    ...(toolboxNames.length > 0 ? { enum: [...toolboxNames] } : {}),
  };
  return [
    {
      name: OPEN_TOOLBOX,
      title: 'Open toolbox',
      description:
        'Connect a toolbox of MCP servers (if not connected yet) and list its tools with full input schemas. ' +
        'Call this before use_tool. Tool names come back as {toolbox}__{server}__{tool}.',
      inputSchema: {
        type: 'object',
        properties: { toolbox_name: toolboxProperty },
        required: ['toolbox_name'],
        additionalProperties: false,
      },
      annotations: {
        title: 'Open toolbox',
        // Starts the toolbox's servers and lists their tools; changes nothing outside the workbench.
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    {
      name: USE_TOOL,
      title: 'Use a tool from a toolbox',
      description:
        'Call a tool of a toolbox by the name open_toolbox returned, with arguments matching its inputSchema. ' +
        'The result is the tool\'s own result, unchanged.',
      inputSchema: {
        type: 'object',
        properties: {
          toolbox_name: toolboxProperty,
          tool_name: { type: 'string', description: 'Tool name from open_toolbox, e.g. dev__memory__read_graph.' },
          arguments: { type: 'object', description: 'Arguments for the tool, matching its inputSchema.', additionalProperties: true },
        },
        required: ['toolbox_name', 'tool_name'],
        additionalProperties: false,
      },
      annotations: {
        title: 'Use a tool from a toolbox',
        // It runs whatever downstream tool is named, which may write, delete or reach the outside world.
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
  ];
}
