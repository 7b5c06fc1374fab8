import type { ToolboxCatalog } from '../catalog/toolbox-catalog.js';
import type { CallOptions, ClientManager } from '../clients/client-manager.js';
import type { FeatureBooks } from './feature-books.js';
import type { NextSteps } from './next-steps.js';
import type { CallContext, RoutingBooks } from './session-routing.js';
import type { ShownLists } from './shown-lists.js';
import type { SearchMemory } from './tool-search.js';
import type { ToolEntry } from './tool-entry.js';

export interface UseToolOptions extends CallOptions {
  call?: CallContext;
  /** The session's downstream connections and catalogs (see `Workbench.openSession`); default: the workbench's own. */
  scope?: SessionScope;
  /** Who asked, for the debug and audit logs: an HTTP session id, `stdio`, or nothing for the CLI. */
  sessionLabel?: string;
  /** Who the client is, for the debug and audit logs (never a token). */
  principal?: string;
  /**
   * The next steps refusals end with (how to see the names, what to call or run instead): a person at the CLI runs a
   * command; default: the model's tool calls (MODEL_STEPS, `Call open_toolbox {"toolbox_name":…}`).
   */
  steps?: NextSteps;
}

/**
 * One client session's view of the workbench: its downstream connections (its own for every server unless `shared`)
 * and the catalogs built from them. Obtained from `Workbench.openSession`; `close()` ends its servers.
 */
export interface SessionScope {
  readonly manager: ClientManager;
  close(): Promise<void>;
}

/** One ClientManager with its routing books (see RoutingBooks) and the catalogs built from its servers. */
export interface Scope extends SessionScope, RoutingBooks {
  readonly catalogs: Map<string, CachedCatalog>;
  /** What this session was shown of each server's tools (for open_toolbox's `catalog_changes`). */
  readonly shown: ShownLists;
  /** Resource links, subscriptions and listings of this session (README "Resources, prompts and completions"). */
  readonly features: FeatureBooks;
  /** What this session's searches have seen of each toolbox (README "Search"): never another session's. */
  readonly search: SearchMemory;
}

export interface CachedCatalog {
  catalog: ToolboxCatalog;
  entries: ToolEntry[];
}
