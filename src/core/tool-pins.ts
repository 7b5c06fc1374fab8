import type { Tool } from '@modelcontextprotocol/client';
import type { TrustPolicy } from '../catalog/trust.js';
import type { WorkbenchConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { quoteClientText } from '../shared/client-text.js';
import { shellQuote } from '../shared/shell-quote.js';
import { namesUser } from '../clients/user-places.js';
import { isFirstSightFor, pinKey, recordFirstSight, serverKey, type PinFile, type PinnedServer, type PinsRead, type ValidPins, updatePins, userOption } from '../state/pins.js';
import { createTrustPolicy, NO_CAPABILITIES, type PinUsers } from '../state/trust-policy.js';

/**
 * The workbench's side of pinned tool definitions (README "Pinned tool definitions"): the trust policy of the config
 * and pins file in effect, the first sight of a server recorded as approved (trust on first use), and each tool that
 * is not the approved one said once in the log.
 */
export class ToolPins {
  private read: PinsRead;
  private policyFor:
    | { config: WorkbenchConfig; byCapabilities: Map<string, TrustPolicy>; byUsers: WeakMap<PinUsers, { capabilities: string; policy: TrustPolicy }>; perUser: boolean }
    | undefined;
  /** What was logged once, by pin key (or server key, for a pins file that cannot be trusted): `tool\0reason`. */
  private readonly told = new Map<string, Set<string>>();
  /** First sights waiting for the next write, by pin key and client capabilities; and those being written now. */
  private readonly pending = new Map<string, FirstSight>();
  private readonly writing = new Set<string>();
  /** The one writer of first sights, while it runs: the process never contends with itself for the pins file's lock. */
  private writer: Promise<void> | undefined;

  /**
   * @param record whether first sights are written to the file (serving); read-only commands never write it.
   * @param hooks `changed`: the pins in effect changed (catalogs built on them are stale); `ownWrite`: tells the file's
   *   watcher of a write of its own (pins.ts `PinsWatch`), so that neither the write nor a read it overlapped comes back.
   */
  constructor(
    private readonly path: string,
    read: PinsRead,
    private readonly log: Logger,
    private readonly record: boolean,
    private readonly hooks: { changed?: () => void; ownWrite?: () => (saved: ValidPins | undefined) => void } = {},
  ) {
    this.read = read;
    if (read.kind === 'broken') this.sayBroken(read.reason);
  }

  /**
   * The trust policy for `config` and the pins as last read, for listings to a client with the capabilities of `users`
   * (a session's connections; none without); a server naming `${user:…}` is checked against the pins of the user its
   * listing is for (see pinKey).
   */
  policy(config: WorkbenchConfig, users?: PinUsers): TrustPolicy {
    if (this.policyFor?.config !== config) {
      const perUser = config.toolboxes.some((t) => t.servers.some(namesUser));
      this.policyFor = { config, byCapabilities: new Map(), byUsers: new WeakMap(), perUser };
    }
    const capabilities = users?.capabilitiesKey?.() ?? NO_CAPABILITIES;
    // Without a `${user:…}` server the verdicts of sessions whose clients can do the same are the same: one policy
    // (and one fingerprint per tool) per capability set.
    if (!users || !this.policyFor.perUser) {
      let policy = this.policyFor.byCapabilities.get(capabilities);
      if (!policy) this.policyFor.byCapabilities.set(capabilities, (policy = createTrustPolicy(config, this.read, undefined, capabilities)));
      return policy;
    }
    let mine = this.policyFor.byUsers.get(users);
    if (mine?.capabilities !== capabilities) this.policyFor.byUsers.set(users, (mine = { capabilities, policy: createTrustPolicy(config, this.read, users, capabilities) }));
    return mine.policy;
  }

  /**
   * The pins file changed (an approval from `tools approve`, an edit, a first sight written): verdicts are re-derived,
   * and what was said once is forgotten only where it may no longer be true — for the keys whose pins changed.
   */
  set(read: PinsRead): void {
    const before = this.read;
    this.read = read;
    this.policyFor = undefined;
    if (before.kind === 'valid' && read.kind === 'valid') {
      for (const key of this.told.keys()) if (!samePins(before.pins.servers[key], read.pins.servers[key])) this.told.delete(key);
    } else if (before.kind !== read.kind || before.kind === 'broken') {
      this.told.clear();
    }
    if (read.kind === 'broken') this.sayBroken(read.reason);
    this.hooks.changed?.();
  }

  /**
   * A server listed its tools (to the session whose connections `users` are): on first sight (and not `quarantine:
   * true`) they are recorded as approved — for an entry naming `${user:…}`, as that user's; on the first listing to a
   * client with other capabilities, those not yet approved for such clients — otherwise each tool whose definition is
   * not the approved one is logged once.
   */
  observe(config: WorkbenchConfig, users: PinUsers, toolbox: string, server: string, tools: readonly Tool[]): void {
    const serverConfig = config.toolboxes.find((t) => t.name === toolbox)?.servers.find((s) => s.name === server);
    if (!serverConfig) return;
    const user = namesUser(serverConfig) ? users.userOf(toolbox, server).id : undefined;
    const key = pinKey(toolbox, server, user);
    const capabilities = users.capabilitiesKey?.() ?? NO_CAPABILITIES;
    if (this.isFirstSight(key, capabilities, tools, serverConfig.quarantine === true)) {
      if (this.record) this.recordFirstSight({ key, capabilities, tools });
      return;
    }
    const policy = this.policy(config, users);
    if (this.read.kind === 'broken') return this.sayServerUnverified(policy, toolbox, server, tools);
    for (const tool of tools) {
      const verdict = policy.verdict(toolbox, server, tool, tools);
      if (verdict.state === 'approved' || !this.firstTime(key, `${tool.name}\0${verdict.reason}`)) continue;
      const name = `${toolbox}__${server}__${tool.name}`;
      this.log.warn(
        `${quoteClientText(name, 120)}: ${verdict.reason}; ${verdict.held ? 'held: use_tool refuses it' : 'still usable, flagged in open_toolbox'} until approved ` +
          `(review: mcp-workbench tools diff ${serverKey(toolbox, server)}${userOption(user)}${configOption(config)}; approve: mcp-workbench tools approve ${name}${userOption(user)}${configOption(config)}).`,
      );
    }
  }

  /** Whether a listing is a first sight, of the server or by a client with other capabilities (see recordFirstSight in pins.ts). */
  private isFirstSight(key: string, capabilities: string, tools: readonly Tool[], quarantine: boolean): boolean {
    if (quarantine || this.read.kind === 'broken') return false;
    const pinned = this.read.kind === 'valid' ? this.read.pins.servers[key] : undefined;
    return pinned === undefined || isFirstSightFor(pinned, capabilities, tools);
  }

  /** Whether `what` is said of `key` for the first time (then it counts as said). */
  private firstTime(key: string, what: string): boolean {
    let said = this.told.get(key);
    if (said?.has(what)) return false;
    if (!said) this.told.set(key, (said = new Set()));
    said.add(what);
    return true;
  }

  /**
   * With a pins file that cannot be trusted every tool is unverified for the same reason, which {@link sayBroken} told:
   * one line per server says what that means for its tools, not one per tool.
   */
  private sayServerUnverified(policy: TrustPolicy, toolbox: string, server: string, tools: readonly Tool[]): void {
    const key = serverKey(toolbox, server);
    const held = tools.filter((tool) => {
      const verdict = policy.verdict(toolbox, server, tool, tools);
      return verdict.state !== 'approved' && verdict.held;
    }).length;
    if (tools.length === 0 || !this.firstTime(key, `broken\0${held}/${tools.length}`)) return;
    const what = held === 0 ? 'still usable, flagged in open_toolbox' : held === tools.length ? 'held: use_tool refuses them' : `${held} of them held`;
    this.log.warn(`the ${tools.length} tools of ${key} are unverified while the tool pins file ${this.path} cannot be trusted; ${what} until it is fixed or deleted.`);
  }

  private recordFirstSight(sight: FirstSight): void {
    const id = `${sight.key}\0${sight.capabilities}`;
    if (this.pending.has(id) || this.writing.has(id)) return;
    this.pending.set(id, sight);
    this.writer ??= this.writeFirstSights();
  }

  /**
   * Writes the first sights, all that are waiting in one locked update, until none is left. One writer at a time:
   * sessions of many users listing their servers at once used to each wait for the file's lock in their own retry
   * loop, so on a busy machine some timed out and one could break the lock its own process held as stale.
   */
  private async writeFirstSights(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = [...this.pending.values()];
      this.pending.clear();
      for (const { key, capabilities } of batch) this.writing.add(`${key}\0${capabilities}`);
      const end = this.hooks.ownWrite?.();
      // Applied while the file is still locked, so first sights recorded by several workbenches apply in the order written.
      const onSaved = (saved: ValidPins): void => {
        this.set(saved);
        end?.(saved);
      };
      // Only what this write recorded is logged: another process may have recorded some of the batch meanwhile.
      let recorded: { sight: FirstSight; whole: boolean; names: string[] }[] = [];
      const apply = (pins: PinFile): boolean => {
        recorded = [];
        for (const sight of batch) {
          const whole = !(sight.key in pins.servers);
          const names = recordFirstSight(pins, sight.key, sight.tools, sight.capabilities);
          if (names !== undefined) recorded.push({ sight, whole, names });
        }
        return recorded.length > 0;
      };
      try {
        await updatePins(this.path, apply, { log: this.log, onSaved });
        for (const { sight, whole, names } of recorded) this.sayRecorded(sight, whole, names);
      } catch (error) {
        this.log.warn(`could not record the tool definitions of ${[...new Set(batch.map((s) => s.key))].join(', ')}: ${errorMessage(error)}`);
      } finally {
        end?.(undefined);
        this.writing.clear();
      }
    }
    this.writer = undefined;
  }

  private sayRecorded({ key, capabilities, tools }: FirstSight, whole: boolean, names: readonly string[]): void {
    if (whole) {
      this.log.info(`recorded the tool definitions of ${key} as approved (${tools.length} tools) in ${this.path}`);
    } else if (names.length > 0) {
      this.log.info(`recorded ${names.join(', ')} of ${key}, first listed to a client with capabilities ${capabilities}, as approved for such clients in ${this.path}`);
    }
  }

  /** Waits for the first sights being written (at shutdown: a write cut short leaves its lock behind and records nothing). */
  async flush(): Promise<void> {
    await this.writer;
  }

  private sayBroken(reason: string): void {
    this.log.error(
      `The tool pins file ${this.path} ${reason}: no tool definition can be checked, so tools are flagged (held where toolChanges is "quarantine"). ` +
        'Fix it, or delete it to approve every tool as it is now.',
    );
  }
}

/** A server's listing to a client with `capabilities` (capabilitiesKey) to record as approved: see recordFirstSight in pins.ts. */
interface FirstSight {
  key: string;
  capabilities: string;
  tools: readonly Tool[];
}

/** The `--config` the commands a warning names need (they start servers only from a config named), quoted for a shell. */
function configOption(config: WorkbenchConfig): string {
  return config.source === '' ? '' : ` --config ${shellQuote(config.source)}`;
}

/**
 * Whether two pins of one key say the same of every tool (read from the file twice, they are never the same object):
 * the clients its listings were recorded for, and per tool its fingerprint, approval time (lines name it) and
 * clients. A tool's definition is not compared: its fingerprint stands for it.
 */
function samePins(a: PinnedServer | undefined, b: PinnedServer | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || !sameList(a.seenWith, b.seenWith)) return false;
  const names = Object.keys(a.tools);
  if (names.length !== Object.keys(b.tools).length) return false;
  return names.every((name) => {
    const [x, y] = [a.tools[name]!, b.tools[name]];
    return y !== undefined && x.fingerprint === y.fingerprint && x.approved === y.approved && sameList(x.onlyWith, y.onlyWith);
  });
}

/** Whether two optional lists hold the same strings in the same order. */
function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.length === b.length && a.every((s, i) => s === b[i]));
}
