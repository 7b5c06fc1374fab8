import type { FullEntry } from '../../src/catalog/catalog-index.js';

/**
 * Toolboxes as a user's config groups servers: several servers of one kind of work in one toolbox (the README's example
 * puts filesystem and memory together in `dev`). The benchmark's "grouped" figures search the toolbox of the query's
 * server here, where the other servers' tools compete with the right one. Every corpus server is in exactly one group
 * (a test checks it); the grouping is by what the servers are for, not by the queries.
 */
export const GROUPS: Readonly<Record<string, readonly string[]>> = {
  browser: ['playwright', 'playwright-ea', 'puppeteer', 'browsermcp', 'chrome-devtools', 'browser-tools', 'mobile'],
  code: ['github', 'gitlab-community', 'git', 'circleci'],
  local: ['filesystem', 'desktop-commander', 'memory', 'everything', 'code-runner', 'sequential-thinking'],
  office: ['ms-365', 'slack', 'notion', 'airtable', 'hubspot', 'taskmanager'],
  data: ['mongodb', 'postgres', 'aws-kb'],
  web: ['brave', 'brave-search', 'tavily', 'exa', 'firecrawl', 'context7'],
  places: ['google-maps', 'mapbox', 'airbnb'],
  ops: ['datadog', 'sentry', 'kubernetes', 'launchdarkly'],
  make: ['figma', 'everart', 'chart', 'shopify-dev'],
};

/** Each group's tools in one list (the servers' own entries, concatenated), and the group of each server. */
export function groupedToolboxes(toolboxes: ReadonlyMap<string, readonly FullEntry[]>): { groups: Map<string, FullEntry[]>; groupOf: Map<string, string> } {
  const groups = new Map<string, FullEntry[]>();
  const groupOf = new Map<string, string>();
  for (const [group, servers] of Object.entries(GROUPS)) {
    groups.set(group, servers.flatMap((server) => toolboxes.get(server) ?? []));
    for (const server of servers) groupOf.set(server, group);
  }
  return { groups, groupOf };
}
