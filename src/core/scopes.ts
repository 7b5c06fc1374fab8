import { ClientManager, type ClientManagerOptions } from '../clients/client-manager.js';
import { EraMemory } from '../clients/era-memory.js';
import { ConnectWarnings, type ConnectTally } from '../clients/connect-warnings.js';
import { OrphanReaper } from '../clients/orphan-reaper.js';
import { SharedServers } from '../clients/shared-servers.js';
import type { ToolsChange } from '../clients/types.js';
import type { StartSteps } from '../clients/start-steps.js';
import type { CatalogCache } from '../catalog/catalog-cache.js';
import type { WorkbenchConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { OAuthContext } from '../oauth/sign-in.js';
import type { Scope, SessionScope } from './scope.js';
import { CallsInFlight, deliverLog, scopeRelay, sharedActivityKey, sharedLogRouter, sharedRelay, trackCall, type CallContext, type UpstreamSession } from './session-routing.js';
import { FeatureBooks, noticeTo, serverChanged } from './feature-books.js';
import type { FeatureScope } from './feature-scope.js';
import { ShownLists } from './shown-lists.js';
import { SearchMemory } from './tool-search.js';
import { userPlace } from '../clients/user-places.js';

export interface ScopesOptions {
  config: WorkbenchConfig;
  env: Record<string, string | undefined>;
  log: Logger;
  version: string;
  maxMessageBytes?: number;
  noiseWindowMs?: number;
  catalogCache?: CatalogCache;
  /** OAuth sign-ins of remote servers (README "Remote servers behind OAuth"); none without it. */
  oauth?: OAuthContext;
  /** Where each user's folder (`${user:dir}`) is made: the state file's folder's `users`. */
  usersDir: string;
  /** What a server that cannot start tells its reader to do next (SlotOptions.startSteps); the model's words without it. */
  startSteps?: StartSteps;
  /**
   * A server's tools changed in `scope` (connected, refreshed, lost): its catalogs and views must follow. `keep`:
   * whether the list may be kept in the catalog cache, which every session reads: the root's (one user) and a shared
   * server's always; an isolated session's own server's only as listed on connecting, since one read again later may
   * hold tools the server added for that session (README "Catalog cache").
   */
  onToolsChanged(scope: Scope, toolbox: string, server: string, keep: boolean): void;
}

/**
 * Every client session's downstream connections: the root scope (stdio and the CLI), one scope per isolated session
 * (HTTP), and the pool of `shared: true` servers and the orphan reaper those sessions share. It knows who owns which
 * connection and where a server's requests and log messages go; what a session may see is the Workbench's concern.
 */
export class Scopes {
  readonly root: Scope;
  /** Every scope, the root's included: a change of tools or state reaches all their catalogs. */
  private readonly all = new Set<Scope>();
  /** Every isolated session's scope, open or closed (a closed one's requests are refused by its closed connections). */
  private readonly made = new WeakSet<SessionScope>();
  /** Made on the first isolated session: the `shared: true` servers, and one orphan reaper for all sessions. */
  private pool: { shared: SharedServers; reaper: OrphanReaper; activity: Map<string, CallsInFlight> } | undefined;
  /** `toolbox/server` of every `shared: true` server. */
  private sharedKeys: Set<string>;
  /** Every server's protocol era, for all sessions' connections (persisted in the catalog cache when there is one). */
  private readonly eras: EraMemory;
  /** Which failed connects were warned about: once per process and cause, however many sessions connect a server. */
  private readonly connectWarnings = new ConnectWarnings();
  private config: WorkbenchConfig;
  /** Downstream servers connected again after they had been connected (crashed or lost), since start. */
  private restarts = 0;

  constructor(private readonly options: ScopesOptions) {
    this.config = options.config;
    this.eras = new EraMemory(options.catalogCache);
    this.sharedKeys = sharedKeysOf(options.config);
    this.root = this.create(undefined);
  }

  [Symbol.iterator](): Iterator<Scope> {
    return this.all[Symbol.iterator]();
  }

  /**
   * Opens a client session. Not isolated (stdio: the only session), it uses the root's connections. Isolated (HTTP),
   * it gets connections of its own for every server that is not `shared`, started on first use and ended by
   * `close()`; requests and log messages of those servers go to this session only.
   */
  open(upstream: UpstreamSession, options: { isolated: boolean; principal?: string }): SessionScope {
    if (!options.isolated) {
      this.root.upstream = upstream;
      return {
        manager: this.root.manager,
        close: async () => {
          if (this.root.upstream === upstream) this.root.upstream = undefined;
        },
      };
    }
    return this.create(upstream, options.principal);
  }

  /**
   * The scope of a session: the root for none (the CLI) or for one that is not isolated (stdio: the workbench's own
   * user); an isolated session's own otherwise — also once it has closed, never another's. A closed one's connections
   * are closed: its late requests are refused there (`SHUTTING_DOWN`, saying to start a new session), not served from
   * the root's (the stdio user's processes and `${user:dir}`). Never throws, so late work of a session (a listen stream
   * ending after it closed) cannot fail on the lookup itself.
   */
  of(session: SessionScope | undefined): Scope {
    return session !== undefined && this.made.has(session) ? (session as Scope) : this.root;
  }

  /** What resource, prompt and completion requests of a scope work with (README "Resources, prompts and completions"). */
  featureScope(scope: Scope): FeatureScope {
    const cache = this.options.catalogCache;
    return { manager: scope.manager, books: scope.features, toolboxes: this.config.toolboxes, log: this.options.log, keepsLists: scope === this.root, ...(cache && { cache }) };
  }

  /**
   * Runs a forwarded call while recording it as in flight on its server (in the books of whoever routes that server's
   * requests: the scope, or the shared pool). Returns the call's own promise (the bookkeeping hangs off it), so the
   * hot path gains no promise turn.
   */
  tracked<T>(scope: Scope, toolbox: string, server: string, call: CallContext | undefined, run: () => Promise<T>): Promise<T> {
    if (!call) return run();
    const key = `${toolbox}/${server}`;
    // A shared server's connection is one per set of client capabilities: its calls are tracked under that set's key.
    if (scope !== this.root && this.pool && this.sharedKeys.has(key) && !scope.manager.ownsSlot(toolbox, server)) {
      return trackCall(this.pool.activity, sharedActivityKey(key, scope.manager.capabilitiesKey()), call, run);
    }
    return trackCall(scope.activity, key, call, run);
  }

  /**
   * Every scope and the shared pool switch to `config`; returns what changed for the root's connections. Each session
   * is told of the tools it was shown of servers `config` no longer has (as `shownBefore`, the rules until now, let
   * it see them) in its next open_toolbox answer's `catalog_changes`.
   */
  reload(config: WorkbenchConfig, shownBefore: (toolbox: string, server: string, tool: string) => boolean): { replaced: string[]; removed: string[] } {
    const servers = new Set(config.toolboxes.flatMap((t) => t.servers.map((s) => `${t.name}/${s.name}`)));
    for (const scope of this.all) scope.shown.dropRemoved((toolbox, server) => servers.has(`${toolbox}/${server}`), shownBefore);
    this.config = config;
    this.sharedKeys = sharedKeysOf(config);
    this.pool?.shared.reload(config);
    let outcome = { replaced: [] as string[], removed: [] as string[] };
    for (const scope of this.all) {
      scope.catalogs.clear();
      const changed = scope.manager.reload(config);
      if (scope === this.root) outcome = changed;
      // A replaced or removed server is lost to the session as by a crash: its subscriptions end, each subscribed URI
      // is announced as updated (read it again, subscribe again), and a listen stream subscribes on the new process.
      for (const label of [...changed.replaced, ...changed.removed]) {
        const slash = label.indexOf('/');
        serverChanged(scope, label.slice(0, slash), label.slice(slash + 1), false);
      }
    }
    return outcome;
  }

  /** The downstream connects of every session since start: how many succeeded, and which servers failed how often. */
  connectTally(): ConnectTally {
    return this.connectWarnings.tally();
  }

  /** How many times a downstream server was connected again after it had been connected (a crash, a lost link). */
  restartCount(): number {
    return this.restarts;
  }

  /**
   * Downstream connections open now across every session; a `shared: true` server's connection counts once per set of
   * client capabilities (it runs once per set), and not at all again for a session that got one of its own.
   */
  connectionCount(): number {
    const seen = new Set<string>();
    let count = 0;
    for (const scope of this.all) {
      for (const toolbox of this.config.toolboxes) {
        for (const server of toolbox.servers) {
          if (!scope.manager.isConnected(toolbox.name, server.name)) continue;
          const key = `${toolbox.name}/${server.name}`;
          if (scope !== this.root && this.sharedKeys.has(key) && !scope.manager.ownsSlot(toolbox.name, server.name)) {
            const shared = `${key}\0${scope.manager.capabilitiesKey()}`;
            if (seen.has(shared)) continue;
            seen.add(shared);
          }
          count++;
        }
      }
    }
    return count;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...[...this.all].map((s) => s.close()), this.pool?.shared.close()]);
    this.pool?.reaper.close();
  }

  private create(upstream: UpstreamSession | undefined, principal = 'local'): Scope {
    const pool = upstream ? this.sharedPool() : undefined;
    const books: Omit<Scope, 'manager' | 'close'> = { catalogs: new Map(), activity: new Map(), upstream, shown: new ShownLists(), features: new FeatureBooks(), search: new SearchMemory() };
    const manager: ClientManager = new ClientManager({
      ...this.connectionOptions(),
      // One of many sessions (HTTP): starts of a server that started fine before are told at debug.
      quietStarts: upstream !== undefined,
      onRestarted: () => void this.restarts++,
      onToolsChanged: (toolbox, server, why) => this.options.onToolsChanged(scope, toolbox, server, scope === this.root || why === 'connected'),
      onServerNotice: (toolbox, server, notice) => noticeTo(books, toolbox, server, notice),
      onLogMessage: (toolbox, server, params) => {
        const logger = params.logger ? `${toolbox}/${server}/${params.logger}` : `${toolbox}/${server}`;
        deliverLog(books.activity.get(`${toolbox}/${server}`), books.upstream, { ...params, logger });
      },
      upstream: scopeRelay(books, this.options.log),
      user: userPlace(principal, this.options.usersDir),
      ...(pool ? { shared: pool.shared, groups: pool.reaper } : {}),
    });
    const scope: Scope = Object.assign(books, {
      manager,
      close: async (): Promise<void> => {
        this.all.delete(scope);
        books.upstream = undefined;
        await manager.close();
      },
    });
    this.all.add(scope);
    this.made.add(scope);
    return scope;
  }

  /** What every set of downstream connections is made with: the config in effect, env, log and limits. */
  private connectionOptions(): Pick<ClientManagerOptions, 'config' | 'env' | 'log' | 'clientInfo' | 'maxMessageBytes' | 'noiseWindowMs' | 'eras' | 'connectWarnings' | 'oauth' | 'startSteps'> {
    const { env, log, version, maxMessageBytes, noiseWindowMs, oauth, startSteps } = this.options;
    const connects = { config: this.config, env, log, clientInfo: { name: 'mcp-workbench', version }, maxMessageBytes, noiseWindowMs, eras: this.eras, connectWarnings: this.connectWarnings };
    return { ...connects, ...(oauth && { oauth }), ...(startSteps && { startSteps }) };
  }

  /**
   * The tools of a shared server's connection for the client capabilities `set` changed. One list for every session
   * that uses that connection: kept as it changes — unless it is private (the server lists for one user): then, as an
   * isolated session's own list, only as listed on connecting, since one read again may hold tools the server added
   * for the user whose call changed it. Sessions of another set use another connection, and a session with a
   * connection of its own reads its own list: they are not told of this change (it is not about what they use).
   */
  private sharedToolsChanged(set: string, toolbox: string, server: string, why: ToolsChange): void {
    for (const scope of this.all) {
      if (scope.manager.capabilitiesKey() !== set || scope.manager.ownsSlot(toolbox, server)) continue;
      const keep = why === 'connected' || !listsPrivately(scope, toolbox, server);
      this.options.onToolsChanged(scope, toolbox, server, keep);
    }
  }

  /** The `shared: true` servers of isolated sessions, made once. */
  private sharedPool(): NonNullable<Scopes['pool']> {
    if (this.pool) return this.pool;
    const reaper = new OrphanReaper(this.options.log);
    const activity = new Map<string, CallsInFlight>();
    const shared = new SharedServers({
      ...this.connectionOptions(),
      // One process for every user: its `${user:…}` are those of user `shared`.
      user: userPlace('shared', this.options.usersDir),
      groups: reaper,
      quietStarts: true,
      onRestarted: () => void this.restarts++,
      routing: (set) => ({
        onLogMessage: sharedLogRouter(activity, this.options.log, set),
        upstream: sharedRelay(activity, this.options.log, set),
        onToolsChanged: (toolbox, server, why) => this.sharedToolsChanged(set, toolbox, server, why),
        // A notice of one set's connection (one process) reaches the sessions that use it; an update only those of them
        // subscribed to it. A session of another set, or with a connection of its own, hears its own process instead.
        onServerNotice: (toolbox, server, notice) => {
          for (const scope of this.all) {
            if (scope.manager.capabilitiesKey() === set && !scope.manager.ownsSlot(toolbox, server)) noticeTo(scope, toolbox, server, notice);
          }
        },
      }),
    });
    return (this.pool = { shared, reaper, activity });
  }
}

/** Whether the server's tool list as this scope has it is marked `cacheScope: "private"` (or is not listed at all). */
function listsPrivately(scope: Scope, toolbox: string, server: string): boolean {
  const listed = scope.manager.isConnected(toolbox, server) ? scope.manager.serverTools(toolbox).find((s) => s.server === server) : undefined;
  return listed === undefined || listed.cacheScope === 'private';
}

/** `toolbox/server` of every `shared: true` server. */
function sharedKeysOf(config: WorkbenchConfig): Set<string> {
  return new Set(config.toolboxes.flatMap((t) => t.servers.filter((s) => s.shared).map((s) => `${t.name}/${s.name}`)));
}
