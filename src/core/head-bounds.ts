import type { FailedServer } from '../clients/server-failure.js';
import type { AnswerHead, PendingServer } from '../catalog/catalog-index.js';
import { firstOf, moreCount } from '../shared/first-of.js';

/**
 * The part of an `open_toolbox` answer's budget its head (servers failed and pending) may take: the tools are what the
 * answer is for, so ten servers that fail with long stderr, or a hundred still starting, never push them out.
 */
const HEAD_SHARE = 0.25;
/** A failure's message in a compacted head, and the stderr lines kept of it. */
const ERROR_CHARS = 300;
const STDERR_LINES = 2;
const STDERR_LINE_CHARS = 160;

/**
 * The head as it fits its share of `budget`: unchanged when it does; else each failure shortened (its message cut,
 * its stderr to the last lines, the note of a server still starting said once), and if that is not enough, only the
 * first entries of each list with one entry counting the rest and naming where to see them all. An unbounded budget
 * (`detail: "full"`) keeps the head whole.
 */
export function boundedHead<H extends AnswerHead>(head: H, budget: number): H {
  if (!Number.isFinite(budget)) return head;
  const room = Math.floor(budget * HEAD_SHARE);
  if (size(head) <= room) return head;
  const compact: H = {
    ...head,
    servers_failed: head.servers_failed.map(shortFailure),
    ...(head.servers_pending && { servers_pending: head.servers_pending.map((p, i) => (i === 0 ? p : { ...p, note: 'still starting (as above)' })) }),
  };
  if (size(compact) <= room) return compact;
  // Each list keeps what fits of half the room, in order, and one entry for the rest.
  const half = Math.floor(room / 2);
  return {
    ...compact,
    servers_failed: fitted(compact.servers_failed, half, (n, first) => ({
      server: moreCount(n),
      error: `${n} more servers of this toolbox failed to connect; \`mcp-workbench doctor\` lists each with its reason`,
      code: first.code,
      retryable: first.retryable,
    })),
    ...(compact.servers_pending && {
      servers_pending: fitted(compact.servers_pending, half, (n, first): PendingServer => ({ server: moreCount(n), state: 'starting', seconds: first.seconds, note: `${n} more servers are still starting` })),
    }),
  };
}

function shortFailure(failed: FailedServer): FailedServer {
  const error = failed.error.length > ERROR_CHARS ? `${failed.error.slice(0, ERROR_CHARS)}… (cut; failure holds the facts)` : failed.error;
  const tail = failed.failure?.stderrTail;
  const failure = tail && failed.failure ? { ...failed.failure, stderrTail: tail.slice(-STDERR_LINES).map((l) => (l.length > STDERR_LINE_CHARS ? `${l.slice(0, STDERR_LINE_CHARS)}…` : l)) } : failed.failure;
  return { ...failed, error, ...(failure && { failure }) };
}

/** The first entries of `list` that fit `room` characters, then one made by `rest` for those left out. */
function fitted<T>(list: readonly T[], room: number, rest: (count: number, first: T) => T): T[] {
  let used = 0;
  const fit = list.findIndex((entry, index) => (used += JSON.stringify(entry).length + 1) > room && index > 0);
  return fit < 0 ? [...list] : firstOf(list, fit, rest);
}

function size(head: AnswerHead): number {
  return JSON.stringify(head).length;
}
