import { UriTemplate } from '@modelcontextprotocol/client';
import type { ServerNotice } from '../clients/feature-notices.js';

/** Where a resource, prompt or completion request goes: one server of one toolbox. */
export interface Route {
  toolbox: string;
  server: string;
}

/** The `_meta` key naming the toolbox and server of a listed resource, template or prompt (README "Resources"). */
export const SOURCE_META_KEY = 'mcp-workbench/source';

/** Most URIs remembered per session from tool results: the oldest are forgotten first. */
const MAX_LINKS = 10_000;

/** What a server listed last (resources and templates), for routing a URI that no tool result produced. */
export interface Listing {
  uris?: Set<string>;
  templates?: { template: string; matcher: UriTemplate | undefined }[];
}

/**
 * One session's books for resources, prompts and completions: which server produced each URI a downstream result
 * carried (resource links and embedded resources, never rewritten), the resources this session subscribed to and where,
 * the servers' last listings, and which servers are connected (a change of that set changes the lists).
 */
export class FeatureBooks {
  /** URI → the server whose result carried it (the newest wins). */
  readonly links = new Map<string, Route>();
  /** Subscribed URI → the server it was subscribed on. */
  readonly subscriptions = new Map<string, Route>();
  /** `toolbox/server` → what it listed last. */
  readonly listings = new Map<string, Listing>();
  private readonly connected = new Set<string>();

  /**
   * Remembers the URIs a downstream result carries (resource_link items and embedded resources). Cheap: a look at the
   * type of each content item, nothing more.
   */
  noteResult(toolbox: string, server: string, content: unknown): void {
    if (!Array.isArray(content)) return;
    for (const item of content as { type?: unknown; uri?: unknown; resource?: { uri?: unknown } }[]) {
      if (item === null || typeof item !== 'object') continue;
      const type = item.type;
      if (type === 'resource_link') this.noteUri(item.uri, toolbox, server);
      else if (type === 'resource') this.noteUri(item.resource?.uri, toolbox, server);
    }
  }

  /** The same for a prompt's messages, each with one content item. */
  notePromptResult(toolbox: string, server: string, messages: unknown): void {
    if (!Array.isArray(messages)) return;
    this.noteResult(toolbox, server, messages.map((m: { content?: unknown } | null) => m?.content));
  }

  /** Remembers where a URI was found (a result carried it, or a listing routed it): it stays routable while that server is down. */
  noteUri(uri: unknown, toolbox: string, server: string): void {
    if (typeof uri !== 'string') return;
    this.links.delete(uri);
    this.links.set(uri, { toolbox, server });
    if (this.links.size > MAX_LINKS) this.links.delete(this.links.keys().next().value!);
  }

  /** Records a server's resource URIs or templates (from a full listing). */
  noteListing(toolbox: string, server: string, kind: 'uris' | 'templates', items: Record<string, unknown>[]): void {
    const key = `${toolbox}/${server}`;
    const listing = this.listings.get(key) ?? {};
    if (kind === 'uris') listing.uris = new Set(items.map((r) => r.uri).filter((u): u is string => typeof u === 'string'));
    else {
      listing.templates = items
        .map((t) => t.uriTemplate)
        .filter((t): t is string => typeof t === 'string')
        .map((template) => ({ template, matcher: compileTemplate(template) }));
    }
    this.listings.set(key, listing);
  }

  /**
   * A server's tools changed, it connected, or it was lost. Returns what the session must be told: the lists changed
   * when the set of connected servers did; a lost server's subscriptions are dropped, and each subscribed URI is
   * announced as updated so the client reads it again (which reconnects the server) and may subscribe again.
   */
  serverChanged(toolbox: string, server: string, connectedNow: boolean): ServerNotice[] {
    const key = `${toolbox}/${server}`;
    if (connectedNow === this.connected.has(key)) return [];
    this.listings.delete(key);
    const notices: ServerNotice[] = [{ kind: 'resources' }, { kind: 'prompts' }];
    if (connectedNow) {
      this.connected.add(key);
      return notices;
    }
    this.connected.delete(key);
    for (const [uri, route] of this.subscriptions) {
      if (route.toolbox !== toolbox || route.server !== server) continue;
      this.subscriptions.delete(uri);
      notices.push({ kind: 'updated', uri, params: { uri } });
    }
    return notices;
  }

  /**
   * A server's own notice, as this session must hear it: list changes always (the listing is forgotten), an update
   * only for a URI this session subscribed to on that very server.
   */
  fromServer(toolbox: string, server: string, notice: ServerNotice): ServerNotice | undefined {
    if (notice.kind === 'resources') this.listings.delete(`${toolbox}/${server}`);
    if (notice.kind !== 'updated') return notice;
    const route = this.subscriptions.get(notice.uri);
    return route?.toolbox === toolbox && route.server === server ? notice : undefined;
  }
}

/** A session's books and the way to its client, for what its servers announce. */
interface Listener {
  readonly features: FeatureBooks;
  readonly upstream: { notify?(notice: ServerNotice): void } | undefined;
  /** The session's connections, told of the subscriptions a lost server took with it (see subscription-holds). */
  readonly manager?: { releaseSubscription(toolbox: string, server: string, uri: string): boolean };
}

/**
 * A server connected or was lost: the session hears of changed lists and of subscriptions that ended. Returns whether
 * the server's state changed for this session (false for a mere tool list change).
 */
export function serverChanged(books: Listener, toolbox: string, server: string, connected: boolean): boolean {
  const notices = books.features.serverChanged(toolbox, server, connected);
  for (const notice of notices) {
    // A subscription that ended with its server is no longer held: the next process starts with none, so a later
    // unsubscribe by another session must not be kept from reaching it by this stale hold.
    if (notice.kind === 'updated') books.manager?.releaseSubscription(toolbox, server, notice.uri);
    books.upstream?.notify?.(notice);
  }
  return notices.length > 0;
}

/** A server's own resource or prompt notice, to the session if it concerns it. */
export function noticeTo(books: Listener, toolbox: string, server: string, notice: ServerNotice): void {
  const heard = books.features.fromServer(toolbox, server, notice);
  if (heard) books.upstream?.notify?.(heard);
}

/** A template's matcher; undefined for a template the SDK cannot parse (it then matches only itself). */
function compileTemplate(template: string): UriTemplate | undefined {
  try {
    return new UriTemplate(template);
  } catch {
    return undefined;
  }
}
