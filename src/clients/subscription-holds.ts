/**
 * Who holds each resource subscription on a downstream connection. A `shared: true` server's connection serves every
 * session with the same client capabilities, and the server keeps one subscription per URI for that connection: a
 * session that unsubscribes must not end it for another session that still holds it (README "Serving over HTTP").
 * Keyed by the connection object, so a connection that is dropped takes its holds with it.
 */
const holds = new WeakMap<object, Map<string, Set<object>>>();

/** Records that `holder` (a session's ClientManager) subscribed to `uri` on `connection`. */
export function holdSubscription(connection: object, uri: string, holder: object): void {
  let uris = holds.get(connection);
  if (!uris) holds.set(connection, (uris = new Map()));
  let holders = uris.get(uri);
  if (!holders) uris.set(uri, (holders = new Set()));
  holders.add(holder);
}

/**
 * `holder` lets go of `uri` on `connection`. True when nobody holds it any longer, so the subscription is to be ended
 * downstream; false while another session still holds it.
 */
export function releaseSubscription(connection: object, uri: string, holder: object): boolean {
  const uris = holds.get(connection);
  const holders = uris?.get(uri);
  if (!holders) return true;
  holders.delete(holder);
  if (holders.size > 0) return false;
  uris!.delete(uri);
  return true;
}
