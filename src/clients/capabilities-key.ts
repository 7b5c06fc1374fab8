import type { ClientCapabilities } from '@modelcontextprotocol/client';

/**
 * A stable name for the capabilities a downstream connection was made with: the relayable ones the upstream client
 * declared (sampling, elicitation and its modes, roots) plus tasks. A server may list other tools for other
 * capabilities (server-everything adds its sampling and elicitation tools only for clients that can serve them), so
 * connections are shared, and cached tool lists reused, only under the same key (README "Catalog cache").
 */
export function capabilitiesKey(capabilities: ClientCapabilities | undefined): string {
  if (!capabilities) return '{}';
  const { sampling, elicitation, roots, tasks } = capabilities as Record<string, unknown>;
  return stableJson({ sampling, elicitation, roots, tasks });
}

/** JSON with object keys sorted at every level and undefined members left out. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
