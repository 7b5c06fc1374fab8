import { MAX_SEARCH_LIMIT } from '../catalog/search.js';
import type { OpenToolboxRequest } from '../core/open-toolbox.js';
import { nameProblem } from '../shared/client-text.js';
import { describeValue, unknownParamsProblem } from './tool-params.js';

/** Longest `query` accepted: a few sentences; anything longer is not a search. */
export const MAX_QUERY_LENGTH = 1000;
/** Most names one `tools` request may ask for. */
export const MAX_TOOLS = 100;

const PARAMS = ['toolbox_name', 'tools', 'query', 'limit', 'detail', 'cursor'];

/**
 * Checks `open_toolbox`'s parameters. Returns the request, or a sentence saying what is wrong (the caller answers it
 * as a refusal: an `isError` result with the tool's signature, README "Errors").
 */
export function parseOpenToolboxArgs(args: Record<string, unknown>): OpenToolboxRequest | string {
  const unknown = unknownParamsProblem(args, PARAMS, 'open_toolbox');
  if (unknown !== undefined) return unknown;
  const request: OpenToolboxRequest = {};
  const { toolbox_name, tools, query, limit, detail, cursor } = args;
  if (toolbox_name !== undefined) {
    if (typeof toolbox_name !== 'string' || toolbox_name.trim() === '') return `open_toolbox: "toolbox_name" must be a non-empty string, got ${describeValue(toolbox_name)}`;
    const problem = nameProblem(toolbox_name);
    if (problem !== undefined) return `open_toolbox: "toolbox_name" ${problem}`;
    request.toolbox_name = toolbox_name.trim();
  }
  if (tools !== undefined) {
    if (!Array.isArray(tools) || tools.length === 0 || !tools.every((t) => typeof t === 'string' && t.trim() !== '')) {
      return 'open_toolbox: "tools" must be a non-empty array of tool names or globs';
    }
    if (tools.length > MAX_TOOLS) return `open_toolbox: "tools" may name at most ${MAX_TOOLS} tools or globs at once (got ${tools.length}); use a glob or several calls`;
    for (const [index, name] of (tools as string[]).entries()) {
      const problem = nameProblem(name);
      if (problem !== undefined) return `open_toolbox: "tools"[${index}] ${problem}`;
    }
    request.tools = tools.map((t: string) => t.trim());
  }
  if (query !== undefined) {
    if (typeof query !== 'string' || query.trim() === '') return 'open_toolbox: "query" must be a non-empty string of words';
    if (query.length > MAX_QUERY_LENGTH) return `open_toolbox: "query" must be at most ${MAX_QUERY_LENGTH} characters (got ${query.length}); a few words describing the tool work best`;
    request.query = query.trim();
  }
  if (limit !== undefined) {
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
      return `open_toolbox: "limit" must be a whole number from 1 to ${MAX_SEARCH_LIMIT}`;
    }
    request.limit = limit;
  }
  if (detail !== undefined) {
    if (detail !== 'full' && detail !== 'index') return 'open_toolbox: "detail" must be "full" or "index"';
    request.detail = detail;
  }
  if (cursor !== undefined) {
    if (typeof cursor !== 'string' || !/^\d+$/.test(cursor)) return 'open_toolbox: "cursor" must be the next_cursor of a previous answer';
    request.cursor = Number(cursor);
  }
  if (request.toolbox_name === undefined && request.query === undefined) {
    return 'open_toolbox: "toolbox_name" must be a non-empty string, got nothing (it may be left out only with "query", to search every toolbox)';
  }
  if (request.tools !== undefined && request.query !== undefined) return 'open_toolbox: pass either "tools" or "query", not both';
  if (request.toolbox_name === undefined && request.tools !== undefined) return 'open_toolbox: "tools" needs "toolbox_name"';
  if (request.cursor !== undefined && (request.tools !== undefined || request.query !== undefined)) {
    return `open_toolbox: "cursor" pages a toolbox's catalog and has no effect with "${request.tools !== undefined ? 'tools' : 'query'}"${request.query !== undefined ? `; for more matches raise "limit" (up to ${MAX_SEARCH_LIMIT})` : ''}`;
  }
  return request;
}
