import type { Command } from 'commander';
import { ProtocolError, ProtocolErrorCode, type Tool } from '@modelcontextprotocol/client';
import type { UpstreamSession } from '../core/workbench.js';
import { formatToolName } from '../catalog/names.js';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { unifiedDiff } from '../migrate/text-diff.js';
import { compileGlob } from '../shared/glob.js';
import { createRedactor, redactDeep } from '../shared/redact.js';
import { namesUser } from '../clients/user-places.js';
import type { WorkbenchConfig } from '../config/types.js';
import { approveTools, fingerprint, pinKey, pinsPathFor, readPins, shownDefinition, updatePins, usersWithPins, type PinFile, type PinnedServer } from '../state/pins.js';
import { EXIT_FAILURE, splitList, type CliContext } from './context.js';
import { createRuntime } from './runtime.js';
import { oneShotSettings } from './settings.js';
import { failedServerText } from '../clients/server-failure.js';
import { cliSteps, doctorCommand, toolsListCommand } from './next-command.js';

/**
 * `mcp-workbench tools approve | diff`: the approved tool definitions (README "Pinned tool definitions"). `approve`
 * records what the matching tools tell the model now; a running workbench follows at once. `diff` shows, field by
 * field, how a server's tools differ from what was approved.
 */
export function registerTrustCommands(tools: Command, ctx: CliContext, common: (cmd: Command) => Command): void {
  registerApproveCommand(tools, ctx, common);
  registerDiffCommand(tools, ctx, common);
}

/**
 * The client `tools approve` and `tools diff` list tools as: one that declares sampling and elicitation (every mode),
 * since servers list some tools only to clients that can serve them and any such client may be served later, but
 * answers nothing: a server that asks it something while listing gets an error and goes on.
 */
function reviewingClient(): UpstreamSession {
  const refuse = (): Promise<never> =>
    Promise.reject(new ProtocolError(ProtocolErrorCode.InvalidRequest, 'mcp-workbench tools approve/diff only lists tools and cannot answer requests'));
  return {
    capabilities: () => ({ sampling: { context: {}, tools: {} }, elicitation: { form: {}, url: {} } }),
    request: refuse,
    log: () => undefined,
  };
}

/** One server's live tools, and the key of its pins (see pinKey: a `${user:…}` server's are the `--user`'s). */
interface Listing {
  toolbox: string;
  server: string;
  key: string;
  tools: Tool[];
  /** For an entry naming `${user:…}`: `shared` for a `shared: true` one (over `--http` user `shared`'s), else `each`. */
  perUser?: 'shared' | 'each';
}

const USER_OPTION = [
  '--user <id>',
  'for a server whose entry names ${user:id}/${user:dir}: as listed to that user and approved for that user (its ${user:id}: 16 hex digits, or shared); default local',
] as const;

/**
 * The user of `--user`: a `${user:id}` of an `--http` workbench's token (16 hex digits), `shared` or `local`.
 * @throws WorkbenchError USAGE for anything else.
 */
function chosenUser(user: string | undefined): string {
  if (user === undefined || user === 'local' || user === 'shared' || /^[0-9a-f]{16}$/.test(user)) return user ?? 'local';
  throw new WorkbenchError(
    'USAGE',
    `--user expects a user id: the 16 hex digits of \${user:id} (as the workbench's log and held tools' notes name it), "shared" or "local"; got ${JSON.stringify(user)}.`,
  );
}

function registerApproveCommand(tools: Command, ctx: CliContext, common: (cmd: Command) => Command): void {
  common(tools.command('approve <names...>'))
    .description('approve what tools tell the model now (canonical names or * globs): held tools become usable, flags clear')
    .option('--json', 'machine-readable output')
    .option(...USER_OPTION)
    .action(async (names: string[], opts: { config?: string; stateFile?: string; json?: boolean; user?: string }) => {
      const patterns = names.flatMap((n) => splitList(n));
      await withListings(ctx, opts, async ({ listings, pinsPath, configSource }) => {
        const user = chosenUser(opts.user);
        const { approved, notes } = await approveListed(pinsPath, chooseTools(listings, patterns, user, configSource), user, ctx.log);
        if (opts.json) return ctx.print(JSON.stringify({ pins_file: pinsPath, approved, ...(notes.length > 0 && { notes }) }, null, 2));
        const done = approved.length > 0 ? `approved: ${approved.join(', ')}\n(${pinsPath})` : `already approved as they are now (${pinsPath})`;
        ctx.print([done, ...notes].join('\n'));
      });
    });
}

/**
 * The listed tools each pattern matches, by server key.
 * @throws WorkbenchError USAGE naming every pattern that matched no tool (then nothing is approved): a name the user
 *   typed that matches nothing is a usage error, exit 2, as for `tools disable` (README "Command line").
 */
function chooseTools(listings: readonly Listing[], patterns: readonly string[], user: string, configSource: string): Map<string, Listing> {
  const matchers = patterns.map((pattern) => ({ pattern, match: compileGlob(pattern) }));
  const chosen = new Map<string, Listing>();
  const matched = new Set<string>();
  for (const { toolbox, server, key, tools, perUser } of listings) {
    for (const tool of tools) {
      const hits = matchers.filter((m) => m.match(formatToolName(toolbox, server, tool.name)));
      if (hits.length === 0) continue;
      for (const hit of hits) matched.add(hit.pattern);
      const entry = chosen.get(key) ?? { toolbox, server, key, tools: [], ...(perUser && { perUser }) };
      entry.tools.push(tool);
      chosen.set(key, entry);
    }
  }
  const unmatched = patterns.filter((p) => !matched.has(p));
  if (unmatched.length > 0) {
    throw new WorkbenchError('USAGE', `No listed tool matches ${unmatched.map((p) => JSON.stringify(p)).join(', ')}: nothing was approved.`, {
      details: [`Use canonical names ({toolbox}__{server}__{tool}) or globs; \`${toolsListCommand(configSource)}\` shows them.`, ...perUserNote(listings, user)],
    });
  }
  return chosen;
}

/**
 * What to type for the tools of a `${user:…}` server that another user's process lists (README "Pinned tool
 * definitions"): its listing here was user `user`'s.
 */
function perUserNote(listings: readonly Listing[], user: string): string[] {
  const notes: string[] = [];
  for (const l of listings) {
    if (l.perUser === undefined) continue;
    const other = l.perUser === 'shared' ? (user === 'shared' ? undefined : '--user shared') : '--user ID';
    if (other === undefined) continue;
    const whose = l.perUser === 'shared' ? 'it is "shared": true, so over --http its tools are user shared\'s' : 'each --http user\'s tools are that user\'s own (ID: the 16 hex digits a held tool\'s note names)';
    notes.push(`${l.toolbox}/${l.server} names \${user:…} and was listed as user ${user}'s; ${whose}: add ${other}.`);
  }
  return notes;
}

/**
 * Records the chosen tools as approved (as `user`'s) in the pins file; returns the canonical names of those newly
 * approved, and for each `${user:…}` server whose pins other users have too, a note naming them and their `--user`.
 */
async function approveListed(pinsPath: string, chosen: ReadonlyMap<string, Listing>, user: string, log: Logger): Promise<{ approved: string[]; notes: string[] }> {
  const approved: string[] = [];
  const notes: string[] = [];
  await updatePins(
    pinsPath,
    (pins) => {
      let changed = false;
      for (const [key, { toolbox, server, tools: list, perUser }] of chosen) {
        const result = approveTools(pins, key, list);
        if (result.changed) changed = true;
        approved.push(...result.approved.map((name) => formatToolName(toolbox, server, name)));
        const others = perUser === undefined ? [] : usersWithPins(pins, toolbox, server).filter((id) => id !== user);
        if (others.length > 0) notes.push(`approved for user ${user}; ${usersSay(others)} pins of their own for ${toolbox}/${server}: ${addUser(others)} to approve theirs.`);
      }
      return changed;
    },
    { log },
  );
  return { approved, notes };
}

/** `user X has` / `users X, Y have`. */
function usersSay(ids: readonly string[]): string {
  return ids.length === 1 ? `user ${ids[0]} has` : `users ${ids.join(', ')} have`;
}

/** What to type for one of these users' pins (README "Pinned tool definitions", Servers of each user). */
function addUser(ids: readonly string[]): string {
  return `add --user ${ids[0]}${ids.length > 1 ? ' (or another of them)' : ''}`;
}

function registerDiffCommand(tools: Command, ctx: CliContext, common: (cmd: Command) => Command): void {
  common(tools.command('diff <server>'))
    .description('show how a server\'s tools ({toolbox}/{server}) differ from what was approved, field by field')
    .option('--json', 'machine-readable output')
    .option(...USER_OPTION)
    .action(async (target: string, opts: { config?: string; stateFile?: string; json?: boolean; user?: string }) => {
      const [toolbox, server, ...rest] = target.split('/');
      if (!toolbox || !server || rest.length > 0) {
        ctx.fail(new WorkbenchError('USAGE', `tools diff expects {toolbox}/{server} (one slash), got ${JSON.stringify(target)}; \`${toolsListCommand(opts.config)}\` names them.`));
        return;
      }
      await withListings(ctx, { ...opts, toolbox, server }, async ({ listings, pinsPath, configSource, redact }) => {
        const listing = listings.find((l) => l.toolbox === toolbox && l.server === server);
        // It is in the config (withListings checked): its failure to connect was logged above.
        if (!listing) throw new WorkbenchError('CONNECT_FAILED', `${target} could not be connected (see above), so its tools cannot be compared: fix it (\`${doctorCommand({ configSource, stateFile: opts.stateFile }, toolbox)}\` checks it) and run tools diff again.`);
        const pins = await approvedPins(pinsPath);
        const pinned = pins?.servers[listing.key];
        const changes = redact(diffServer(pinned, listing.tools));
        const some = approvedForSome(pinned, listing.tools);
        // A `${user:…}` server's pins are each user's own: say whose exist when this user has none (README "Pinned tool definitions").
        const users = listing.perUser === undefined || pins === undefined ? undefined : usersWithPins(pins, toolbox, server);
        const user = chosenUser(opts.user);
        const others = pinned === undefined ? (users ?? []).filter((id) => id !== user) : [];
        const note = others.length > 0 ? `user ${user} has no pins for ${target}; ${usersSay(others)}: ${addUser(others)} to review theirs.` : undefined;
        const json = { pins_file: pinsPath, server: target, approved: pinned !== undefined, ...(users && { users_with_pins: users }), ...(note && { note }), changes };
        if (opts.json) ctx.print(JSON.stringify({ ...json, ...(some.length > 0 && { approved_for_some_clients: some }) }, null, 2));
        else ctx.print([formatChanges(target, pinned !== undefined, changes), ...formatSome(target, some), ...(note ? ['', note] : [])].join('\n'));
      });
    });
}

/** The pins file's content; undefined when there is none. @throws WorkbenchError STATE_INVALID when it is broken. */
async function approvedPins(pinsPath: string): Promise<PinFile | undefined> {
  const read = await readPins(pinsPath);
  if (read.kind === 'broken') throw new WorkbenchError('STATE_INVALID', `The tool pins file ${pinsPath} ${read.reason}.`);
  return read.kind === 'valid' ? read.pins : undefined;
}

/** One difference between a tool as approved and as listed now. */
export interface ToolChange {
  tool: string;
  change: 'new' | 'removed' | 'changed';
  /** For `changed`: each field that differs, with a unified diff of its JSON. */
  fields?: { field: string; diff: string }[];
}

const FIELDS = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

function diffServer(pinned: PinnedServer | undefined, tools: readonly Tool[]): ToolChange[] {
  if (!pinned) return tools.map((t) => ({ tool: t.name, change: 'new' as const }));
  const changes: ToolChange[] = [];
  const listed = new Set(tools.map((t) => t.name));
  for (const tool of tools) {
    const pin = pinned.tools[tool.name];
    if (!pin) {
      changes.push({ tool: tool.name, change: 'new' });
      continue;
    }
    if (pin.fingerprint === fingerprint(tool)) continue;
    const now: Partial<Record<(typeof FIELDS)[number], unknown>> = shownDefinition(tool);
    const then: Partial<Record<(typeof FIELDS)[number], unknown>> = pin.definition;
    const fields = FIELDS.flatMap((field) => {
      const before = pretty(then[field]);
      const after = pretty(now[field]);
      return before === after ? [] : [{ field, diff: unifiedDiff(before, after, `${field} (approved)`, `${field} (now)`) }];
    });
    changes.push({ tool: tool.name, change: 'changed', fields });
  }
  for (const name of Object.keys(pinned.tools)) if (!listed.has(name)) changes.push({ tool: name, change: 'removed' });
  return changes;
}

/**
 * The listed tools approved as they are, but only for clients with the capabilities they were first listed to
 * (README "Pinned tool definitions"): `tools approve` approves them for every client.
 */
function approvedForSome(pinned: PinnedServer | undefined, tools: readonly Tool[]): { tool: string; capabilities: string[] }[] {
  return tools.flatMap((tool) => {
    const pin = pinned?.tools[tool.name];
    return pin?.onlyWith !== undefined && pin.fingerprint === fingerprint(tool) ? [{ tool: tool.name, capabilities: [...pin.onlyWith] }] : [];
  });
}

function formatSome(target: string, some: readonly { tool: string; capabilities: string[] }[]): string[] {
  if (some.length === 0) return [];
  const lines = some.map((s) => `  ${s.tool} only for clients with capabilities ${s.capabilities.join(' or ')}`);
  return ['', `${target}: ${some.length} tool(s) approved as first listed, for clients with these capabilities only (tools approve approves them for every client):`, ...lines];
}

function pretty(value: unknown): string {
  return value === undefined ? '' : `${JSON.stringify(value, null, 2)}\n`;
}

function formatChanges(target: string, approved: boolean, changes: readonly ToolChange[]): string {
  if (!approved) return `${target} has never been approved: all ${changes.length} of its tools are new.\n${changes.map((c) => `  + ${c.tool}`).join('\n')}`;
  if (changes.length === 0) return `${target}: every tool is as approved.`;
  const lines = [`${target}: ${changes.length} tool(s) differ from what was approved`];
  for (const c of changes) {
    lines.push('', `${c.change === 'new' ? '+' : c.change === 'removed' ? '-' : '~'} ${c.tool} (${c.change})`);
    for (const f of c.fields ?? []) lines.push(f.diff.trimEnd());
  }
  return lines.join('\n');
}

/**
 * Runs `work` with every server's live listing of the config (or one toolbox), then closes what was started. With
 * `user` (not `local`), servers are started as that user's, whose `${user:…}` they name (README "Files of each user").
 */
async function withListings(
  ctx: CliContext,
  opts: { config?: string; stateFile?: string; toolbox?: string; server?: string; user?: string },
  work: (input: { listings: Listing[]; pinsPath: string; configSource: string; redact: <T>(value: T) => T }) => Promise<void>,
): Promise<void> {
  let runtime: Awaited<ReturnType<typeof createRuntime>> | undefined;
  try {
    const user = chosenUser(opts.user);
    // A server that cannot start names the doctor to run with this config, where the model is told to ask the user.
    const started = await createRuntime({ ...oneShotSettings({ config: opts.config, stateFile: opts.stateFile }, ctx), startSteps: (config) => cliSteps({ configSource: config.source, stateFile: opts.stateFile }) });
    runtime = started;
    if (opts.toolbox !== undefined && opts.server !== undefined) assertServerIn(started.config, opts.toolbox, opts.server);
    // Listed as to a client that can do everything a server may list tools for, so a tool offered only to clients with
    // sampling or elicitation (server-everything's) can be reviewed and approved too.
    const session = runtime.workbench.openSession(reviewingClient(), user === 'local' ? { isolated: false } : { isolated: true, principal: user });
    const { listings, failed } = await runtime.workbench.serverListings(opts.toolbox, session);
    const redactor = createRedactor(runtime.config.secrets);
    for (const f of failed) ctx.log.warn(redactor(`${f.toolbox}/${f.server}: ${failedServerText(f)}`));
    const keyed = listings.map((l) => {
      const perUser = perUserIn(started.config, l.toolbox, l.server);
      return { ...l, key: pinKey(l.toolbox, l.server, perUser ? user : undefined), ...(perUser && { perUser }) };
    });
    await work({ listings: keyed, pinsPath: pinsPathFor(runtime.statePath), configSource: started.config.source, redact: (value) => redactDeep(value, redactor) });
    if (failed.length > 0) process.exitCode = EXIT_FAILURE;
  } catch (error) {
    ctx.fail(error);
  } finally {
    await runtime?.close();
  }
}

/**
 * Before anything is started: `toolbox/server` is a server of the config.
 * @throws WorkbenchError USAGE naming what was typed and every server there is.
 */
function assertServerIn(config: WorkbenchConfig, toolbox: string, server: string): void {
  const found = config.toolboxes.find((t) => t.name === toolbox);
  if (found?.servers.some((s) => s.name === server)) return;
  const all = config.toolboxes.flatMap((t) => t.servers.map((s) => `${t.name}/${s.name}`));
  const what = found ? `no server "${server}" in toolbox "${toolbox}"` : `no toolbox "${toolbox}"`;
  const near = (found ? found.servers.map((s) => `${toolbox}/${s.name}`) : all)[0];
  throw new WorkbenchError(
    'USAGE',
    `${config.source} has ${what}; its servers: ${all.join(', ') || '(none)'}.${near ? ` Name one as {toolbox}/{server}, e.g. \`mcp-workbench tools diff ${near}\`.` : ''}`,
  );
}

/** Whether the server's entry names `${user:…}` (then its pins are each user's own: see pinKey), and whose. */
function perUserIn(config: WorkbenchConfig, toolbox: string, server: string): Listing['perUser'] {
  const entry = config.toolboxes.find((t) => t.name === toolbox)?.servers.find((s) => s.name === server);
  if (entry === undefined || !namesUser(entry)) return undefined;
  return entry.shared === true ? 'shared' : 'each';
}
