import { createHash } from 'node:crypto';
import type { DiscoverResult } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/types.js';

/**
 * Which protocol era a downstream server spoke when it last connected, for `Client.connect(t, { prior })`: a known
 * server is connected without the `server/discover` probe (modern: no round trip at all; legacy: straight to
 * `initialize`), so no server is ever started twice to learn its era.
 */
export type EraVerdict = { kind: 'legacy' } | { kind: 'modern'; discover: DiscoverResult };

/** Where verdicts outlive the process (the catalog cache entry of the server). */
export interface EraPersistence {
  readEra(toolbox: string, server: ServerConfig): Promise<EraVerdict | undefined>;
  writeEra(toolbox: string, server: ServerConfig, verdict: EraVerdict): void;
}

/**
 * The key of one configured server: a hash of the toolbox and server names and of what decides which program the
 * entry runs — transport, command, args, cwd, URL, and the NAMES of its env variables and headers (never their values,
 * which are often secrets). The catalog cache uses the same key.
 */
export function serverCacheKey(toolbox: string, server: ServerConfig): string {
  const launch =
    server.type === 'stdio'
      ? { type: server.type, command: server.command, args: server.args, cwd: server.cwd ?? null, env: Object.keys(server.env).sort(), inheritEnv: server.inheritEnv }
      : { type: server.type, url: server.url, headers: Object.keys(server.headers).sort() };
  return createHash('sha256').update(JSON.stringify({ toolbox, server: server.name, launch })).digest('hex');
}

/**
 * Era verdicts per server launch config: in memory for every connection this process makes (sessions, reloads,
 * reconnects), and persisted when given a backend. A verdict that fails to connect is replaced by the caller's
 * re-probe (see ServerSlot).
 */
export class EraMemory {
  private readonly verdicts = new Map<string, EraVerdict | null>();

  constructor(private readonly persistence?: EraPersistence) {}

  async get(toolbox: string, server: ServerConfig): Promise<EraVerdict | undefined> {
    const key = serverCacheKey(toolbox, server);
    const known = this.verdicts.get(key);
    if (known !== undefined) return known ?? undefined;
    const stored = (await this.persistence?.readEra(toolbox, server).catch(() => undefined)) ?? undefined;
    if (!this.verdicts.has(key)) this.verdicts.set(key, stored ?? null);
    return this.verdicts.get(key) ?? undefined;
  }

  set(toolbox: string, server: ServerConfig, verdict: EraVerdict): void {
    const key = serverCacheKey(toolbox, server);
    if (JSON.stringify(this.verdicts.get(key)) === JSON.stringify(verdict)) return;
    this.verdicts.set(key, verdict);
    this.persistence?.writeEra(toolbox, server, verdict);
  }
}
