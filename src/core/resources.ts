import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/client';
import { offers } from '../clients/server-features.js';
import { quoteClientText } from '../shared/client-text.js';
import { SOURCE_META_KEY, type Listing, type Route } from './feature-books.js';
import { aggregate, chosenRoute, forwardTo, type AggregatedList, type FeatureScope } from './feature-scope.js';

/**
 * Resources of the servers a session has connected (README "Resources, prompts and completions"): lists aggregated
 * with each item's toolbox and server in `_meta`; reads and subscriptions routed to the one server that owns a URI.
 * URIs are never rewritten: they appear inside text too, so the client sees them exactly as the server wrote them.
 */

export function listResources(scope: FeatureScope): Promise<AggregatedList> {
  return aggregate(scope, 'resources/list');
}

export function listResourceTemplates(scope: FeatureScope): Promise<AggregatedList> {
  return aggregate(scope, 'resources/templates/list');
}

/** resources/read, routed (see {@link routeUri}); the result as the server sent it. */
export async function readResource(scope: FeatureScope, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const uri = requireUri(params, 'resources/read');
  const route = await routeUri(scope, uri, params._meta);
  const result = await forwardTo(scope, route, 'resources/read', params);
  scope.books.noteResult(route.toolbox, route.server, Array.isArray(result.contents) ? (result.contents as unknown[]).map((resource) => ({ type: 'resource', resource })) : undefined);
  return result;
}

/** resources/subscribe on the URI's server; its updates then reach this session only. */
export async function subscribeResource(scope: FeatureScope, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const uri = requireUri(params, 'resources/subscribe');
  const route = await routeUri(scope, uri, params._meta);
  const capabilities = scope.manager.connectedServers(route.toolbox).find((s) => s.server === route.server)?.capabilities;
  if (capabilities && !offers(capabilities, 'resources/subscribe')) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `server "${route.server}" of toolbox "${route.toolbox}" offers ${quoteClientText(uri)} but does not support resource subscriptions; read it again instead when you need it.`,
    );
  }
  // Held before it is sent: another session's unsubscribe meanwhile must not end it downstream after it lands.
  scope.manager.holdSubscription(route.toolbox, route.server, uri);
  try {
    await forwardTo(scope, route, 'resources/subscribe', { uri });
  } catch (error) {
    if (!scope.books.subscriptions.has(uri)) scope.manager.releaseSubscription(route.toolbox, route.server, uri);
    throw error;
  }
  scope.books.subscriptions.set(uri, route);
  return {};
}

/**
 * resources/unsubscribe: ends this session's subscription (a URI it never subscribed to is already unsubscribed). On a
 * `shared: true` server's connection it is ended downstream only when no other session holds it.
 */
export async function unsubscribeResource(scope: FeatureScope, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const uri = requireUri(params, 'resources/unsubscribe');
  const route = scope.books.subscriptions.get(uri);
  if (!route) return {};
  scope.books.subscriptions.delete(uri);
  if (!scope.manager.releaseSubscription(route.toolbox, route.server, uri)) return {};
  // Only a connected server holds the subscription; one that was lost has none to end.
  if (scope.manager.connectedServers(route.toolbox).some((s) => s.server === route.server)) await forwardTo(scope, route, 'resources/unsubscribe', { uri });
  return {};
}

/**
 * The server a URI belongs to: the one named in `_meta["mcp-workbench/source"]`; else the server whose result in this
 * session carried it; else the single connected server that lists it, or (failing that) whose template matches it.
 * Several candidates or none are an error that names them and says what to do.
 */
export async function routeUri(scope: FeatureScope, uri: string, meta: unknown): Promise<Route> {
  const chosen = chosenRoute(scope, meta);
  if (chosen) return chosen;
  const linked = scope.books.links.get(uri);
  if (linked) return linked;
  const listed: Route[] = [];
  const templated: Route[] = [];
  for (const { route, listing } of await connectedListings(scope)) {
    if (listing.uris?.has(uri)) listed.push(route);
    else if (listing.templates?.some((t) => t.template === uri || t.matcher?.match(uri))) templated.push(route);
  }
  const candidates = listed.length > 0 ? listed : templated;
  if (candidates.length === 1) {
    scope.books.noteUri(uri, candidates[0]!.toolbox, candidates[0]!.server);
    return candidates[0]!;
  }
  const names = (routes: Route[]): string => routes.map((r) => `"${r.toolbox}/${r.server}"`).join(', ');
  if (candidates.length > 1) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Resource ${quoteClientText(uri)} is offered by more than one server: ${names(candidates)}. Name the one you mean in ` +
        `params._meta["${SOURCE_META_KEY}"] (for example ${names(candidates.slice(0, 1))}), or use the link a tool of that server returned.`,
    );
  }
  const connected = scope.toolboxes.flatMap((t) => scope.manager.connectedServers(t.name).map((s) => ({ toolbox: t.name, server: s.server })));
  throw new ResourceNotFoundError(
    uri,
    `Resource ${quoteClientText(uri)} is not known to this session: no tool result here carried it, and no connected server ` +
      `(${connected.length > 0 ? names(connected) : 'none yet'}) lists it or has a template that matches it. Open the toolbox whose server offers it ` +
      '(open_toolbox), or call the tool that returns the link, then read it again.',
  );
}

/** The servers that own a resource template (listed by it exactly), among the connected ones. */
export async function templateOwners(scope: FeatureScope, template: string): Promise<Route[]> {
  return (await connectedListings(scope)).filter(({ listing }) => listing.templates?.some((t) => t.template === template)).map(({ route }) => route);
}

/**
 * The listings of the connected servers that offer resources, listing those this session does not hold yet (a server
 * removed by a reload, or lost, is not among them).
 */
async function connectedListings(scope: FeatureScope): Promise<{ route: Route; listing: Listing }[]> {
  const routes = scope.toolboxes.flatMap((t) =>
    scope.manager
      .connectedServers(t.name)
      .filter((s) => offers(s.capabilities, 'resources/list'))
      .map((s) => ({ toolbox: t.name, server: s.server })),
  );
  if (routes.some((r) => !isComplete(scope, `${r.toolbox}/${r.server}`))) await Promise.all([listResources(scope), listResourceTemplates(scope)]);
  return routes.flatMap((route) => {
    const listing = scope.books.listings.get(`${route.toolbox}/${route.server}`);
    return listing ? [{ route, listing }] : [];
  });
}

function isComplete(scope: FeatureScope, key: string): boolean {
  const listing = scope.books.listings.get(key);
  return listing?.uris !== undefined && listing.templates !== undefined;
}

function requireUri(params: Record<string, unknown>, method: string): string {
  if (typeof params.uri !== 'string' || params.uri === '') {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${method} needs params.uri, a non-empty string (a URI from resources/list or from a tool result).`);
  }
  return params.uri;
}
