import type { CallToolResult, Client, ServerCapabilities } from '@modelcontextprotocol/client';
import type { FeatureList } from './server-features.js';
import type { ServerConfig, ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import { quoteClientText } from '../shared/client-text.js';
import { createRedactor, type Redact } from '../shared/redact.js';
import { OrphanReaper, type GroupTracker } from './orphan-reaper.js';
import { failedServer } from './server-failure.js';
import { capabilitiesKey } from './capabilities-key.js';
import { ServerSlot, type SlotStatus } from './server-slot.js';
import { SharedServers, launchKey } from './shared-servers.js';
import { holdSubscription, releaseSubscription } from './subscription-holds.js';
import type { CallOptions, OpenResult, ServerTools, SlotOptions } from './types.js';
import { namesUser, type UserPlace } from './user-places.js';

export type { CallOptions, OpenResult, RelayedMethod, RelayedRequest, ServerTools, SlotOptions, UpstreamRelay } from './types.js';
export type { FailedServer } from './server-failure.js';

export interface ClientManagerOptions extends SlotOptions {
  /**
   * Where the connections of `shared: true` servers come from (one per server for every session, see
   * {@link SharedServers}). Without it every server gets a connection of this manager's own.
   */
  shared?: SharedServers;
}

/**
 * How a slot is asked for: to `use` it (connect, call, subscribe), which binds the session to the shared connection it
 * gets, or to `look` at it (connected? its tools, status), which binds nothing.
 */
type Reach = 'use' | 'look';

/** A toolbox's config and the slots of its servers (a `shared` server's only once it turned private: see slotOf). */
interface Toolbox {
  config: ToolboxConfig;
  slots: Map<string, ServerSlot>;
  /** The shared connections (SharedServers) this manager has used, kept until a reload (see slotOf). */
  attached: Map<string, ServerSlot>;
}

/**
 * Owns every downstream connection. Nothing is spawned until a toolbox is opened or a tool is called; concurrent
 * requests for one server share one connect; a server that dies is reconnected on next use with backoff; `close()`
 * ends every child and its descendants.
 */
export class ClientManager {
  private toolboxes = new Map<string, Toolbox>();
  /** The slots this manager owns and closes (not those of shared servers). */
  private own = new Set<ServerSlot>();
  private closing = false;
  /** Servers dropped by a reload, finishing their calls in flight before they close. */
  private readonly retiring = new Set<ServerSlot>();
  /** Ends the children's process groups if this process dies without closing them (unless given `groups`). */
  private readonly reaper: OrphanReaper | undefined;
  private readonly groups: GroupTracker;
  private redact: Redact;
  /** The connection each resource subscription of this session was made on, by `toolbox/server` and URI. */
  private readonly subscriptions = new Map<string, { slot: ServerSlot; uri: string }>();

  constructor(private readonly options: ClientManagerOptions) {
    this.reaper = options.groups ? undefined : new OrphanReaper(options.log);
    const groups = (this.groups = options.groups ?? this.reaper!);
    // Every message about a server (results, logs, doctor) passes through this: URLs, headers and env values hidden.
    this.redact = createRedactor(options.config.secrets);
    for (const toolbox of options.config.toolboxes) {
      const slots = new Map<string, ServerSlot>();
      for (const server of toolbox.servers) {
        // A shared server's connection is picked on first use, when the client's capabilities are known.
        if (server.shared && options.shared) continue;
        const slot = new ServerSlot(toolbox.name, server, options, groups, this.redact);
        this.own.add(slot);
        slots.set(server.name, slot);
      }
      this.toolboxes.set(toolbox.name, { config: toolbox, slots, attached: new Map() });
    }
  }

  /** The capabilities key (see capabilitiesKey) this manager's connections declare: its client's. */
  capabilitiesKey(): string {
    return capabilitiesKey(this.options.upstream?.capabilities());
  }

  /**
   * The slots of a toolbox in config order. A `shared` server's slot comes from SharedServers, one per set of client
   * capabilities; a server whose list turned out private gets a slot of this manager's own, kept from then on.
   */
  private slotsOf(toolbox: Toolbox, reach: Reach): ServerSlot[] {
    if (toolbox.slots.size === toolbox.config.servers.length) return [...toolbox.slots.values()];
    return toolbox.config.servers.map((server) => this.slotOf(toolbox, server.name, reach)!);
  }

  private slotOf(toolbox: Toolbox, server: string, reach: Reach): ServerSlot | undefined {
    const own = toolbox.slots.get(server);
    if (own) return own;
    const config = toolbox.config.servers.find((s) => s.name === server);
    if (!config) return undefined;
    // A session keeps the shared connection it has used, even once its list turned out private: only sessions that had
    // not used it yet get a connection of their own (the one that connected it is answered from it, not left waiting).
    const attached = toolbox.attached.get(server);
    if (attached) return attached;
    const shared = this.options.shared?.slot(toolbox.config.name, config, this.options.upstream?.capabilities() ?? {});
    if (shared) {
      // A look (a prompts/list, a /metrics scrape) binds nothing: a session that never used the connection must not
      // keep it, and be answered from it, once another user's session finds its list private.
      if (reach === 'use') toolbox.attached.set(server, shared);
      return shared;
    }
    const slot = new ServerSlot(toolbox.config.name, config, this.options, this.groups, this.redact);
    this.own.add(slot);
    toolbox.slots.set(server, slot);
    return slot;
  }

  /**
   * What a list of the server is filed under in the catalog cache besides its entry (README "Catalog cache"): the
   * client capabilities it was listed for and, for an entry naming `${user:…}`, the user its connection serves (this
   * manager's, or `shared`): that server was started as one user's and may list that user's own tools.
   */
  listContext(toolbox: string, server: ServerConfig, capabilities = this.capabilitiesKey()): string {
    if (!namesUser(server)) return capabilities;
    return `${capabilities}\0user:${this.userOf(toolbox, server.name).id}`;
  }

  /** The user whose `${user:…}` the server's connection of this manager is started with: this manager's, or `shared`. */
  userOf(toolbox: string, server: string): UserPlace {
    const entry = this.toolboxes.get(toolbox);
    return (entry && this.slotOf(entry, server, 'look'))?.user ?? this.options.user;
  }

  /** Whether this manager has a connection of its own to the server (always, but for a `shared: true` one still shared). */
  ownsSlot(toolbox: string, server: string): boolean {
    return this.toolboxes.get(toolbox)?.slots.has(server) ?? false;
  }

  toolboxNames(): string[] {
    return [...this.toolboxes.keys()];
  }

  /** Connects every server of the toolbox in parallel (each at most once at a time) and reports which failed. */
  async openToolbox(name: string): Promise<OpenResult> {
    const slots = this.slotsOf(this.requireToolbox(name), 'use');
    const settled = await Promise.allSettled(slots.map((slot) => this.ensureCurrent(name, slot.config.name, slot)));
    const result: OpenResult = { connected: [], failed: [] };
    settled.forEach((outcome, i) => {
      const server = slots[i]!.config.name;
      if (outcome.status === 'fulfilled') result.connected.push(server);
      else result.failed.push(failedServer(server, outcome.reason));
    });
    return result;
  }

  /**
   * Connects a slot; when a config reload replaced or removed it while it was starting (its connect then ends as
   * the slot closes), waits for the server's new slot instead, or says the server was removed — never "shutting
   * down" for a workbench that is not.
   */
  private async ensureCurrent(toolbox: string, server: string, slot: ServerSlot, again = false): Promise<void> {
    try {
      await slot.ensure();
    } catch (error) {
      const entry = this.closing || again ? undefined : this.toolboxes.get(toolbox);
      const now = entry && this.slotOf(entry, server, 'use');
      if (this.closing || again || now === slot) throw error;
      if (!now) {
        throw new WorkbenchError('TOOL_NOT_FOUND', `server "${server}" of toolbox "${toolbox}" was removed from the config while it was starting; open_toolbox shows what the config holds now`, { cause: error });
      }
      await this.ensureCurrent(toolbox, server, now, true);
    }
  }

  /** Connects one server of a toolbox (sharing any connect in flight); resolves with the failure, if any. */
  async connectServer(toolbox: string, server: string): Promise<WorkbenchError | undefined> {
    const slot = this.slotOf(this.requireToolbox(toolbox), server, 'use');
    if (!slot) return new WorkbenchError('TOOL_NOT_FOUND', `toolbox "${toolbox}" has no server "${server}"`);
    return this.ensureCurrent(toolbox, server, slot).then(
      () => undefined,
      (error: unknown) => (error instanceof WorkbenchError ? error : new WorkbenchError('CONNECT_FAILED', errorMessage(error), { cause: error })),
    );
  }

  /**
   * The tool lists of the toolbox's currently connected servers, in config order, with a modern server's caching hints.
   * `cacheScope: 'private'` means the list is for one authorization context: the catalog cache files it under a hash
   * of the server's credentials and the client's capabilities (README "Catalog cache"), and a `shared: true` server
   * with such a list gets a connection per session.
   */
  serverTools(toolbox: string): ServerTools[] {
    return this.slotsOf(this.requireToolbox(toolbox), 'look')
      .filter((slot) => slot.tools !== undefined)
      .map((slot) => ({
        server: slot.config.name,
        tools: slot.tools!,
        duplicates: slot.listing.duplicates,
        notes: slot.listing.notes,
        leftOut: slot.listing.leftOut,
        capabilitiesKey: slot.capabilitiesKey!,
        ...(slot.cacheScope ? { cacheScope: slot.cacheScope } : {}),
        ...(slot.ttlMs !== undefined ? { ttlMs: slot.ttlMs } : {}),
      }));
  }

  /** Reads again the lists of the toolbox's modern servers whose ttlMs has passed (before open_toolbox shows them). */
  async refreshExpired(toolbox: string): Promise<void> {
    const slots = this.slotsOf(this.requireToolbox(toolbox), 'look').filter((slot) => slot.listExpired);
    if (slots.length > 0) await Promise.all(slots.map((slot) => slot.refreshExpired()));
  }

  /** The protocol era and version each connected server of the toolbox speaks (for doctor). */
  serverEras(toolbox: string): { server: string; era: 'legacy' | 'modern'; protocolVersion?: string }[] {
    return this.slotsOf(this.requireToolbox(toolbox), 'look').flatMap((slot) => {
      const era = slot.era;
      return era ? [{ server: slot.config.name, ...era }] : [];
    });
  }

  /** Whether a server is currently connected (used to decide if a toolbox needs opening). */
  isConnected(toolbox: string, server: string): boolean {
    const entry = this.toolboxes.get(toolbox);
    return entry !== undefined && this.slotOf(entry, server, 'look')?.tools !== undefined;
  }

  /** Where each server of the toolbox stands (connected, starting, failed, idle), in config order. */
  serverStatus(toolbox: string): { server: string; status: SlotStatus }[] {
    return this.slotsOf(this.requireToolbox(toolbox), 'look').map((slot) => ({ server: slot.config.name, status: slot.status }));
  }

  /**
   * Forwards one tools/call. Resolves with the downstream result as it came; throws WorkbenchError
   * (CALL_TIMEOUT, SERVER_EXITED, CALL_FAILED, CONNECT_*) describing the server and tool.
   */
  callTool(toolbox: string, server: string, tool: string, args: Record<string, unknown> | undefined, options: CallOptions = {}): Promise<CallToolResult> {
    let slot: ServerSlot | undefined;
    try {
      const entry = this.requireToolbox(toolbox);
      slot = entry.slots.get(server) ?? this.slotOf(entry, server, 'use');
    } catch (error) {
      return Promise.reject(error);
    }
    if (!slot) return Promise.reject(new WorkbenchError('TOOL_NOT_FOUND', `toolbox "${toolbox}" has no server "${server}"`));
    return slot.call(tool, args, options);
  }

  /**
   * Runs `use` with a server's connected SDK client, connecting it first if need be (resources, prompts, completions,
   * tasks). Rejects with WorkbenchError TOOLBOX_NOT_FOUND / TOOL_NOT_FOUND for an unknown toolbox or server, or the
   * connect failure.
   */
  withServer<T>(toolbox: string, server: string, use: (client: Client) => Promise<T>): Promise<T> {
    let slot: ServerSlot | undefined;
    try {
      slot = this.slotOf(this.requireToolbox(toolbox), server, 'use');
    } catch (error) {
      return Promise.reject(error);
    }
    if (!slot) return Promise.reject(new WorkbenchError('TOOL_NOT_FOUND', `toolbox "${toolbox}" has no server "${server}"`));
    return slot.withClient(use);
  }

  /** The toolbox's connected servers and the capabilities each declared, in config order. */
  connectedServers(toolbox: string): { server: string; capabilities: ServerCapabilities; promptsOnConnect?: Promise<FeatureList | undefined> }[] {
    const entry = this.toolboxes.get(toolbox);
    if (!entry || this.closing) return [];
    return this.slotsOf(entry, 'look').flatMap((slot) => {
      const capabilities = slot.serverCapabilities;
      const prompts = slot.promptsOnConnect;
      return capabilities ? [{ server: slot.config.name, capabilities, ...(prompts && { promptsOnConnect: prompts }) }] : [];
    });
  }

  /**
   * Records a resource subscription this session made on the server's connection, so that on a `shared: true` server
   * another session's unsubscribe does not end it (see subscription-holds).
   */
  holdSubscription(toolbox: string, server: string, uri: string): void {
    const entry = this.toolboxes.get(toolbox);
    const slot = entry && !this.closing ? this.slotOf(entry, server, 'use') : undefined;
    if (!slot) return;
    holdSubscription(slot, uri, this);
    this.subscriptions.set(`${toolbox}/${server}\0${uri}`, { slot, uri });
  }

  /**
   * This session lets go of a subscription. True when the downstream subscription is to be ended: no other session
   * holds it on the same connection (always, for a connection of this session's own).
   */
  releaseSubscription(toolbox: string, server: string, uri: string): boolean {
    const key = `${toolbox}/${server}\0${uri}`;
    const held = this.subscriptions.get(key);
    if (!held) return true;
    this.subscriptions.delete(key);
    return releaseSubscription(held.slot, uri, this);
  }

  /** Forwards the client's `notifications/roots/list_changed` to every connected server this session uses. */
  notifyRootsChanged(): void {
    for (const toolbox of this.toolboxes.values()) for (const slot of [...toolbox.slots.values(), ...toolbox.attached.values()]) slot.notifyRootsChanged();
  }

  /**
   * Switches to a new config without a restart. A server whose launch settings (see {@link launchKey}) are unchanged
   * keeps its connection; a changed one is replaced by a fresh slot that connects on next use; the old connection
   * and those of removed servers and toolboxes close once their calls in flight have finished. Shared servers are
   * taken from (and retired by) their {@link SharedServers}. Returns the `toolbox/server` labels that were replaced or
   * removed.
   */
  reload(config: WorkbenchConfig): { replaced: string[]; removed: string[] } {
    this.redact = createRedactor(config.secrets);
    const next = new Map<string, Toolbox>();
    const own = new Set<ServerSlot>();
    for (const toolbox of config.toolboxes) {
      const previous = this.toolboxes.get(toolbox.name)?.slots;
      const slots = new Map<string, ServerSlot>();
      for (const server of toolbox.servers) {
        const kept = previous?.get(server.name);
        const reuse = kept !== undefined && this.own.has(kept) && launchKey(kept.config) === launchKey(server);
        if (server.shared && this.options.shared && !reuse) continue;
        const slot = reuse ? kept : new ServerSlot(toolbox.name, server, this.options, this.groups, this.redact);
        own.add(slot);
        slots.set(server.name, slot);
      }
      next.set(toolbox.name, { config: toolbox, slots, attached: new Map() });
    }
    const outcome = { replaced: [] as string[], removed: [] as string[] };
    for (const [toolboxName, { config: old }] of this.toolboxes) {
      for (const server of old.servers) {
        const label = `${toolboxName}/${server.name}`;
        const now = next.get(toolboxName)?.config.servers.find((s) => s.name === server.name);
        const slot = this.toolboxes.get(toolboxName)!.slots.get(server.name);
        const successor = next.get(toolboxName)?.slots.get(server.name);
        if (slot !== undefined && successor === slot) continue;
        if (!now) outcome.removed.push(label);
        else if (launchKey(now) !== launchKey(server) || slot !== undefined) outcome.replaced.push(label);
        // A shared server's connection is retired by its SharedServers.
        if (!slot || !this.own.has(slot)) continue;
        this.retiring.add(slot);
        void slot.retire().finally(() => this.retiring.delete(slot));
      }
    }
    this.toolboxes = next;
    this.own = own;
    return outcome;
  }

  /** Ends every connection and child process tree it owns (shared servers stay up); safe to call more than once. */
  async close(): Promise<void> {
    this.closing = true;
    // Subscriptions on shared connections (which stay up) that no other session holds are ended; best effort.
    for (const { slot, uri } of this.subscriptions.values()) {
      if (!this.own.has(slot) && releaseSubscription(slot, uri, this) && slot.serverCapabilities) void slot.withClient((client) => client.unsubscribeResource({ uri })).catch(() => {});
    }
    this.subscriptions.clear();
    // Shutting down does not wait for the calls of retired servers: they end with everything else.
    await Promise.allSettled([...this.own, ...this.retiring].map((slot) => slot.close()));
    this.reaper?.close();
  }

  private requireToolbox(name: string): Toolbox {
    if (this.closing) throw new WorkbenchError('SHUTTING_DOWN', 'the workbench is shutting down (or this client session ended); start a new session to call tools');
    const toolbox = this.toolboxes.get(name);
    if (!toolbox) {
      throw new WorkbenchError('TOOLBOX_NOT_FOUND', `unknown toolbox ${quoteClientText(name)}; toolboxes: ${this.toolboxNames().join(', ') || '(none configured)'}`);
    }
    return toolbox;
  }
}
