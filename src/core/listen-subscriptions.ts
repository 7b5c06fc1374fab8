import { CLIENT_CAPABILITIES_META_KEY, type ClientCapabilities } from '@modelcontextprotocol/client';
import { errorMessage } from '../errors.js';
import type { FeatureScope } from './feature-scope.js';
import { subscribeResource, unsubscribeResource } from './resources.js';

/**
 * Resource subscriptions of a client of MCP 2026-07-28 (README "Resources, prompts and completions"): it names the URIs
 * it wants updates for in `resourceSubscriptions` of a `subscriptions/listen` stream, and the SDK's listen router
 * delivers `notifications/resources/updated` on that stream for those URIs only — but tells its server nothing about
 * them. The workbench reads the listen request at its own framing (stdio: the transport's intercept; HTTP: the POST
 * body) and keeps each URI subscribed on its owning downstream server while any open stream of the client names it.
 */
export class ListenSubscriptions {
  /** Open stream → the URIs it named, and its subscribes (an end waits for them, so nothing is left subscribed). */
  private readonly streams = new Map<unknown, { uris: readonly string[]; ready: Promise<unknown> }>();
  /** URI → how many open streams name it. */
  private readonly held = new Map<string, number>();

  /**
   * @param declare notes the capabilities a listen request declares (in its `_meta`) as the client's before anything
   * is subscribed, so a server the stream starts is told them (as by any other request of the client).
   */
  constructor(
    private readonly scope: () => FeatureScope,
    private readonly declare: (capabilities: ClientCapabilities) => void = () => {},
  ) {}

  /**
   * A listen stream opened (`key`: anything that names it until it ends). Subscribes downstream the URIs no other open
   * stream holds; a URI that cannot be routed or subscribed is a warning in the log (the stream is already
   * acknowledged by then, so it simply never hears of that URI). Resolves when every subscribe has settled.
   */
  opened(key: unknown, params: unknown): Promise<void> {
    const uris = listenedUris(params);
    if (uris.length === 0 || this.streams.has(key)) return Promise.resolve();
    const declared = ((params as { _meta?: Record<string, unknown> } | null | undefined)?._meta ?? {})[CLIENT_CAPABILITIES_META_KEY];
    if (typeof declared === 'object' && declared !== null) this.declare(declared as ClientCapabilities);
    const fresh = uris.filter((uri) => {
      const count = this.held.get(uri) ?? 0;
      this.held.set(uri, count + 1);
      return count === 0;
    });
    const ready = Promise.all(
      fresh.map((uri) =>
        subscribeResource(this.scope(), { uri }).catch((error: unknown) =>
          this.scope().log.warn(`subscriptions/listen: updates of ${JSON.stringify(uri)} cannot be delivered: ${errorMessage(error)}`),
        ),
      ),
    );
    this.streams.set(key, { uris, ready });
    return ready.then(() => {});
  }

  /** A listen stream ended (closed, cancelled, dropped): URIs no open stream names any longer are unsubscribed. */
  async ended(key: unknown): Promise<void> {
    const stream = this.streams.get(key);
    if (!stream) return;
    this.streams.delete(key);
    await stream.ready;
    const released = stream.uris.filter((uri) => {
      const count = (this.held.get(uri) ?? 1) - 1;
      if (count > 0) this.held.set(uri, count);
      else this.held.delete(uri);
      return count <= 0;
    });
    await Promise.all(released.map((uri) => unsubscribeResource(this.scope(), { uri }).catch(() => {})));
  }

  /**
   * The session's servers changed (one connected or was lost): every URI an open stream names that is not subscribed
   * now — it could not be routed when the stream opened, or its server was lost since — is subscribed again. Quiet:
   * the stream's first attempt already said what was wrong.
   */
  async retry(): Promise<void> {
    const scope = this.scope();
    const missing = [...this.held.keys()].filter((uri) => !scope.books.subscriptions.has(uri));
    await Promise.all(
      missing.map((uri) =>
        subscribeResource(scope, { uri }).catch((error: unknown) => scope.log.debug(`subscriptions/listen: ${JSON.stringify(uri)} still not subscribed: ${errorMessage(error)}`)),
      ),
    );
  }

  /** Forgets every stream (the client has gone; its downstream servers close with its scope). */
  clear(): void {
    this.streams.clear();
    this.held.clear();
  }
}

/** The distinct URIs of a listen request's `notifications.resourceSubscriptions` (none when it names none). */
export function listenedUris(params: unknown): string[] {
  const wanted = (params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)?.notifications?.resourceSubscriptions;
  if (!Array.isArray(wanted)) return [];
  return [...new Set(wanted.filter((uri): uri is string => typeof uri === 'string' && uri !== ''))];
}

/**
 * Follows a stdio connection's inbound messages for {@link ListenSubscriptions}: a `subscriptions/listen` request opens
 * a stream (keyed by its id), `notifications/cancelled` of that id ends it. Never takes the message: the SDK serves it.
 */
export function watchListen(listens: ListenSubscriptions, message: { method?: unknown; id?: unknown; params?: unknown }): void {
  if (message.method === 'subscriptions/listen' && message.id !== undefined) void listens.opened(`stdio:${String(message.id)}`, message.params);
  else if (message.method === 'notifications/cancelled') {
    const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
    if (id !== undefined) void listens.ended(`stdio:${String(id)}`);
  }
}
