import { formatToolName, parseToolName } from '../catalog/names.js';
import type { ClientManager } from '../clients/client-manager.js';
import type { ToolboxConfig } from '../config/types.js';
import { compileGlob } from '../shared/glob.js';

/**
 * Whether a canonical name or glob refers to something that exists as far as the workbench knows: the toolbox and
 * server are configured, and — when that server's catalog is loaded — the tool exists (a glob must match one).
 */
export function isKnownToolName(name: string, toolboxes: ReadonlyMap<string, ToolboxConfig>, manager: ClientManager): boolean {
  if (/[*?]/.test(name)) {
    const match = compileGlob(name);
    const loaded = [...toolboxes.values()].flatMap((t) =>
      manager.serverTools(t.name).flatMap(({ server, tools }) => tools.map((tool) => formatToolName(t.name, server, tool.name))),
    );
    // Nothing loaded yet: a glob cannot be checked, so it is not reported as unknown.
    return loaded.length === 0 || loaded.some(match);
  }
  const parts = parseToolName(name);
  const server = parts && toolboxes.get(parts.toolbox)?.servers.find((s) => s.name === parts.server);
  if (!parts || !server) return false;
  const tools = manager.serverTools(parts.toolbox).find((s) => s.server === parts.server)?.tools;
  return tools === undefined || tools.some((t) => t.name === parts.tool);
}
