import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { Tool } from '@modelcontextprotocol/client';
import { parseJsonText } from '../config/parse-json.js';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { TOOL_PINS_FILE, unwritable } from './file-errors.js';
import { lockStateRoomFile } from './lock-file.js';
import { danglingLink, danglingLinkOn } from '../shared/dangling-link.js';
import { errnoCode } from '../shared/errno.js';
import type { LockOptions } from '../shared/file-lock.js';
import { DEFAULT_WATCH_INTERVAL_MS, followFiles } from '../shared/file-watch.js';
import { OwnWrites } from '../shared/own-writes.js';

/**
 * The approved definitions of tools (README "Pinned tool definitions"): for each server, what each of its tools told
 * the model when it was approved — name, title, description, input and output schema, annotations — and a
 * fingerprint of that. Kept in `tool-pins.json` beside the tool-state file, written atomically under the same kind
 * of lock, never overwritten when it does not parse.
 */

export const PINS_FILE_NAME = 'tool-pins.json';
const FORMAT = 1;

/** What the model is shown of a tool, as the server listed it (overrides are the user's own text, not pinned). */
export interface ShownDefinition {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
}

export interface PinnedTool {
  fingerprint: string;
  /** When it was approved (ISO 8601). */
  approved: string;
  definition: ShownDefinition;
  /**
   * Recorded on the first listing to a client with capabilities the server's pins were not recorded with: approved
   * for clients with these capabilities (capabilitiesKey) only. Absent: for every client (`tools approve` clears it).
   */
  onlyWith?: string[];
}

export interface PinnedServer {
  /** When the server was first approved (ISO 8601): from then on its tools are known. */
  approved: string;
  tools: Record<string, PinnedTool>;
  /**
   * The client capabilities (capabilitiesKey) the server's listings were recorded for on first sight. Absent (pins of
   * `tools approve`, or of an older workbench): its approved tools stand for every client, and no first sight is left.
   */
  seenWith?: string[];
}

export interface PinFile {
  format: number;
  /** By `toolbox/server`. */
  servers: Record<string, PinnedServer>;
}

/** The pins file of a tool-state file: beside it. */
export function pinsPathFor(statePath: string): string {
  return join(dirname(statePath), PINS_FILE_NAME);
}

export function serverKey(toolbox: string, server: string): string {
  return `${toolbox}/${server}`;
}

/**
 * What a server's pins are filed under: `toolbox/server`; for an entry naming `${user:…}` served to a user other than
 * `local` (a token of an `--http` workbench, or `shared`), `toolbox/server@<user id>`, since each user's process may
 * list tools of that user's own (README "Pinned tool definitions"). User `local` keeps the plain key: over stdio and
 * for the CLI nothing changed, and pins recorded before stay in force there.
 */
export function pinKey(toolbox: string, server: string, user?: string): string {
  return user === undefined || user === 'local' ? serverKey(toolbox, server) : `${serverKey(toolbox, server)}@${user}`;
}

/**
 * The users with pins of their own for a server: `local` when `toolbox/server` is pinned, then each `ID` of a
 * `toolbox/server@ID` key (see pinKey), in the file's order.
 */
export function usersWithPins(pins: PinFile, toolbox: string, server: string): string[] {
  const key = serverKey(toolbox, server);
  const prefix = `${key}@`;
  return Object.keys(pins.servers).flatMap((k) => (k === key ? ['local'] : k.startsWith(prefix) ? [k.slice(prefix.length)] : []));
}

/** The `--user` option of `tools approve` and `tools diff` that acts on `user`'s pins (none for `local`). */
export function userOption(user?: string): string {
  return user === undefined || user === 'local' ? '' : ` --user ${user}`;
}

export function shownDefinition(tool: Tool): ShownDefinition {
  return {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
  };
}

/** A hash of what the model is shown of a tool; key order does not matter. */
export function fingerprint(tool: Tool): string {
  return `sha256:${createHash('sha256').update(stableJson(shownDefinition(tool))).digest('hex')}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The pins file as read: its content (the pins, and the text they were read from or written as), none yet, or a file
 * that cannot be trusted (then nothing is approved).
 */
export type PinsRead = ValidPins | { kind: 'missing' } | { kind: 'broken'; reason: string };
export type ValidPins = { kind: 'valid'; pins: PinFile; text: string };

export async function readPins(path: string): Promise<PinsRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    // ENOTDIR: a part of its path is a file (HOME set to a file, say), so no pins file can be there: none yet, as for
    // the tool state file; recording one then fails with a message naming what is in the way.
    const code = errnoCode(error);
    // A link whose target is gone is no "none yet": the approvals are somewhere, and a write would replace the link.
    const dangling = code === 'ENOENT' ? await danglingLinkOn(path) : undefined;
    if (dangling !== undefined) return { kind: 'broken', reason: `cannot be read: ${danglingLink(dangling, path).message}` };
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    if (code === 'EISDIR') return { kind: 'broken', reason: 'is a directory, not a file (put the pins file there instead)' };
    return { kind: 'broken', reason: `cannot be read (${code ?? String(error)})` };
  }
  return parsePins(text);
}

export function parsePins(text: string): PinsRead {
  let value: unknown;
  try {
    value = parseJsonText(text).value;
  } catch {
    return { kind: 'broken', reason: 'does not parse as JSON' };
  }
  const file = value as Partial<PinFile> | null;
  if (typeof file !== 'object' || file === null || typeof file.servers !== 'object' || file.servers === null || Array.isArray(file.servers)) {
    return { kind: 'broken', reason: 'is not a pins file (expected {"format": 1, "servers": {…}})' };
  }
  for (const [key, server] of Object.entries(file.servers)) {
    if (typeof server !== 'object' || server === null || typeof server.tools !== 'object' || server.tools === null) {
      return { kind: 'broken', reason: `has a malformed entry for "${key}"` };
    }
    if (server.seenWith !== undefined && !isStrings(server.seenWith)) return { kind: 'broken', reason: `has a malformed "seenWith" for "${key}"` };
    for (const [name, pin] of Object.entries(server.tools)) {
      if (typeof pin?.fingerprint !== 'string' || (pin.onlyWith !== undefined && !isStrings(pin.onlyWith))) {
        return { kind: 'broken', reason: `has a malformed pin for "${key}" tool "${name}"` };
      }
    }
  }
  return { kind: 'valid', pins: { format: FORMAT, servers: file.servers }, text };
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

export interface UpdatePinsOptions extends LockOptions {
  log: Logger;
  /**
   * Called with what the file then says (written, or already so) while the lock is still held: a running workbench
   * applies it there, and its watcher learns of its own write before anyone else can change the file again.
   */
  onSaved?: (saved: ValidPins) => void;
}

/**
 * One atomic read-modify-write of the pins file under its lock: `change` edits the pins in place and returns whether
 * anything changed (nothing is written otherwise). A file that does not parse is never overwritten.
 *
 * @throws WorkbenchError `STATE_INVALID` when the file cannot be trusted; `STATE_UNWRITABLE` when it cannot be written.
 */
export async function updatePins(path: string, change: (pins: PinFile) => boolean, options: UpdatePinsOptions): Promise<PinFile> {
  // The real file is locked, read and replaced: a link to it stays a link, and every path to it holds one lock.
  const { target, release } = await lockStateRoomFile(path, TOOL_PINS_FILE, options);
  try {
    const read = await readPins(target);
    if (read.kind === 'broken') {
      throw new WorkbenchError('STATE_INVALID', `The tool pins file ${path} ${read.reason}. Nothing was changed. Fix it, or delete it to approve every tool again as it is now.`);
    }
    const pins: PinFile = read.kind === 'valid' ? read.pins : { format: FORMAT, servers: {} };
    let text = read.kind === 'valid' ? read.text : '';
    if (change(pins)) {
      text = `${JSON.stringify({ format: FORMAT, servers: pins.servers }, null, 2)}\n`;
      try {
        await writeFileAtomic(target, text, { mode: 0o600 });
      } catch (error) {
        throw unwritable(path, 'write the new content', error, TOOL_PINS_FILE);
      }
    }
    options.onSaved?.({ kind: 'valid', pins, text });
    return pins;
  } finally {
    await release();
  }
}

/**
 * Records `tools` as approved now for `key` (adding the server when new). Returns the names whose approved
 * definition changed, and whether the file changed at all (a new server with no tools changes it too).
 */
export function approveTools(pins: PinFile, key: string, tools: readonly Tool[], now = new Date()): { approved: string[]; changed: boolean } {
  const stamp = now.toISOString();
  const added = !(key in pins.servers);
  const server = (pins.servers[key] ??= { approved: stamp, tools: {} });
  const approved: string[] = [];
  for (const tool of tools) {
    const print = fingerprint(tool);
    const pin = server.tools[tool.name];
    // Approved for some clients only (a first sight by a client with more capabilities): now for every client.
    if (pin?.fingerprint === print && pin.onlyWith === undefined) continue;
    server.tools[tool.name] = { fingerprint: print, approved: stamp, definition: shownDefinition(tool) };
    approved.push(tool.name);
  }
  return { approved, changed: added || approved.length > 0 };
}

/**
 * Whether a listing of a pinned server to a client with `capabilities` is a first sight (README "Pinned tool
 * definitions"): the server's pins were recorded on first sight for clients with other capabilities only, and every
 * tool listed that has an approved definition still tells the model just that. A server may list more tools to a
 * client that can serve sampling or elicitation; an approved tool that changed makes it no first sight.
 */
export function isFirstSightFor(server: PinnedServer, capabilities: string, tools: readonly Tool[], print: (tool: Tool) => string = fingerprint): boolean {
  if (server.seenWith === undefined || server.seenWith.includes(capabilities)) return false;
  return tools.every((tool) => {
    const pin = server.tools[tool.name];
    return pin === undefined || pin.fingerprint === print(tool);
  });
}

/**
 * Records a first sight of `tools` under `key`, listed to a client with `capabilities`: a server not pinned yet gets
 * them all, approved for every client; a pinned server (see isFirstSightFor) gets those not approved for such clients,
 * approved for clients with those capabilities only. Returns the names recorded, or undefined when it was no first
 * sight (any more: another process recorded it meanwhile).
 */
export function recordFirstSight(pins: PinFile, key: string, tools: readonly Tool[], capabilities: string, now = new Date()): string[] | undefined {
  const server = pins.servers[key];
  if (server === undefined) {
    const { approved } = approveTools(pins, key, tools, now);
    pins.servers[key]!.seenWith = [capabilities];
    return approved;
  }
  if (!isFirstSightFor(server, capabilities, tools)) return undefined;
  const stamp = now.toISOString();
  const recorded: string[] = [];
  for (const tool of tools) {
    const pin = server.tools[tool.name];
    if (pin === undefined) server.tools[tool.name] = { fingerprint: fingerprint(tool), approved: stamp, definition: shownDefinition(tool), onlyWith: [capabilities] };
    else if (pin.onlyWith !== undefined && !pin.onlyWith.includes(capabilities)) pin.onlyWith.push(capabilities);
    else continue;
    recorded.push(tool.name);
  }
  server.seenWith!.push(capabilities);
  return recorded;
}

/** A running follow of the pins file: see {@link watchPins}. */
export interface PinsWatch {
  /** Stops polling: no `onChange` after it returns. */
  close(): void;
  /**
   * The caller is about to change the file itself (`updatePins`): until the function returned is called — with what
   * the file then says and the caller applied, or with nothing when it saved nothing — no read is acted on, and a
   * read under way meanwhile is dropped and done again (it may hold older content, or the caller's own, which is no
   * change). Calling the returned function again does nothing.
   */
  ownWrite(): (saved: ValidPins | undefined) => void;
}

/**
 * Follows the pins file (an approval by `tools approve` in another process, an edit): calls `onChange` with what it
 * reads whenever that differs from what was last read or saved by the caller — starting from `initial`, what the
 * caller read before — polled like the tool-state file (README "Enabled and disabled tools" says why polling).
 * Never throws and never keeps the process alive.
 */
export function watchPins(path: string, onChange: (read: PinsRead) => void, log: Logger, initial: PinsRead, intervalMs = DEFAULT_WATCH_INTERVAL_MS): PinsWatch {
  let closed = false;
  let last = pinsKey(initial);
  const ownWrites = new OwnWrites();
  const watcher = followFiles(
    [path],
    async () => {
      const mark = ownWrites.mark();
      const read = await readPins(path);
      // Overlapped the caller's own write: what was read may be older than what it applied; read again next poll.
      if (closed || ownWrites.overlapped(mark)) return false;
      const key = pinsKey(read);
      if (key === last) return true;
      last = key;
      onChange(read);
      return true;
    },
    { log, intervalMs, what: path },
  );
  return {
    close() {
      closed = true;
      watcher.close();
    },
    ownWrite() {
      const end = ownWrites.begin();
      return (saved) => {
        if (end() && saved !== undefined) last = pinsKey(saved);
      };
    },
  };
}

/** What tells two reads of the pins file apart for the workbench: its text (a broken file, by what is wrong with it). */
function pinsKey(read: PinsRead): string {
  if (read.kind === 'valid') return `valid\0${read.text}`;
  return read.kind === 'broken' ? `broken\0${read.reason}` : 'missing';
}
