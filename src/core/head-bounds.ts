import type { FailedServer } from '../clients/server-failure.js';
import type { AnswerHead, PartialServer, PendingServer } from '../catalog/catalog-index.js';
import { firstOf, moreCount } from '../shared/first-of.js';

/**
 * The part of an `open_toolbox` answer's budget its head (servers failed, pending and partial) may take: the tools are
 * what the answer is for, so ten servers that fail with long stderr, a hundred still starting, or a hundred whose
 * lists had tools left out, never push them out.
 */
const HEAD_SHARE = 0.25;
/** A failure's message in a compacted head, and the stderr lines kept of it. */
const ERROR_CHARS = 300;
const STDERR_LINES = 2;
const STDERR_LINE_CHARS = 160;

/**
 * The head as it fits its share of `budget`: unchanged when it does; else each failure shortened (its message cut,
 * its stderr to the last lines, the note of a server still starting said once, a partial server's note cut), and if
 * that is not enough, only the first entries of each list with one entry counting the rest and naming where to see
 * them all. An unbounded budget (`detail: "full"`) keeps the head whole.
 */
export function boundedHead<H extends AnswerHead>(head: H, budget: number): H {
  if (!Number.isFinite(budget)) return head;
  const room = Math.floor(budget * HEAD_SHARE);
  if (size(head) <= room) return head;
  const compact: H = {
    ...head,
    servers_failed: head.servers_failed.map(shortFailure),
    ...(head.servers_pending && { servers_pending: head.servers_pending.map((p, i) => (i === 0 ? p : { ...p, note: 'still starting (as above)' })) }),
    ...(head.servers_partial && { servers_partial: head.servers_partial.map((p) => ({ ...p, note: shortError(p.note, ' (cut; detail:"full" gives it whole)') })) }),
  };
  if (size(compact) <= room) return compact;
  // Each list keeps what fits of an equal part of the room, in order, and one entry for the rest.
  const part = Math.floor(room / (compact.servers_partial ? 3 : 2));
  return {
    ...compact,
    servers_failed: fitted(compact.servers_failed, part, restOfFailed),
    ...(compact.servers_pending && {
      servers_pending: fitted(compact.servers_pending, part, (left): PendingServer => ({ server: moreCount(left.length), state: 'starting', seconds: left[0]!.seconds, note: `${left.length} more servers are still starting` })),
    }),
    ...(compact.servers_partial && { servers_partial: fitted(compact.servers_partial, part, restOfPartial) }),
  };
}

/** A server's failure message cut to what an answer's head has room for, `after` the cut said. */
export function shortError(error: string, after = ''): string {
  return error.length > ERROR_CHARS ? `${error.slice(0, ERROR_CHARS)}…${after}` : error;
}

function shortFailure(failed: FailedServer): FailedServer {
  const error = shortError(failed.error, ' (cut; failure holds the facts)');
  const tail = failed.failure?.stderrTail;
  const failure = tail && failed.failure ? { ...failed.failure, stderrTail: tail.slice(-STDERR_LINES).map((l) => (l.length > STDERR_LINE_CHARS ? `${l.slice(0, STDERR_LINE_CHARS)}…` : l)) } : failed.failure;
  return { ...failed, error, ...(failure && { failure }) };
}

/**
 * The one entry that stands for the failed servers left out: how many failed how (by code), the code most of them
 * have, retryable when any is, and where each is told in full — the same call with detail:"full".
 */
function restOfFailed(left: readonly FailedServer[]): FailedServer {
  const byCode = new Map<string, number>();
  for (const f of left) byCode.set(f.code, (byCode.get(f.code) ?? 0) + 1);
  const codes = [...byCode].sort((a, b) => b[1] - a[1]);
  return {
    server: moreCount(left.length),
    error: `${left.length} more servers failed to connect (${codes.map(([code, n]) => `${code} ×${n}`).join(', ')}); open_toolbox with detail:"full" lists each with its reason and fix (so does \`mcp-workbench doctor\`, for a person)`,
    code: codes[0]![0] as FailedServer['code'],
    retryable: left.some((f) => f.retryable),
  };
}

/** The one entry that stands for the partial servers left out: how many, and where each is told with its note. */
function restOfPartial(left: readonly PartialServer[]): PartialServer {
  return {
    server: moreCount(left.length),
    note: `${left.length} more servers list tools that are not all shown (a listing cut short, or tools left out); open_toolbox with detail:"full" names each with why`,
  };
}

/** The first entries of `list` that fit `room` characters, then one made by `rest` of those left out. */
function fitted<T>(list: readonly T[], room: number, rest: (left: readonly T[]) => T): T[] {
  let used = 0;
  const fit = list.findIndex((entry, index) => (used += JSON.stringify(entry).length + 1) > room && index > 0);
  return fit < 0 ? [...list] : firstOf(list, fit, () => rest(list.slice(fit)));
}

function size(head: AnswerHead): number {
  return JSON.stringify(head).length;
}
