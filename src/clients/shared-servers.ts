import type { ServerConfig, WorkbenchConfig } from '../config/types.js';
import { createRedactor, type Redact } from '../shared/redact.js';
import { capabilitiesKey } from './capabilities-key.js';
import type { SlotOptions, UpstreamRelay } from './types.js';
import { OrphanReaper, type GroupTracker } from './orphan-reaper.js';
import { ServerSlot } from './server-slot.js';

type RelayableCapabilities = ReturnType<UpstreamRelay['capabilities']>;

/** The settings that decide how a server is started and called; any change means a new connection. */
export function launchKey(config: ServerConfig): string {
  const { name: _name, disabledTools: _disabled, disabledPrompts: _prompts, toolFilters: _filters, toolOverrides: _overrides, catalogCache: _cache, toolChanges: _changes, quarantine: _quarantine, ...launch } = config;
  return JSON.stringify(launch);
}

export interface SharedServersOptions extends SlotOptions {
  /**
   * Where the requests, log messages, tool list changes and resource notices of the connection for one set of client
   * capabilities (by its capabilitiesKey) go: each connection's own, since the sessions behind one set are not those
   * behind another.
   */
  routing?: (capabilities: string) => Pick<SlotOptions, 'upstream' | 'onLogMessage' | 'onToolsChanged' | 'onServerNotice'>;
}

/**
 * One connection per `shared: true` server for every session's ClientManager (HTTP serving). Its relay and log
 * routing are the ones given here, not a session's: see the README's "Serving over HTTP" for who gets what.
 */
export class SharedServers {
  private readonly slots = new Map<string, ServerSlot>();
  private readonly retiring = new Set<ServerSlot>();
  /** Shared servers found to list tools privately (warned about once). */
  private readonly unshared = new Set<string>();
  private readonly reaper: OrphanReaper | undefined;
  private readonly groups: GroupTracker;
  private readonly redact: Redact;

  constructor(private readonly options: SharedServersOptions) {
    this.reaper = options.groups ? undefined : new OrphanReaper(options.log);
    this.groups = options.groups ?? this.reaper!;
    this.redact = createRedactor(options.config.secrets);
  }

  /**
   * The slot of a shared server for clients with these capabilities (one connection per set: a server may list other
   * tools for other capabilities, README "Serving over HTTP"); a server whose launch settings changed (a reload) gets
   * a new one. Undefined once the server marked its tool list `cacheScope: "private"` (a modern server's per-user
   * list): such a list must not be shared across sessions, so every session opened from then on gets a connection of
   * its own.
   */
  slot(toolbox: string, server: ServerConfig, capabilities: RelayableCapabilities): ServerSlot | undefined {
    const name = `${toolbox}/${server.name}`;
    const key = `${name}\0${capabilitiesKey(capabilities)}`;
    let slot = this.slots.get(key);
    if (slot?.cacheScope === 'private' && launchKey(slot.config) === launchKey(server)) {
      if (!this.unshared.has(name)) {
        this.unshared.add(name);
        this.options.log.warn(`${name} is "shared", but its tool list is private to each user: sessions opened from now on get a connection of their own`);
      }
      return undefined;
    }
    if (slot && launchKey(slot.config) !== launchKey(server)) {
      this.retire(key, slot);
      slot = undefined;
    }
    if (!slot) {
      // Told exactly these capabilities; its requests and log messages are routed by the connection they came on.
      const routing = this.options.routing?.(capabilitiesKey(capabilities)) ?? {};
      const relay = routing.upstream ?? this.options.upstream;
      const options = { ...this.options, ...routing, ...(relay && { upstream: { capabilities: () => capabilities, request: relay.request } }) };
      this.slots.set(key, (slot = new ServerSlot(toolbox, server, options, this.groups, this.redact)));
    }
    return slot;
  }

  private retire(key: string, slot: ServerSlot): void {
    this.slots.delete(key);
    this.retiring.add(slot);
    void slot.retire().finally(() => this.retiring.delete(slot));
  }

  /** After a reload: retires the shared servers the new config no longer has, once their calls have finished. */
  reload(config: WorkbenchConfig): void {
    const keep = new Set(config.toolboxes.flatMap((t) => t.servers.filter((s) => s.shared).map((s) => `${t.name}/${s.name}`)));
    for (const [key, slot] of this.slots) {
      if (!keep.has(key.slice(0, key.indexOf('\0')))) this.retire(key, slot);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.slots.values(), ...this.retiring].map((slot) => slot.close()));
    this.reaper?.close();
  }
}
