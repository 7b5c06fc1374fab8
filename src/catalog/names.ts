/**
 * Canonical tool names: `{toolbox}__{server}__{tool}`. Toolbox and server names can never contain `__` (the config
 * schema forbids it), so splitting on the first two separators is unambiguous even when the downstream tool name
 * itself contains `__`, `_`, `-` or `.`.
 */
export const NAME_SEPARATOR = '__';

export interface ToolNameParts {
  toolbox: string;
  server: string;
  tool: string;
}

export function formatToolName(toolbox: string, server: string, tool: string): string {
  return `${toolbox}${NAME_SEPARATOR}${server}${NAME_SEPARATOR}${tool}`;
}

/** Splits a canonical name; `undefined` when it does not have three non-empty parts. */
export function parseToolName(name: string): ToolNameParts | undefined {
  const first = name.indexOf(NAME_SEPARATOR);
  if (first <= 0) return undefined;
  const second = name.indexOf(NAME_SEPARATOR, first + NAME_SEPARATOR.length);
  if (second < 0 || second === first + NAME_SEPARATOR.length) return undefined;
  const tool = name.slice(second + NAME_SEPARATOR.length);
  if (tool.length === 0) return undefined;
  return { toolbox: name.slice(0, first), server: name.slice(first + NAME_SEPARATOR.length, second), tool };
}
