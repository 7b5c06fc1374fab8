import type { ServerConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { listenFilter, watchFeatureNotices } from './feature-notices.js';
import { listAllTools } from './list-tools.js';
import { applyList, type Live } from './live-connection.js';
import type { SlotOptions, ToolsChange } from './types.js';

const LIST_CHANGED_DEBOUNCE_MS = 100;
/**
 * The longest a change waits for its re-read while list_changed keeps coming: a server that never stops sending them
 * (README "Downstream servers") still has its list read again this often, rather than never.
 */
const LIST_CHANGED_MAX_WAIT_MS = 2_000;

/** What a watcher knows of its slot. */
export interface WatchedSlot {
  toolbox: string;
  config: ServerConfig;
  options: SlotOptions;
  label: string;
  log: Logger;
  /** Whether the slot was retired by a reload: its feature notices are then no longer passed on. */
  isRetiring(): boolean;
  /** The slot's tool list was read again (the slot decides whether anyone is told). */
  toolsChanged(why: ToolsChange): void;
}

/**
 * What a slot's live connection says unasked, and the re-reads of its tool list: tools/list_changed (debounced, one
 * re-read at a time), a modern server's subscriptions/listen stream for it, log messages and resource and prompt
 * notices; and the re-read of a list whose ttlMs has passed. The slot (server-slot.ts) keeps the connection.
 */
export class SlotWatcher {
  private refreshTimer: NodeJS.Timeout | undefined;
  /** When the first list_changed not yet followed by a re-read came (undefined: none is waiting). */
  private changedSince: number | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly slot: WatchedSlot) {}

  /** Listens to a connection that just went live. */
  watch(live: Live): void {
    const { toolbox, config, options } = this.slot;
    live.client.setNotificationHandler('notifications/tools/list_changed', () => this.changed(live));
    live.client.setNotificationHandler('notifications/message', (notification) => {
      options.onLogMessage?.(toolbox, config.name, notification.params);
    });
    const onNotice = options.onServerNotice;
    if (onNotice) watchFeatureNotices(live.client, (notice) => void (this.slot.isRetiring() || onNotice(toolbox, config.name, notice)));
    // A modern server sends list changes only on a subscriptions/listen stream.
    const filter = listenFilter(live.client);
    if (live.era === 'modern' && Object.keys(filter).length > 0) {
      live.client.listen(filter).then(
        (subscription) => {
          if (live.dead) void subscription.close().catch(() => {});
          else live.subscription = subscription;
        },
        (error: unknown) => this.slot.log.debug(`could not listen for tool list changes: ${errorMessage(error)}`),
      );
    }
  }

  /**
   * Debounces list_changed: changes that come together are read once, 100 ms after the last — but never later than
   * LIST_CHANGED_MAX_WAIT_MS after the first one still unread, however many follow.
   */
  private changed(live: Live): void {
    const now = Date.now();
    this.changedSince ??= now;
    const delay = Math.max(0, Math.min(LIST_CHANGED_DEBOUNCE_MS, this.changedSince + LIST_CHANGED_MAX_WAIT_MS - now));
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => {
      this.changedSince = undefined;
      void this.refresh(live);
    }, delay);
  }

  /** Re-reads the catalog after tools/list_changed; one refresh at a time, a change during one schedules another. */
  async refresh(live: Live, reason: 'changed' | 'expired' = 'changed'): Promise<void> {
    if (this.refreshing) {
      await this.refreshing;
      if (live.dead) return;
    }
    const { log } = this.slot;
    this.refreshing = (async () => {
      try {
        const list = await listAllTools(live.client, log, this.slot.label, undefined, live.era === 'modern');
        applyList(live, list, this.slot.config.type === 'http');
        if (reason === 'expired') log.debug(`tool list read again (its ttlMs had passed): ${live.tools.length} tools`);
        else log.info(`tool list changed: now ${live.tools.length} tools`);
        this.slot.toolsChanged(reason);
      } catch (error) {
        log.warn(`could not refresh the tool list after a change: ${errorMessage(error)}`);
      }
    })().finally(() => {
      this.refreshing = undefined;
    });
    await this.refreshing;
  }

  /** Cancels a re-read not yet started (the slot is closing). */
  close(): void {
    clearTimeout(this.refreshTimer);
    this.changedSince = undefined;
  }
}
