import type { ServerConfig, WorkbenchConfig } from '../config/types.js';
import { createRedactor, type Redact } from '../shared/redact.js';
import type { ClientManagerOptions } from './client-manager.js';
import { OrphanReaper, type GroupTracker } from './orphan-reaper.js';
import { ServerSlot } from './server-slot.js';

/** The settings that decide how a server is started and called; any change means a new connection. */
export function launchKey(config: ServerConfig): string {
  const { name: _name, disabledTools: _disabled, toolFilters: _filters, toolOverrides: _overrides, ...launch } = config;
  return JSON.stringify(launch);
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

  constructor(private readonly options: ClientManagerOptions) {
    this.reaper = options.groups ? undefined : new OrphanReaper(options.log);
    this.groups = options.groups ?? this.reaper!;
    this.redact = createRedactor(options.config.secrets);
  }

  /**
   * The one slot of a shared server; a server whose launch settings changed (a reload) gets a new one. Undefined once
   * the server marked its tool list `cacheScope: "private"` (a modern server's per-user list): such a list must not
   * be shared across sessions, so every session opened from then on gets a connection of its own.
   */
  slot(toolbox: string, server: ServerConfig): ServerSlot | undefined {
    const key = `${toolbox}/${server.name}`;
    let slot = this.slots.get(key);
    if (slot?.cacheScope === 'private' && launchKey(slot.config) === launchKey(server)) {
      if (!this.unshared.has(key)) {
        this.unshared.add(key);
        this.options.log.warn(`${key} is "shared", but its tool list is private to each user: sessions opened from now on get a connection of their own`);
      }
      return undefined;
    }
    if (slot && launchKey(slot.config) !== launchKey(server)) {
      const old = slot;
      this.retiring.add(old);
      void old.retire().finally(() => this.retiring.delete(old));
      slot = undefined;
    }
    if (!slot) this.slots.set(key, (slot = new ServerSlot(toolbox, server, this.options, this.groups, this.redact)));
    return slot;
  }

  /** After a reload: retires the shared servers the new config no longer has, once their calls have finished. */
  reload(config: WorkbenchConfig): void {
    const keep = new Set(config.toolboxes.flatMap((t) => t.servers.filter((s) => s.shared).map((s) => `${t.name}/${s.name}`)));
    for (const [key, slot] of this.slots) {
      if (keep.has(key)) continue;
      this.slots.delete(key);
      this.retiring.add(slot);
      void slot.retire().finally(() => this.retiring.delete(slot));
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.slots.values(), ...this.retiring].map((slot) => slot.close()));
    this.reaper?.close();
  }
}
