import type { Tool } from '@modelcontextprotocol/server';
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from '../catalog/search.js';

/**
 * The workbench's own fixed tool surface. Names are protected: no disable rule can ever hide them.
 */
export const OPEN_TOOLBOX = 'open_toolbox';
export const USE_TOOL = 'use_tool';
export const PROTECTED_TOOLS: readonly string[] = [OPEN_TOOLBOX, USE_TOOL, 'list_all_tools', 'enable_tools'];

/** How a meta-tool is called, as a refusal of malformed parameters shows it: its signature and what to do next. */
export interface Usage {
  signature: string;
  next: string;
}

// Kept beside the input schemas below: a change to one is a change to the other.
export const OPEN_TOOLBOX_USAGE: Usage = {
  signature:
    'open_toolbox { toolbox_name?: string, tools?: string[], query?: string, limit?: integer, detail?: "full" | "index", cursor?: string }',
  next:
    'Call open_toolbox again with a toolbox_name from the server instructions (it may be left out only with query, to search every toolbox); pass tools or query, not both.',
};

export const USE_TOOL_USAGE: Usage = {
  signature: 'use_tool { toolbox_name: string, tool_name: string, arguments?: object }',
  next: "Call use_tool again with the toolbox_name and tool_name as open_toolbox returned them, and the tool's arguments as one object.",
};

/** Clients that defer MCP tools behind their own search (Claude Code) keep tools with this in view from the start. */
const ALWAYS_LOAD = { 'anthropic/alwaysLoad': true };

export function metaToolDefinitions(toolboxNames: readonly string[]): Tool[] {
  const toolboxProperty = {
    type: 'string',
    description: 'A toolbox or toolset named in the server instructions.',
    ...(toolboxNames.length > 0 ? { enum: [...toolboxNames] } : {}),
  };
  return [
    {
      name: OPEN_TOOLBOX,
      title: 'Open toolbox',
      description:
        'List a toolbox\'s tools with input schemas, or a compact index of all when too many; tools:[names] gives their ' +
        'schemas; query searches (every toolbox without toolbox_name). Call use_tool with the names returned.',
      inputSchema: {
        type: 'object',
        properties: {
          toolbox_name: { ...toolboxProperty, description: 'Toolbox to open (optional with query).' },
          tools: {
            type: 'array',
            items: { type: 'string' },
            description: 'Tool names or * globs to return with full schemas.',
          },
          query: { type: 'string', description: 'Words describing the tool needed.' },
          limit: { type: 'integer', minimum: 1, maximum: MAX_SEARCH_LIMIT, description: `Most matches for query (default ${DEFAULT_SEARCH_LIMIT}).` },
          detail: { type: 'string', enum: ['full', 'index'], description: 'Force full schemas or the index.' },
          cursor: { type: 'string', description: 'next_cursor of a previous answer.' },
        },
        additionalProperties: false,
      },
      _meta: ALWAYS_LOAD,
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
        'Call a tool by the name open_toolbox returned, with arguments matching its inputSchema. Returns the tool\'s own result.',
      inputSchema: {
        type: 'object',
        properties: {
          toolbox_name: toolboxProperty,
          tool_name: { type: 'string', description: 'Name from open_toolbox, e.g. dev__memory__read_graph.' },
          arguments: { type: 'object', description: 'Arguments matching the tool\'s inputSchema.' },
        },
        required: ['toolbox_name', 'tool_name'],
        additionalProperties: false,
      },
      _meta: ALWAYS_LOAD,
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
