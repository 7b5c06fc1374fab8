import type { Tool } from '@modelcontextprotocol/client';
import type { TrustPolicy, TrustVerdict } from '../catalog/trust.js';
import type { ToolChanges, WorkbenchConfig } from '../config/types.js';
import { capabilitiesKey } from '../clients/capabilities-key.js';
import { namesUser } from '../clients/user-places.js';
import { fingerprint, isFirstSightFor, pinKey, serverKey, type PinsRead } from './pins.js';

const APPROVED: TrustVerdict = { state: 'approved' };

/** The capabilities key of a client that declares none (the CLI's, doctor's). */
export const NO_CAPABILITIES = capabilitiesKey(undefined);

/**
 * Whose process a server's listing comes from, for an entry naming `${user:…}`, and the client capabilities its
 * connections declare (a session's ClientManager).
 */
export interface PinUsers {
  userOf(toolbox: string, server: string): { id: string };
  capabilitiesKey?(): string;
}

/**
 * The trust policy of a config and its pins file: a server seen for the first time is trusted as it is (its tools
 * are recorded), unless it is `quarantine: true`; from then on a tool that is new, or whose fingerprint differs from
 * the approved one, is flagged (`toolChanges: "warn"`) or held (`"quarantine"`). A pins file that cannot be trusted
 * approves nothing. Fingerprints are computed once per tool object. A server whose entry names `${user:…}` is
 * checked against the pins of the user `users` says its listing is for (see {@link pinKey}); without `users`, user
 * `local`'s. Listings are those made to a client with `capabilities` (capabilitiesKey): the first listing to a client
 * with capabilities a server's pins were not recorded with is trusted as a first sight too, unless an approved tool
 * of it changed (see isFirstSightFor); a tool approved for clients with other capabilities only is new to this one.
 */
export function createTrustPolicy(config: WorkbenchConfig, pins: PinsRead, users?: PinUsers, capabilities = NO_CAPABILITIES): TrustPolicy {
  const modes = new Map<string, { mode: ToolChanges; quarantine: boolean; perUser: boolean }>();
  for (const toolbox of config.toolboxes) {
    for (const server of toolbox.servers) {
      modes.set(serverKey(toolbox.name, server.name), {
        mode: server.toolChanges ?? toolbox.toolChanges ?? config.toolChanges ?? 'warn',
        quarantine: server.quarantine === true,
        perUser: namesUser(server),
      });
    }
  }
  const prints = new WeakMap<Tool, string>();
  const printOf = (tool: Tool): string => {
    let print = prints.get(tool);
    if (print === undefined) prints.set(tool, (print = fingerprint(tool)));
    return print;
  };
  const firstSights = new WeakMap<readonly Tool[], boolean>();
  return {
    verdict(toolbox, server, tool, listing) {
      const { mode, quarantine, perUser } = modes.get(serverKey(toolbox, server)) ?? { mode: 'warn' as const, quarantine: false, perUser: false };
      const id = perUser ? users?.userOf(toolbox, server).id : undefined;
      // The user whose own pins apply (README "Pinned tool definitions"): named in reasons, and in the approve command.
      const user = id !== undefined && id !== 'local' ? { user: id } : {};
      const forUser = id !== undefined && id !== 'local' ? ` for user ${id}` : '';
      const held = mode === 'quarantine';
      if (pins.kind === 'broken') {
        return { state: 'unverified', held: held || quarantine, reason: `the tool pins file ${pins.reason}, so no definition can be checked`, ...user };
      }
      const pinned = pins.kind === 'valid' ? pins.pins.servers[pinKey(toolbox, server, id)] : undefined;
      if (!pinned) {
        if (!quarantine) return APPROVED; // trust on first use: recorded as it is now
        return { state: 'new', held: true, reason: `server "${server}" is held until its tools are approved${forUser} (quarantine: true)`, ...user };
      }
      let firstSight = firstSights.get(listing);
      if (firstSight === undefined) firstSights.set(listing, (firstSight = !quarantine && isFirstSightFor(pinned, capabilities, listing, printOf)));
      if (firstSight) return APPROVED; // trust on first use by a client with these capabilities: recorded as it is now
      const pin = pinned.tools[tool.name];
      if (!pin) return { state: 'new', held, reason: `new on server "${server}" since its tools were approved${forUser}`, ...user };
      if (pin.fingerprint !== printOf(tool)) return { state: 'changed', held, reason: `what it tells the model changed since it was approved${forUser} (${pin.approved})`, ...user };
      if (pin.onlyWith !== undefined && !pin.onlyWith.includes(capabilities)) {
        return { state: 'new', held, reason: `new on server "${server}" to clients with these capabilities: approved${forUser} only for clients that first saw it with other capabilities`, ...user };
      }
      return APPROVED;
    },
  };
}
