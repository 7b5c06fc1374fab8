import type { ClientCapabilities, LoggingMessageNotification, Progress, Result, Tool } from '@modelcontextprotocol/client';
import type { WorkbenchConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { OAuthContext } from '../oauth/sign-in.js';
import type { Cancellation } from '../shared/cancellation.js';
import type { ConnectWarnings } from './connect-warnings.js';
import type { EraMemory } from './era-memory.js';
import type { GroupTracker } from './orphan-reaper.js';
import type { FailedServer } from './server-failure.js';
import type { ServerNotice } from './feature-notices.js';
import type { UserPlace } from './user-places.js';
import type { StartSteps } from './start-steps.js';

/**
 * The types the rooms of src/clients share: what a manager and each of its server slots are given, what a call may
 * carry, and what a downstream server may ask of the client. Kept apart so that no room imports the manager.
 */

/**
 * Why a server's tool list changed: it was listed on connecting, read again after `notifications/tools/list_changed`
 * or once its `ttlMs` had passed, or the connection was lost.
 */
export type ToolsChange = 'connected' | 'changed' | 'expired' | 'lost';

/** What the manager and every server slot it makes are given. */
export interface SlotOptions {
  config: WorkbenchConfig;
  /** The workbench's own environment, for children's safe defaults and `inheritEnv`. */
  env: Record<string, string | undefined>;
  log: Logger;
  clientInfo: { name: string; version: string };
  maxMessageBytes?: number;
  /** The window of a stdio server's stdout noise in the log (default a minute; see ChildProcessTransport). */
  noiseWindowMs?: number;
  /** Called after a server's tool list changed: listed on connecting, read again (changed, expired), or lost. */
  onToolsChanged?: (toolbox: string, server: string, why: ToolsChange) => void;
  /** Called when a server that had been connected before is connected again (it crashed or was lost): a restart. */
  onRestarted?: (toolbox: string, server: string) => void;
  /** Lines a stdio server wrote to stdout that are not JSON-RPC (instead of warnings in the log). */
  onStdoutNoise?: (toolbox: string, server: string, line: string) => void;
  /** Downstream `notifications/message`, to be forwarded upstream. */
  onLogMessage?: (toolbox: string, server: string, params: LoggingMessageNotification['params']) => void;
  /** A server's resource and prompt notifications (list changes, updates of subscribed resources). */
  onServerNotice?: (toolbox: string, server: string, notice: ServerNotice) => void;
  /** Where server → client requests (sampling, elicitation, roots) from downstream servers are relayed. */
  upstream?: UpstreamRelay;
  /** Process-group tracking shared with other managers; without it the manager runs an orphan reaper of its own. */
  groups?: GroupTracker;
  /** Each server's protocol era from earlier connects (and the catalog cache); without it, remembered per slot. */
  eras?: EraMemory;
  /** Which failed connects were warned about, shared by all sessions' connections; without it, per slot. */
  connectWarnings?: ConnectWarnings;
  /**
   * One of many sessions' connections (`serve --http`): a start that is no news — the server has started fine in this
   * process before, this connection never lost it, and it took under half its connect limit — is logged at debug.
   * Without it (stdio, the CLI) every start is logged at info.
   */
  quietStarts?: boolean;
  /** OAuth sign-ins of remote servers (token store, browser); without it no server is signed in to. */
  oauth?: OAuthContext;
  /** Whose connections these are, for `${user:id}` / `${user:dir}` in entries (see user-places): `local` for one user. */
  user: UserPlace;
  /** What a server that cannot start tells its reader to do next; without it, the model's words (MODEL_START_STEPS). */
  startSteps?: StartSteps;
}

/** Requests a downstream server may make of its client, which the workbench relays to its own client. */
export type RelayedMethod = 'sampling/createMessage' | 'elicitation/create' | 'roots/list';

/** One such request, as relayed: its method and params. */
export interface RelayedRequest {
  method: RelayedMethod;
  params?: Record<string, unknown>;
}

export interface UpstreamRelay {
  /**
   * What the connected client supports. Downstream clients declare exactly these relayable capabilities, so a
   * server offers sampling/elicitation/roots features only when the real client can serve them.
   */
  capabilities(): Pick<ClientCapabilities, 'sampling' | 'elicitation' | 'roots'>;
  request(toolbox: string, server: string, request: RelayedRequest, signal: AbortSignal): Promise<Result>;
}

/** A connected server's tool list and what it depends on (see ClientManager.serverTools). */
export interface ServerTools {
  server: string;
  tools: Tool[];
  duplicates: string[];
  /** Why the tools shown are not all the server listed (a listing cut short, tools left out); empty when complete. */
  notes: string[];
  /** The tools it listed that were left out and have a name, each with why (`has no inputSchema object`). */
  leftOut: ReadonlyMap<string, string>;
  /** The capabilities the connection declared (see capabilitiesKey): the list may depend on them. */
  capabilitiesKey: string;
  cacheScope?: 'public' | 'private';
  ttlMs?: number;
}

export interface OpenResult {
  connected: string[];
  failed: FailedServer[];
}

export interface CallOptions {
  /** Cancels the downstream call (notifications/cancelled) when the client cancels. */
  cancellation?: Cancellation;
  onprogress?: (progress: Progress) => void;
  /** The client's `_meta` for the call, sent on as it came (its progress token mapped, see CallChannel). */
  meta?: Record<string, unknown>;
  /**
   * The upstream call this one serves: a modern server's `input_required` requests are sent to its client through
   * `call.request` (the use_tool's own stream), else through the manager's `upstream` relay.
   */
  call?: { request(request: RelayedRequest, signal: AbortSignal): Promise<Result> };
  /**
   * Pass-through of modern input requests, for an upstream client that speaks MRTR itself. With `passInputRequired`,
   * a modern server's `input_required` answer is returned as it came (`resultType: 'input_required'`,
   * `inputRequests`, `requestState`; test with `isInputRequiredResult`) instead of being fulfilled here; the caller
   * continues the call with `inputResponses` and `requestState` (echoed exactly) on a new callTool. Both are
   * ignored for legacy servers, whose requests always go through the relay.
   */
  passInputRequired?: boolean;
  /**
   * The tool requires task augmentation (`execution.taskSupport: "required"`): the call is made as a task and waited
   * for (see callAsTask), on a handshake-era server; a modern server is called as usual.
   */
  task?: boolean;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
}
