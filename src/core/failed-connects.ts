import type { ClientManager, FailedServer } from '../clients/client-manager.js';
import { failedServer } from '../clients/server-failure.js';
import type { WorkbenchError } from '../errors.js';
import { formatAge } from './answer-head.js';

/** How long a search leaves a server that failed to start alone (it is named with its failure meanwhile). */
export const SEARCH_RETRY_FAILED_MS = 60_000;

/**
 * The servers whose last connect failed, per scope (its connections: a client session's, or one user's over modern
 * HTTP), with how and when (README "open_toolbox", "Catalog cache"): such a server is never shown from the cache until
 * a connect succeeds, and not started again by a search within SEARCH_RETRY_FAILED_MS. Each scope starts servers of its
 * own, so one session's failure (its connect cut short when it closed, say) is never reported to another.
 */
export class FailedConnects {
  private readonly byScope = new WeakMap<ClientManager, Map<string, { failed: FailedServer; at: number }>>();

  /** Whether the scope's last connect of the server failed. */
  has(manager: ClientManager, toolbox: string, server: string): boolean {
    return this.of(manager).has(`${toolbox}/${server}`);
  }

  /** The server connected (or listed) in this scope: its failure is over. */
  clear(manager: ClientManager, toolbox: string, server: string): void {
    this.of(manager).delete(`${toolbox}/${server}`);
  }

  /** Books a failed connect of the scope's; the server as an answer names it. */
  record(manager: ClientManager, toolbox: string, server: string, failure: WorkbenchError): FailedServer {
    const failed = failedServer(server, failure);
    this.of(manager).set(`${toolbox}/${server}`, { failed, at: Date.now() });
    return failed;
  }

  /** The scope's last failed connect of the server and when it was (none once a connect succeeded). */
  last(manager: ClientManager, toolbox: string, server: string): { failed: FailedServer; at: number } | undefined {
    return this.of(manager).get(`${toolbox}/${server}`);
  }

  /** A failure of the scope's in the last SEARCH_RETRY_FAILED_MS, as a search names it (not started again). */
  recent(manager: ClientManager, toolbox: string, server: string, now: number): FailedServer | undefined {
    const last = this.of(manager).get(`${toolbox}/${server}`);
    if (!last || now - last.at >= SEARCH_RETRY_FAILED_MS) return undefined;
    const ago = `not started again for this search (it failed ${formatAge(now - last.at)} ago)`;
    // A failure no retry mends (its message says who must fix what) is not followed by an invitation to retry.
    const again = last.failed.retryable ? `${ago}; open_toolbox "${toolbox}" without a query, or use_tool, tries again` : ago;
    return { ...last.failed, error: `${last.failed.error} (${again})` };
  }

  private of(manager: ClientManager): Map<string, { failed: FailedServer; at: number }> {
    let failing = this.byScope.get(manager);
    if (!failing) this.byScope.set(manager, (failing = new Map()));
    return failing;
  }
}
