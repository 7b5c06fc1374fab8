import type { PendingServer } from '../catalog/catalog-index.js';
import type { FailedServer } from '../clients/client-manager.js';
import { formatAge } from './answer-head.js';
import { shortError } from './head-bounds.js';
import type { SlotStatus } from '../clients/server-slot.js';
import { within } from '../shared/within.js';

/** What open_toolbox reports while it waits for servers (sent as `notifications/progress` when asked for). */
export interface OpenProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** How often progress is reported while open_toolbox waits, besides each server that becomes ready or fails. */
const PROGRESS_EVERY_MS = 1_000;

/**
 * Waits until every connect settles or `waitMs` passes, whichever is first; never rejects. Reports progress (servers
 * settled of `total`) at each settle and every second.
 */
export async function waitForServers(
  connects: ReadonlyMap<string, Promise<unknown>>,
  waitMs: number,
  total: number,
  onprogress: ((progress: OpenProgress) => void) | undefined,
): Promise<void> {
  if (connects.size === 0) return;
  const started = Date.now();
  const waiting = new Set(connects.keys());
  const report = (): void => {
    if (!onprogress || waiting.size === 0) return;
    const seconds = Math.round((Date.now() - started) / 1000);
    const names = [...waiting].slice(0, 5).join(', ') + (waiting.size > 5 ? ` and ${waiting.size - 5} more` : '');
    onprogress({ progress: total - waiting.size, total, message: `waiting for ${names} to start (${seconds} s of at most ${Math.round(waitMs / 1000)} s)` });
  };
  let ticker: NodeJS.Timeout | undefined;
  if (onprogress) ticker = setInterval(report, PROGRESS_EVERY_MS);
  report();
  const all = Promise.all(
    [...connects].map(([server, connect]) =>
      connect.then(
        () => void (waiting.delete(server), report()),
        () => void (waiting.delete(server), report()),
      ),
    ),
  );
  try {
    await within(all, waitMs);
  } finally {
    clearInterval(ticker);
  }
}

/**
 * The connects worth waiting for: all but those of servers already starting for `waitMs` or more. An answer that
 * waited that long for a server once (an open, a search, a bare-name call) does not wait for it again; it is shown
 * as still starting at once and keeps connecting.
 */
export function worthWaiting(
  connects: ReadonlyMap<string, Promise<unknown>>,
  statuses: readonly { server: string; status: SlotStatus }[],
  waitMs: number,
  now = Date.now(),
): Map<string, Promise<unknown>> {
  const overdue = new Set(statuses.filter((s) => s.status.state === 'starting' && now - s.status.since >= waitMs).map((s) => s.server));
  return new Map([...connects].filter(([server]) => !overdue.has(server)));
}

/** A server still starting when an answer was due, with what the model can do about it. */
export function pendingServer(server: string, since: number, now: number, lastFailure?: { failed: FailedServer; at: number }): PendingServer {
  const seconds = Math.max(0, Math.round((now - since) / 1000));
  if (lastFailure) {
    // Opening again starts it again: say how the last start ended, so the model does not keep opening a broken server.
    const error = shortError(lastFailure.failed.error);
    return {
      server,
      state: 'starting',
      seconds,
      note: `starting again (${seconds} s so far); its last start failed ${formatAge(now - lastFailure.at)} ago: ${error} If this start fails the same way, opening the toolbox again will not help: the server needs fixing (a person can run \`mcp-workbench doctor\`); use the toolbox's other servers meanwhile.`,
    };
  }
  return {
    server,
    state: 'starting',
    seconds,
    note: `still starting after ${seconds} s; open the toolbox again shortly to see its tools, or call one of them with use_tool (it waits for the server)`,
  };
}
