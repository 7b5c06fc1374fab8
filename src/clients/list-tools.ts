import type { Client, StandardSchemaV1 } from '@modelcontextprotocol/client';
import type { Tool } from '@modelcontextprotocol/client';
import type { Logger } from '../log.js';
import { quoteClientText } from '../shared/client-text.js';
import { countHiddenInTool } from '../shared/hidden-text.js';
import { honouredTtl } from '../shared/list-ttl.js';
import { scanHeaderDeclarations, type HeaderDeclaration } from './param-headers.js';

const MAX_TOOL_PAGES = 1000;
/**
 * Most tools read of one server's list (README "Downstream servers"): ten times the 1,000-tool toolbox the workbench is
 * measured with. The page cap alone bounds pages, not tools — a page may hold many thousands within the 8 MiB message
 * limit — so a server listing more would grow memory, the catalog cache and every search without bound.
 */
export const MAX_SERVER_TOOLS = 10_000;

/**
 * Any object: the pages are checked tool by tool below rather than all-or-nothing by the SDK's spec schema, which
 * would make one malformed tool cost the whole server.
 */
export const ANY_OBJECT: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'mcp-workbench',
    validate: (value) =>
      typeof value === 'object' && value !== null && !Array.isArray(value) ? { value: value as Record<string, unknown> } : { issues: [{ message: 'the tools/list result is not an object' }] },
  },
};

/**
 * Every page of tools/list (servers may paginate); none if the server has no tools capability. Parsed leniently:
 * one malformed tool (no name, or an inputSchema that is not an object of type object) is skipped with a warning (and
 * a note, for open_toolbox's `servers_partial`) instead of making
 * the whole server unusable, and every other field is kept exactly as the server sent it.
 *
 * At most MAX_SERVER_TOOLS entries are read: a longer list (on one page or many) is cut there, with a warning and a note.
 *
 * Always a fresh listing (never the SDK's response cache: the caller lists on connect and after list_changed). A
 * modern server's caching hint is reported as `cacheScope`: `private` when any page said so (the list is then
 * per-user and must not be persisted or shared), `public` when every page said public, else undefined (legacy).
 *
 * A modern server's tool whose `x-mcp-header` declarations are invalid is left out with a warning (the protocol says
 * a client must never call it); the valid declarations come back in `paramHeaders`, by tool name.
 */
export async function listAllTools(client: Client, log: Logger, label: string, timeout?: number, modern = false): Promise<ToolList> {
  if (!client.getServerCapabilities()?.tools) return { tools: [], duplicates: [], notes: [], leftOut: new Map() };
  const list = new ListBuilder(log, label, modern);
  const cursors = new Set<string>();
  let cursor: string | undefined;
  let page = 0;
  for (; page < MAX_TOOL_PAGES; page++) {
    const result = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ANY_OBJECT, timeout ? { timeout } : undefined);
    list.addPage(result, page);
    cursor = typeof result.nextCursor === 'string' && result.nextCursor !== '' ? result.nextCursor : undefined;
    // Exactly MAX_SERVER_TOOLS on the last page is a whole list; anything past them is left unread.
    if (list.full && (list.unread > 0 || cursor !== undefined)) {
      cutAtToolCap(list, log, label, cursor !== undefined);
      break;
    }
    if (!cursor) break;
    // A paginator that hands out a cursor it already gave would go round forever: stop at once and say so.
    if (cursors.has(cursor)) {
      log.warn(
        `${label} answered tools/list with a cursor it had already given (${quoteClientText(cursor, 40)}, page ${page + 1}); ` +
          `stopped reading its tool list there, with ${list.size} distinct tools. Report this to the server's maintainers.`,
        { problem: 'repeated-cursor', tools: list.size },
      );
      list.note(`its tool list repeated a cursor at page ${page + 1}, so only the ${list.size} tools listed before that are shown`);
      break;
    }
    cursors.add(cursor);
  }
  if (page === MAX_TOOL_PAGES) {
    log.warn(`${label} listed more than ${MAX_TOOL_PAGES} pages of tools; stopped reading there, with ${list.size} distinct tools.`, {
      problem: 'too-many-pages',
      tools: list.size,
    });
    list.note(`it listed more than ${MAX_TOOL_PAGES} pages of tools, so only the ${list.size} tools of the first ${MAX_TOOL_PAGES} pages are shown`);
  }
  return list.result();
}

/** Says that the listing stopped at MAX_SERVER_TOOLS entries (`more`: pages were left unread too). */
function cutAtToolCap(list: ListBuilder, log: Logger, label: string, more: boolean): void {
  const unread = `${list.unread > 0 ? `${list.unread} more on that page` : ''}${list.unread > 0 && more ? ' and ' : ''}${more ? 'its further pages' : ''}`;
  log.warn(`${label} listed more than ${MAX_SERVER_TOOLS} tools; stopped reading there (${unread} left unread), with ${list.size} distinct tools.`, {
    problem: 'too-many-tools',
    tools: list.size,
  });
  list.note(`it listed more than ${MAX_SERVER_TOOLS} tools, so only the ${list.size} tools among its first ${MAX_SERVER_TOOLS} are shown and the rest are left out`);
}

/** The pages of one listing, checked tool by tool as they come (see listAllTools). */
class ListBuilder {
  private readonly tools: Tool[] = [];
  private readonly names = new Set<string>();
  private readonly duplicates = new Set<string>();
  private readonly skipped: string[] = [];
  /** The left-out tools that have a name, with why (for use_tool's answer about them). */
  private readonly leftOut = new Map<string, string>();
  private readonly notes: string[] = [];
  /** Entries read so far (kept, left out, repeated), and those of the last page not read past MAX_SERVER_TOOLS. */
  private read = 0;
  unread = 0;
  private scope: 'public' | 'private' | undefined;
  private ttlMs: number | undefined;
  private paramHeaders: Map<string, HeaderDeclaration[]> | undefined;

  constructor(
    private readonly log: Logger,
    private readonly label: string,
    private readonly modern: boolean,
  ) {}

  get size(): number {
    return this.tools.length;
  }

  /** Whether MAX_SERVER_TOOLS entries have been read: nothing more of this listing is. */
  get full(): boolean {
    return this.read >= MAX_SERVER_TOOLS;
  }

  /** Says (in open_toolbox's `servers_partial`) that the list shown is not all the server has. */
  note(text: string): void {
    this.notes.push(text);
  }

  addPage(result: Record<string, unknown>, page: number): void {
    if (this.modern && page === 0 && typeof result.ttlMs !== 'number') {
      // A modern list always carries its caching hint: this server answered like a legacy one (a stale era verdict).
      throw new Error('the server answered tools/list without the modern caching hint (ttlMs): it does not speak protocol 2026-07-28');
    }
    // The list may be reused for as long as its shortest-lived page allows.
    const ttlMs = this.modern ? honouredTtl(result.ttlMs) : undefined;
    if (ttlMs !== undefined) this.ttlMs = Math.min(this.ttlMs ?? Infinity, ttlMs);
    if (result.cacheScope === 'private') this.scope = 'private';
    else if (result.cacheScope === 'public' && this.scope === undefined && page === 0) this.scope = 'public';
    if (!Array.isArray(result.tools)) throw new Error('the server answered tools/list without a "tools" array');
    const tools = result.tools as unknown[];
    const room = MAX_SERVER_TOOLS - this.read;
    for (let i = 0; i < tools.length && i < room; i++) this.addTool(tools[i]);
    this.unread = Math.max(0, tools.length - room);
    this.read += Math.min(tools.length, room);
  }

  /** Says once per listing which tools hide characters in their prose (the model is shown them as escapes). */
  private warnHidden(): void {
    const hiding = this.tools.map((tool) => ({ name: tool.name, count: countHiddenInTool(tool) })).filter((t) => t.count > 0);
    if (hiding.length === 0) return;
    const total = hiding.reduce((sum, t) => sum + t.count, 0);
    const shown = hiding.slice(0, 5).map((t) => `${quoteClientText(t.name, 64)} (${t.count})`).join(', ');
    this.log.warn(
      `${this.label} hides ${total} invisible character(s) (zero-width, bidirectional or tag characters) in what ${hiding.length} tool(s) tell ` +
        `the model: ${shown}${hiding.length > 5 ? ', …' : ''}. They are shown to the model as visible escapes such as \\u200b; ` +
        'text a person cannot see may be an attempt to instruct the model unseen, so check this server.',
      { problem: 'hidden-characters', characters: total, tools: hiding.length },
    );
  }

  private addTool(tool: unknown): void {
    const problem = toolProblem(tool);
    if (problem) {
      const text = problem.name === undefined ? problem.reason : `${quoteClientText(problem.name, 64)} ${problem.reason}`;
      this.log.warn(`skipped a tool the server listed: ${text}`);
      this.skipped.push(text);
      if (problem.name !== undefined) this.leftOut.set(problem.name, problem.reason);
      return;
    }
    const { name, inputSchema } = tool as Tool;
    if (this.names.has(name)) {
      this.duplicates.add(name);
      return;
    }
    if (this.modern) {
      const scan = scanHeaderDeclarations(inputSchema);
      if ('problem' in scan) {
        this.log.warn(
          `skipped a tool the server listed: ${quoteClientText(name, 64)} of ${this.label} has invalid header declarations (${scan.problem}); ` +
            'it is not offered and never called. Report this to the server\'s maintainers.',
          { problem: 'invalid-header-declarations', tool: name },
        );
        this.skipped.push(`${quoteClientText(name, 64)} has invalid header declarations (${scan.problem})`);
        this.leftOut.set(name, `has invalid header declarations (${scan.problem})`);
        return;
      }
      if (scan.declarations.length > 0) (this.paramHeaders ??= new Map()).set(name, scan.declarations);
    }
    this.names.add(name);
    this.tools.push(tool as Tool);
  }

  result(): ToolList {
    this.warnHidden();
    const { duplicates } = this;
    if (duplicates.size > 0) {
      const shown = [...duplicates].slice(0, 5).map((n) => quoteClientText(n, 64)).join(', ');
      this.log.warn(
        `${this.label} listed ${duplicates.size} tool name(s) more than once (${shown}${duplicates.size > 5 ? ', …' : ''}); each is counted ` +
          'once and only its first entry is used. Report this to the server\'s maintainers.',
        { problem: 'duplicate-names', names: duplicates.size },
      );
    }
    return {
      tools: this.tools,
      duplicates: [...duplicates],
      notes: [...this.notes, ...skippedNote(this.skipped)],
      leftOut: this.leftOut,
      ...(this.scope ? { cacheScope: this.scope } : {}),
      ...(this.ttlMs !== undefined ? { ttlMs: this.ttlMs } : {}),
      ...(this.paramHeaders ? { paramHeaders: this.paramHeaders } : {}),
    };
  }
}

/** A server's catalog: distinct tools in listed order, and the names it listed more than once. */
export interface ToolList {
  tools: Tool[];
  duplicates: string[];
  /** Why the tools shown are not all the server listed (a listing cut short, tools left out), for the model. */
  notes: string[];
  /** The tools left out that have a name, each with why it is (e.g. `has no inputSchema object`). */
  leftOut: ReadonlyMap<string, string>;
  /** A modern server's `cacheScope` for the list (see listAllTools). */
  cacheScope?: 'public' | 'private';
  /** A modern server's `ttlMs` for the list: how long it may be reused without listing again. */
  ttlMs?: number;
  /** A modern server's tools that declare `Mcp-Param-*` headers, and their declarations (none: undefined). */
  paramHeaders?: Map<string, HeaderDeclaration[]>;
}

/** Why a listed entry cannot be offered: its name when it has one, and the reason (which reads after the name). */
function toolProblem(tool: unknown): { name?: string; reason: string } | undefined {
  if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) return { reason: 'an entry that is not an object' };
  const { name, inputSchema } = tool as { name?: unknown; inputSchema?: unknown };
  if (typeof name !== 'string' || name === '') return { reason: 'an entry without a name' };
  if (typeof inputSchema !== 'object' || inputSchema === null || Array.isArray(inputSchema)) {
    return { name, reason: 'has no inputSchema object' };
  }
  // The arguments of a call are always an object: a tool whose schema asks for anything else could never be called.
  const type = (inputSchema as { type?: unknown }).type;
  if (type !== undefined && type !== 'object' && !(Array.isArray(type) && type.includes('object'))) {
    return { name, reason: `has an inputSchema of type ${quoteClientText(String(type), 32)}, not "object"` };
  }
  return undefined;
}

/** Most left-out tools a note names (the rest are counted). */
const MAX_SKIPPED_NAMED = 5;

function skippedNote(skipped: readonly string[]): string[] {
  if (skipped.length === 0) return [];
  const named = skipped.slice(0, MAX_SKIPPED_NAMED).join('; ');
  const more = skipped.length > MAX_SKIPPED_NAMED ? `; and ${skipped.length - MAX_SKIPPED_NAMED} more` : '';
  return [`${skipped.length} tool(s) it listed are left out and cannot be called (report this to the server's maintainers): ${named}${more}`];
}
