import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { formatToolName, parseToolName } from '../catalog/names.js';
import type { ServerConfig, ToolboxConfig } from '../config/types.js';
import { quoteClientText } from '../shared/client-text.js';
import { compileGlob } from '../shared/glob.js';
import { cachedPrompts, keepPrompts } from './cached-prompts.js';
import type { Route } from './feature-books.js';
import { aggregate, forwardTo, withSource, type AggregatedList, type FeatureScope } from './feature-scope.js';

/**
 * Prompts of the servers a session has connected, named `{toolbox}__{server}__{prompt}` like tools (README
 * "Resources, prompts and completions"). `disabledPrompts` of the server and of its toolbox hide a prompt (the
 * disabled-tool rules do not apply to prompts). prompts/get connects its server on demand.
 */

/**
 * prompts/list: every enabled prompt of every connected server, under its workbench name (each live list kept in the
 * catalog cache), then those of the servers not connected here whose prompt list is cached — read from disk, nothing
 * started. A cached list may be kept by the client only while the server's own hint said it was fresh.
 */
export async function listPrompts(scope: FeatureScope): Promise<AggregatedList> {
  const named = (item: Record<string, unknown>, route: Route, toolbox: ToolboxConfig): Record<string, unknown> | undefined => {
    if (typeof item.name !== 'string') return undefined;
    const server = toolbox.servers.find((s) => s.name === route.server);
    if (!server || promptDisabled(toolbox, server, item.name)) return undefined;
    return { ...item, name: formatToolName(route.toolbox, route.server, item.name) };
  };
  const [live, cached] = await Promise.all([aggregate(scope, 'prompts/list', named, (route, list) => scope.keepsLists && keepPrompts(scope, route, list)), cachedPrompts(scope)]);
  for (const { route, toolbox, prompts, ttlMs } of cached) {
    // A server that connected while the files were read is in the live list already.
    if (scope.manager.isConnected(route.toolbox, route.server)) continue;
    live.ttlMs = Math.min(live.ttlMs, ttlMs);
    for (const prompt of prompts) {
      const kept = named(prompt, route, toolbox);
      if (kept) live.items.push(withSource(kept, route));
    }
  }
  return live;
}

/** prompts/get by workbench name: the server's own answer, as it came. */
export async function getPrompt(scope: FeatureScope, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { route, name } = resolvePrompt(scope, params.name, 'prompts/get');
  const result = await forwardTo(scope, route, 'prompts/get', { ...params, name });
  scope.books.notePromptResult(route.toolbox, route.server, result.messages);
  return result;
}

/**
 * The server and downstream name of a workbench prompt name. Throws InvalidParams for a malformed name, an unknown
 * toolbox or server, or a disabled prompt, saying what to do.
 */
export function resolvePrompt(scope: FeatureScope, raw: unknown, method: string): { route: Route; name: string } {
  const parts = typeof raw === 'string' ? parseToolName(raw) : undefined;
  if (!parts) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `${method} needs a prompt name of the form {toolbox}__{server}__{prompt}, as prompts/list gives it; got ${quoteClientText(String(raw), 120)}.`,
    );
  }
  const toolbox = scope.toolboxes.find((t) => t.name === parts.toolbox);
  const server = toolbox?.servers.find((s) => s.name === parts.server);
  if (!toolbox || !server) {
    const where = toolbox ? `toolbox "${toolbox.name}" has no server "${parts.server}" (its servers: ${toolbox.servers.map((s) => s.name).join(', ')})` : `there is no toolbox "${parts.toolbox}" (toolboxes: ${scope.toolboxes.map((t) => t.name).join(', ') || 'none'})`;
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt ${quoteClientText(raw as string)}: ${where}. Call prompts/list for the valid names.`);
  }
  if (promptDisabled(toolbox, server, parts.tool)) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Prompt ${quoteClientText(raw as string)} is disabled by "disabledPrompts" in the workbench config (server "${server.name}" or toolbox "${toolbox.name}"). Remove the pattern there to use it.`,
    );
  }
  return { route: { toolbox: toolbox.name, server: server.name }, name: parts.tool };
}

/** Whether a `disabledPrompts` pattern of the server or its toolbox matches the prompt's own or workbench name. */
function promptDisabled(toolbox: ToolboxConfig, server: ServerConfig, prompt: string): boolean {
  const patterns = [...(server.disabledPrompts ?? []), ...(toolbox.disabledPrompts ?? [])];
  if (patterns.length === 0) return false;
  const full = formatToolName(toolbox.name, server.name, prompt);
  return patterns.some((pattern) => {
    const matches = compileGlob(pattern);
    return matches(prompt) || matches(full);
  });
}
