import { shellQuote } from '../shared/shell-quote.js';

/**
 * The `tools list` an error tells a person to run to see the tool names: with the config it was about named (as
 * `--config`), since every command that starts servers refuses to run without one (README "Use it from your MCP
 * client"). Without a known config, the bare command.
 */
export function toolsListCommand(configSource: string | undefined): string {
  return configSource === undefined ? 'mcp-workbench tools list' : `mcp-workbench tools list --config ${shellQuote(configSource)}`;
}
