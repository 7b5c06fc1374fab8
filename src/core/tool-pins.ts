import type { Tool } from '@modelcontextprotocol/client';
import type { TrustPolicy } from '../catalog/trust.js';
import type { WorkbenchConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { quoteClientText } from '../shared/client-text.js';
import { namesUser } from '../clients/user-places.js';
import { approveTools, pinKey, serverKey, type PinsRead, type ValidPins, updatePins, userOption } from '../state/pins.js';
import { createTrustPolicy, type PinUsers } from '../state/trust-policy.js';

/**
 * The workbench's side of pinned tool definitions (README "Pinned tool definitions"): the trust policy of the config
 * and pins file in effect, the first sight of a server recorded as approved (trust on first use), and each tool that
 * is not the approved one said once in the log.
 */
export class ToolPins {
  private read: PinsRead;
  private policyFor: { config: WorkbenchConfig; policy: TrustPolicy; byUsers: WeakMap<PinUsers, TrustPolicy>; perUser: boolean } | undefined;
  /** `key\0tool\0reason` already logged. */
  private readonly told = new Set<string>();
  /** First sights waiting for the next write, by pin key; and the key being written now. */
  private readonly pending = new Map<string, readonly Tool[]>();
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
   * The trust policy for `config` and the pins as last read; with `users` (a session's connections), a server naming
   * `${user:…}` is checked against the pins of the user its listing is for (see pinKey).
   */
  policy(config: WorkbenchConfig, users?: PinUsers): TrustPolicy {
    if (this.policyFor?.config !== config) {
      const perUser = config.toolboxes.some((t) => t.servers.some(namesUser));
      this.policyFor = { config, policy: createTrustPolicy(config, this.read), byUsers: new WeakMap(), perUser };
    }
    // Without a `${user:…}` server every session's verdicts are the same: one policy (and one fingerprint per tool).
    if (!users || !this.policyFor.perUser) return this.policyFor.policy;
    let policy = this.policyFor.byUsers.get(users);
    if (!policy) this.policyFor.byUsers.set(users, (policy = createTrustPolicy(config, this.read, users)));
    return policy;
  }

  /** The pins file changed (an approval from `tools approve`, or an edit): verdicts are re-derived. */
  set(read: PinsRead): void {
    this.read = read;
    this.policyFor = undefined;
    this.told.clear();
    if (read.kind === 'broken') this.sayBroken(read.reason);
    this.hooks.changed?.();
  }

  /**
   * A server listed its tools (to the session whose connections `users` are): on first sight (and not `quarantine:
   * true`) they are recorded as approved — for an entry naming `${user:…}`, as that user's — otherwise each tool whose
   * definition is not the approved one is logged once.
   */
  observe(config: WorkbenchConfig, users: PinUsers, toolbox: string, server: string, tools: readonly Tool[]): void {
    const serverConfig = config.toolboxes.find((t) => t.name === toolbox)?.servers.find((s) => s.name === server);
    if (!serverConfig) return;
    const user = namesUser(serverConfig) ? users.userOf(toolbox, server).id : undefined;
    const key = pinKey(toolbox, server, user);
    if (this.read.kind !== 'broken' && !(this.read.kind === 'valid' && key in this.read.pins.servers) && !serverConfig.quarantine) {
      if (this.record) this.recordFirstSight(key, tools);
      return;
    }
    const policy = this.policy(config, users);
    if (this.read.kind === 'broken') return this.sayServerUnverified(policy, toolbox, server, tools);
    for (const tool of tools) {
      const verdict = policy.verdict(toolbox, server, tool);
      if (verdict.state === 'approved') continue;
      const said = `${key}\0${tool.name}\0${verdict.reason}`;
      if (this.told.has(said)) continue;
      this.told.add(said);
      const name = `${toolbox}__${server}__${tool.name}`;
      this.log.warn(
        `${quoteClientText(name, 120)}: ${verdict.reason}; ${verdict.held ? 'held: use_tool refuses it' : 'still usable, flagged in open_toolbox'} until approved ` +
          `(review: mcp-workbench tools diff ${serverKey(toolbox, server)}${userOption(user)}; approve: mcp-workbench tools approve ${name}${userOption(user)}).`,
      );
    }
  }

  /**
   * With a pins file that cannot be trusted every tool is unverified for the same reason, which {@link sayBroken} told:
   * one line per server says what that means for its tools, not one per tool.
   */
  private sayServerUnverified(policy: TrustPolicy, toolbox: string, server: string, tools: readonly Tool[]): void {
    const key = serverKey(toolbox, server);
    const held = tools.filter((tool) => {
      const verdict = policy.verdict(toolbox, server, tool);
      return verdict.state !== 'approved' && verdict.held;
    }).length;
    const said = `${key}\0broken\0${held}/${tools.length}`;
    if (tools.length === 0 || this.told.has(said)) return;
    this.told.add(said);
    const what = held === 0 ? 'still usable, flagged in open_toolbox' : held === tools.length ? 'held: use_tool refuses them' : `${held} of them held`;
    this.log.warn(`the ${tools.length} tools of ${key} are unverified while the tool pins file ${this.path} cannot be trusted; ${what} until it is fixed or deleted.`);
  }

  private recordFirstSight(key: string, tools: readonly Tool[]): void {
    if (this.pending.has(key) || this.writing.has(key)) return;
    this.pending.set(key, tools);
    this.writer ??= this.writeFirstSights();
  }

  /**
   * Writes the first sights, all that are waiting in one locked update, until none is left. One writer at a time:
   * sessions of many users listing their servers at once used to each wait for the file's lock in their own retry
   * loop, so on a busy machine some timed out and one could break the lock its own process held as stale.
   */
  private async writeFirstSights(): Promise<void> {
    while (this.pending.size > 0) {
      const batch = new Map(this.pending);
      this.pending.clear();
      for (const key of batch.keys()) this.writing.add(key);
      const end = this.hooks.ownWrite?.();
      // Applied while the file is still locked, so first sights recorded by several workbenches apply in the order written.
      const onSaved = (saved: ValidPins): void => {
        this.set(saved);
        end?.(saved);
      };
      const approve = (pins: Parameters<typeof approveTools>[0]): boolean =>
        [...batch].filter(([key, tools]) => !(key in pins.servers) && approveTools(pins, key, tools).changed).length > 0;
      try {
        await updatePins(this.path, approve, { log: this.log, onSaved });
        for (const [key, tools] of batch) this.log.info(`recorded the tool definitions of ${key} as approved (${tools.length} tools) in ${this.path}`);
      } catch (error) {
        this.log.warn(`could not record the tool definitions of ${[...batch.keys()].join(', ')}: ${errorMessage(error)}`);
      } finally {
        end?.(undefined);
        this.writing.clear();
      }
    }
    this.writer = undefined;
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
