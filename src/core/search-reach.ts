import type { ParsedQuery } from '../catalog/search-query.js';
import type { ToolboxConfig } from '../config/types.js';

/** Most servers a hint names before "and N more". */
const NAMED = 20;

/**
 * The toolboxes and servers a search reaches (README "open_toolbox", Search): `toolbox:` and `server:` qualifiers
 * leave the others out, so they are neither started, waited for, nor named in the answer. `only` is absent when every
 * server of the toolbox is reached.
 */
export function searchReach(toolboxes: readonly ToolboxConfig[], parsed: ParsedQuery): { toolbox: string; only?: Set<string> }[] {
  const reach: { toolbox: string; only?: Set<string> }[] = [];
  for (const toolbox of toolboxes) {
    if (parsed.toolbox && !parsed.toolbox(toolbox.name)) continue;
    if (!parsed.server) {
      reach.push({ toolbox: toolbox.name });
      continue;
    }
    const only = new Set(toolbox.servers.filter((s) => parsed.server!(s.name)).map((s) => s.name));
    if (only.size > 0) reach.push({ toolbox: toolbox.name, only });
  }
  return reach;
}

/**
 * When the query's qualifiers match no configured toolbox and server (within `toolbox` when the search is inside
 * one): a hint that says so and names the servers there are; otherwise undefined.
 */
export function qualifierMiss(toolboxes: readonly ToolboxConfig[], parsed: ParsedQuery, toolbox?: string): string | undefined {
  if (parsed.qualifiers.length === 0) return undefined;
  const within = toolbox === undefined ? toolboxes : toolboxes.filter((t) => t.name === toolbox);
  if (searchReach(within, parsed).length > 0) return undefined;
  const servers = within.flatMap((t) => t.servers.map((s) => (toolbox === undefined ? `${t.name}/${s.name}` : s.name)));
  const named = servers.slice(0, NAMED).join(', ') + (servers.length > NAMED ? `, and ${servers.length - NAMED} more` : '');
  const where = toolbox === undefined ? '' : ` in toolbox "${toolbox}"`;
  return (
    `No server${where} matches ${parsed.qualifiers.join(' ')}. ` +
    `${toolbox === undefined ? 'Servers (toolbox/server)' : 'Its servers'}: ${named || '(none)'}. ` +
    'Qualifiers take a name or a * glob, e.g. server:mem* or toolbox:dev' +
    (toolbox === undefined ? '.' : '; leave out toolbox_name to search every toolbox.')
  );
}
