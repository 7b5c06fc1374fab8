import type { CallToolResult } from '@modelcontextprotocol/client';
import type { ServerTools } from '../clients/types.js';
import { quoteClientText } from '../shared/client-text.js';
import { errorResult } from './tool-entry.js';
import type { NextSteps } from './next-steps.js';

/**
 * use_tool's answer for a name that is a tool its server listed but the workbench left out (README "open_toolbox",
 * `servers_partial`): not "unknown tool", which would send the model looking for a typo, but that it exists, why it
 * cannot be called, and what to do. `server` narrows the search to one server (a canonical name); without it, every
 * connected server of the toolbox is looked at (a bare name). Undefined when no connected server left out that name.
 */
export function leftOutRefusal(steps: NextSteps, listed: readonly ServerTools[], toolbox: string, toolName: string, tool: string, server?: string): CallToolResult | undefined {
  for (const s of listed) {
    if (server !== undefined && s.server !== server) continue;
    const reason = s.leftOut.get(tool);
    if (reason === undefined) continue;
    const hint = steps.leftOut(toolbox);
    return errorResult(
      `Tool ${quoteClientText(toolName)} exists on server "${s.server}" of toolbox "${toolbox}", but it was left out of the tools offered and cannot be called: it ${reason}, so no call to it could be made correctly. ${hint}`,
      'TOOL_NOT_FOUND',
      { toolbox, server: s.server, tool, hint },
    );
  }
  return undefined;
}
