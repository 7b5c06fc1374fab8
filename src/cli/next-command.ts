import { shellQuote } from '../shared/shell-quote.js';
import { isWorkbenchError } from '../errors.js';

/**
 * The `tools list` an error tells a person to run to see the tool names: with the config it was about named (as
 * `--config`), since every command that starts servers refuses to run without one (README "Use it from your MCP
 * client"). Without a known config, the bare command.
 */
export function toolsListCommand(configSource: string | undefined): string {
  return configSource === undefined ? 'mcp-workbench tools list' : `mcp-workbench tools list --config ${shellQuote(configSource)}`;
}

/** The sentence ending a `tools call` refusal of a name the toolbox or toolset lacks: the command that lists its tools. */
export function toolsListStep(configSource: string | undefined, where: { kind: 'toolbox' | 'toolset'; name: string }): string {
  return `\`${toolsListCommand(configSource)} --${where.kind} ${shellQuote(where.name)}\` lists its tools.`;
}

/**
 * A toolbox or toolset the command was given that the config lacks (TOOLBOX_NOT_FOUND), told the person at the
 * terminal what to run next instead of the model's `Call open_toolbox …`; any other error as it is.
 */
export function withListHint(error: unknown, configSource: string | undefined, flag: '--toolbox' | '--toolset'): unknown {
  if (!isWorkbenchError(error, 'TOOLBOX_NOT_FOUND')) return error;
  return error.withHint(`Pass one of them to ${flag}, or run \`${toolsListCommand(configSource)}\` to see every toolbox and tool.`);
}
