import type { CallToolResult } from '@modelcontextprotocol/client';
import { errorMessage, isWorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { quoteClientText } from '../shared/client-text.js';
import { parseToolName } from '../catalog/names.js';
import type { ToolboxCatalog } from '../catalog/toolbox-catalog.js';
import { ERROR_META_KEY } from './tool-entry.js';

/**
 * What happened to one `use_tool` call or `open_toolbox`, as facts without values (never arguments, never result
 * content): for the debug log and the audit log. Made only when someone observes (see WorkbenchOptions.observer),
 * so the call path pays nothing otherwise.
 */
export type CallOutcome = 'ok' | 'tool_error' | 'failed' | 'cancelled' | 'timeout';

export interface WorkbenchEvent {
  kind: 'call' | 'open';
  /** The client session: its id over HTTP, `stdio`, or undefined for the CLI's own calls. */
  session?: string;
  /** Who the client is (see AuditRecord.principal); never the token itself. */
  principal?: string;
  /** `*` for a search across every toolbox. */
  toolbox: string;
  /** The server that answered, when the name resolved to one. */
  server?: string;
  /** The tool's own (downstream) name when resolved, else the name as asked. Calls only. */
  tool?: string;
  duration_ms: number;
  outcome: CallOutcome;
  /** The workbench's error code when the workbench (not the tool) made the result an error. */
  code?: string;
  /** Bytes of the result as JSON (of the answer's text for an open). */
  result_bytes?: number;
}

export type WorkbenchObserver = (event: WorkbenchEvent) => void;

/**
 * A call's outcome from its result: `ok`; `tool_error` when the tool itself answered `isError`; otherwise what the
 * workbench's error code says (`cancelled`, `timeout`, else `failed`: refused, not found, server failed).
 */
export function outcomeOf(result: CallToolResult): { outcome: CallOutcome; code?: string } {
  if (result.isError !== true) return { outcome: 'ok' };
  const meta = result._meta?.[ERROR_META_KEY] as { code?: unknown } | undefined;
  const code = typeof meta?.code === 'string' ? meta.code : undefined;
  if (code === undefined) return { outcome: 'tool_error' };
  if (code === 'CALL_CANCELLED') return { outcome: 'cancelled', code };
  if (code === 'CALL_TIMEOUT' || code === 'CONNECT_TIMEOUT') return { outcome: 'timeout', code };
  return { outcome: 'failed', code };
}

/** The outcome of a call that threw instead of answering. */
export function outcomeOfThrown(error: unknown): { outcome: CallOutcome; code?: string } {
  if (isWorkbenchError(error, 'CALL_CANCELLED')) return { outcome: 'cancelled', code: error.code };
  if (isWorkbenchError(error, 'CALL_TIMEOUT') || isWorkbenchError(error, 'CONNECT_TIMEOUT')) return { outcome: 'timeout', code: error.code };
  return { outcome: 'failed', code: isWorkbenchError(error) ? error.code : undefined };
}

/**
 * One line for the text log: `call tb/fx/echo: ok in 12 ms` (no values). Names come from clients and servers: one
 * that is not plain printable ASCII is quoted and escaped, so it can never start a line of its own or run long.
 */
export function describeEvent(event: WorkbenchEvent): string {
  const safe = (name: string): string => (/^[\x21-\x7e]{1,256}$/.test(name) ? name : quoteClientText(name));
  const where = [event.toolbox, event.server, event.tool].filter((p): p is string => p !== undefined).map(safe).join('/');
  const code = event.code ? ` (${event.code})` : '';
  const session = event.session ? ` [session ${event.session}]` : '';
  return `${event.kind === 'call' ? 'call' : 'open'} ${where}: ${event.outcome}${code} in ${event.duration_ms} ms${session}`;
}

/**
 * Runs `run` and tells `observer` how it ended: `describe` gives who and what (called once it has ended, so a name can
 * be resolved against what the call connected), `finish` the outcome of a value; a throw is classified by
 * {@link outcomeOfThrown} and rethrown. An observer that throws is logged and never breaks the call.
 */
export function observed<T>(
  sink: { observer: WorkbenchObserver; log: Logger },
  describe: () => Pick<WorkbenchEvent, 'kind' | 'session' | 'toolbox' | 'server' | 'tool'>,
  run: () => Promise<T>,
  finish: (value: T) => Pick<WorkbenchEvent, 'outcome' | 'code' | 'result_bytes'>,
): Promise<T> {
  const started = performance.now();
  const tell = (end: Pick<WorkbenchEvent, 'outcome' | 'code' | 'result_bytes'>): void => {
    try {
      sink.observer({ ...describe(), duration_ms: Math.round(performance.now() - started), ...end });
    } catch (error) {
      sink.log.warn(`recording a call failed: ${errorMessage(error)}`);
    }
  };
  return run().then(
    (value) => {
      tell(finish(value));
      return value;
    },
    (error: unknown) => {
      tell(outcomeOfThrown(error));
      throw error;
    },
  );
}

/**
 * The server and downstream name a use_tool name resolved to, for the call's event: from the toolbox's live catalog
 * when given (after the call), else from the canonical name's parts.
 */
export function calledTool(catalog: ToolboxCatalog | undefined, name: string): { server?: string; tool: string } {
  const lookup = catalog?.find(name);
  if (lookup && 'found' in lookup) return { server: lookup.found.server, tool: lookup.found.tool.name };
  if (lookup && 'hidden' in lookup) return { server: lookup.hidden.server, tool: lookup.hidden.tool.name };
  const parts = parseToolName(name);
  return parts ? { server: parts.server, tool: parts.tool } : { tool: name };
}
