import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import type { Answer, FullEntry } from '../catalog/catalog-index.js';
import { overriddenText, type OverrideResolver } from '../catalog/overrides.js';
import { revealHidden, revealInSchema } from '../shared/hidden-text.js';
import { MODEL_STEPS, type NextSteps } from './next-steps.js';
import type { CatalogTool } from '../catalog/toolbox-catalog.js';
import type { FailedServer } from '../clients/client-manager.js';
import { isRetryable, type FailureSite, type ServerFailure, type UrlElicitation, type WorkbenchError, type WorkbenchErrorCode } from '../errors.js';

/** One tool as `open_toolbox` presents it (the full entry of the catalog index). */
export type ToolEntry = FullEntry;

/** One tool as `list_all_tools` and `tools list` show it: enabled or not, and why. */
export interface ToolStatus {
  name: string;
  toolbox: string;
  server: string;
  original_name: string;
  enabled: boolean;
  /** Present when disabled: which source (config, project, cli, toolset, state), the rule that applied, and a sentence. */
  disabled_by?: { source: string; rule: string; reason: string };
  /** The server's own description, as it sent it. */
  description?: string;
  /** What open_toolbox shows instead, when toolOverrides apply. */
  override?: { title?: string; description: string; annotations?: Tool['annotations'] };
}

export interface ToolStatusReport {
  tools: ToolStatus[];
  /** Servers that could not be connected, so their tools could not be listed. */
  servers_failed: ({ toolbox: string } & FailedServer)[];
}

/** What `open_toolbox` answers when `detail` is `"full"` (README: "open_toolbox"); other answers are `Answer`s. */
export type OpenToolboxResult = Omit<Answer, 'tools'> & { tools: ToolEntry[] };

/**
 * A tool as the model is shown it: canonical name, overrides applied, and every hidden character of its prose (title,
 * description, the schemas' descriptions and titles) revealed as a visible escape (README "Hidden characters"). The
 * tool object calls are made with is left as the server sent it.
 */
export function toEntry(t: CatalogTool, overrides: OverrideResolver): ToolEntry {
  const { title, description, annotations } = overriddenText(t.tool, overrides(t.toolbox, t.server, t.tool.name));
  return {
    name: t.name,
    toolbox_name: t.toolbox,
    source_server: t.server,
    original_name: t.tool.name,
    ...(title !== undefined ? { title: revealHidden(title) } : {}),
    description: `[${t.toolbox}/${t.server}] ${revealHidden(description)}`.trimEnd(),
    inputSchema: revealInSchema(t.tool.inputSchema),
    ...(t.tool.outputSchema !== undefined ? { outputSchema: revealInSchema(t.tool.outputSchema) } : {}),
    ...(annotations !== undefined ? { annotations: revealInSchema(annotations) } : {}),
  };
}

/** `_meta` key marking results the workbench produced itself (as opposed to a downstream tool's own error). */
export const ERROR_META_KEY = 'mcp-workbench/error';

/** What `_meta["mcp-workbench/error"]` carries besides the code (README "Errors"). */
export interface ErrorFields extends FailureSite {
  failure?: ServerFailure;
  hint?: string;
  downstreamCode?: number;
  /** URL_ELICITATION_REQUIRED: the URLs the user must open first (see WorkbenchErrorOptions.elicitations). */
  elicitations?: readonly UrlElicitation[];
  /**
   * TOOL_NOT_FOUND of a full name whose server the toolbox it names does not have: `"server"`, so a program tells it
   * from a tool a server lacks without reading the config (README "Errors").
   */
  unknown?: 'server';
}

/**
 * A failure of a proxied call as the client sees it: an `isError` result whose `_meta["mcp-workbench/error"]` carries
 * the code, whether simply retrying later may succeed (see isRetryable), where it happened (toolbox, server, tool),
 * what to do next (`hint`), a downstream JSON-RPC error's own code and, for a server that failed, what happened to it
 * as fields (kind, exit code, signal, HTTP status…). The one place such results are made.
 */
export function errorResult(text: string, code: WorkbenchErrorCode, fields: ErrorFields = {}): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }], _meta: { [ERROR_META_KEY]: errorMeta(code, fields) } };
}

/** The fields of `_meta["mcp-workbench/error"]` of a result the workbench made (see errorResult); none of any other. */
export function errorFieldsOf(result: CallToolResult): ErrorFields {
  const meta = result._meta?.[ERROR_META_KEY];
  return typeof meta === 'object' && meta !== null ? (meta as ErrorFields) : {};
}

/** The `_meta["mcp-workbench/error"]` entry of a failure (see errorResult). */
export function errorMeta(code: WorkbenchErrorCode, fields: ErrorFields = {}): Record<string, unknown> {
  const entry: Record<string, unknown> = { code, retryable: isRetryable(code, fields.failure) };
  for (const key of ['toolbox', 'server', 'tool', 'unknown', 'hint', 'downstreamCode', 'failure', 'elicitations'] as const) {
    if (fields[key] !== undefined) entry[key] = fields[key];
  }
  return entry;
}

/** A typed failure as a tool result: its display text after `prefix`, and its fields in `_meta` (see errorResult). */
export function failureResult(error: WorkbenchError, prefix = '', site: FailureSite = {}): CallToolResult {
  return errorResult(`${prefix}${error.toDisplayString()}`, error.code, {
    ...site,
    ...error.site,
    ...(error.failure ? { failure: error.failure } : {}),
    ...(error.hint !== undefined ? { hint: error.hint } : {}),
    ...(error.downstreamCode !== undefined ? { downstreamCode: error.downstreamCode } : {}),
    ...(error.elicitations !== undefined ? { elicitations: error.elicitations } : {}),
  });
}

/**
 * A call refused because the tool is disabled (or held): the message names the source and rule, `hint` what would
 * enable it (`steps`: for the model, or a person at the CLI), and the site which toolbox, server and tool.
 */
export function disabledResult(name: string, reason: string, source: string, site: FailureSite, user?: string, steps: NextSteps = MODEL_STEPS): CallToolResult {
  const message = disabledMessage(name, reason, source);
  const hint = steps.enable({ name, source, ...(user !== undefined && { user }) });
  return errorResult(`${message} ${hint}`, source === 'quarantine' ? 'TOOL_HELD' : 'TOOL_DISABLED', { ...site, hint });
}

/** Why a tool is disabled (or held) and what would enable it, as one sentence pair (`open_toolbox`'s `not_found`). */
export function disabledNote(name: string, reason: string, source: string, user?: string): string {
  return `${disabledMessage(name, reason, source)} ${MODEL_STEPS.enable({ name, source, ...(user !== undefined && { user }) })}`;
}

/** Why a tool is disabled (or held). */
function disabledMessage(name: string, reason: string, source: string): string {
  return source === 'quarantine' ? `Tool "${name}" is held: ${reason}.` : `Tool "${name}" is disabled: ${reason} (source: ${source}).`;
}
