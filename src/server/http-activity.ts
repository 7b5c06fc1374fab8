import type { ConnectTally } from '../clients/connect-warnings.js';
import type { LogFields, Logger } from '../log.js';
import { REFUSALS, type RefusalReason } from './http-refusals.js';

/** Why an HTTP client's session (or a modern client's surface) was closed, as its log line's `reason` says. */
export type CloseReason = 'client' | 'idle' | 'shutdown' | 'uninitialized';

/** How often at most the activity of an HTTP workbench is summed up in its log. */
export const ACTIVITY_INTERVAL_MS = 10 * 60_000;

/**
 * The activity of a `serve --http` workbench, summed up in one info line instead of a line per session (README
 * "Command line", Logs): sessions opened and closed (handshake-era sessions and MCP 2026-07-28 clients alike), how
 * many are open, downstream servers started, which failed to start how often, and requests refused by reason. The
 * lines of each session are debug.
 */
export interface ActivityLog {
  /** A session opened (a modern client counts once its first request was accepted). */
  opened(): void;
  closed(reason: CloseReason): void;
  /** A refused request (see http-refusals). */
  refused(reason: RefusalReason): void;
  /** Logs one summary line of what happened since the last one — nothing when nothing did. `open`: sessions open now. */
  flush(open: number): void;
}

type Counts = { opened: number; closed: Record<CloseReason, number>; refused: Map<RefusalReason, number> };

/** An {@link ActivityLog} over `log`; `connects` reads the process's connect tally (see Workbench.connectTally). */
export function createActivityLog(log: Logger, connects: () => ConnectTally): ActivityLog {
  let counts: Counts = fresh();
  let since = new Date();
  let before = connects();
  return {
    opened: () => void counts.opened++,
    closed: (reason) => void counts.closed[reason]++,
    refused: (reason) => void counts.refused.set(reason, (counts.refused.get(reason) ?? 0) + 1),
    flush(open) {
      const now = connects();
      const started = now.started - before.started;
      const failed = [...now.failed].map(([server, n]) => [server, n - (before.failed.get(server) ?? 0)] as const).filter(([, n]) => n > 0);
      const closed = Object.values(counts.closed).reduce((a, b) => a + b, 0);
      if (counts.opened === 0 && closed === 0 && started === 0 && failed.length === 0 && counts.refused.size === 0) return;
      const refused: LogFields = {};
      for (const [reason, n] of counts.refused) refused[`refused_${reason}`] = n;
      log.info(summaryText(since, counts, closed, open, started, failed), {
        event: 'activity',
        since: since.toISOString(),
        opened: counts.opened,
        closed,
        open,
        server_starts: started,
        server_start_failures: failed.reduce((a, [, n]) => a + n, 0),
        refused: [...counts.refused.values()].reduce((a, b) => a + b, 0),
        ...refused,
      });
      counts = fresh();
      since = new Date();
      before = now;
    },
  };
}

function fresh(): Counts {
  return { opened: 0, closed: { client: 0, idle: 0, shutdown: 0, uninitialized: 0 }, refused: new Map() };
}

/**
 * `activity since 2026-11-30T01:00:00.000Z: sessions 12 opened, 11 closed (5 by the client, 6 idle), 3 open;
 * downstream servers started 14 times; failed to start: ops/broken ×5; refused requests: 401 wrong token ×212, 413 body
 * too large ×1`.
 */
function summaryText(since: Date, counts: Counts, closed: number, open: number, started: number, failed: ReadonlyArray<readonly [string, number]>): string {
  const why = [
    counts.closed.client > 0 ? `${counts.closed.client} by the client` : '',
    counts.closed.idle > 0 ? `${counts.closed.idle} idle` : '',
    counts.closed.shutdown > 0 ? `${counts.closed.shutdown} at shutdown` : '',
  ].filter(Boolean);
  const sessions = `sessions ${counts.opened} opened, ${closed} closed${why.length > 0 ? ` (${why.join(', ')})` : ''}, ${open} open`;
  const servers = `downstream servers started ${started} time${started === 1 ? '' : 's'}`;
  const failures = failed.length > 0 ? `; failed to start: ${failed.map(([server, n]) => `${server} ×${n}`).join(', ')}` : '';
  const refused = [...counts.refused].map(([reason, n]) => `${REFUSALS[reason].status} ${REFUSALS[reason].label} ×${n}`);
  const refusals = refused.length > 0 ? `; refused requests: ${refused.join(', ')}` : '';
  return `activity since ${since.toISOString()}: ${sessions}; ${servers}${failures}${refusals}`;
}
