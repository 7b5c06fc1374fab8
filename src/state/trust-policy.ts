import type { Tool } from '@modelcontextprotocol/client';
import type { TrustPolicy, TrustVerdict } from '../catalog/trust.js';
import type { ToolChanges, WorkbenchConfig } from '../config/types.js';
import { fingerprint, serverKey, type PinsRead } from './pins.js';

const APPROVED: TrustVerdict = { state: 'approved' };

/**
 * The trust policy of a config and its pins file: a server seen for the first time is trusted as it is (its tools
 * are recorded), unless it is `quarantine: true`; from then on a tool that is new, or whose fingerprint differs from
 * the approved one, is flagged (`toolChanges: "warn"`) or held (`"quarantine"`). A pins file that cannot be trusted
 * approves nothing. Fingerprints are computed once per tool object.
 */
export function createTrustPolicy(config: WorkbenchConfig, pins: PinsRead): TrustPolicy {
  const modes = new Map<string, { mode: ToolChanges; quarantine: boolean }>();
  for (const toolbox of config.toolboxes) {
    for (const server of toolbox.servers) {
      modes.set(serverKey(toolbox.name, server.name), {
        mode: server.toolChanges ?? toolbox.toolChanges ?? config.toolChanges ?? 'warn',
        quarantine: server.quarantine === true,
      });
    }
  }
  const prints = new WeakMap<Tool, string>();
  const printOf = (tool: Tool): string => {
    let print = prints.get(tool);
    if (print === undefined) prints.set(tool, (print = fingerprint(tool)));
    return print;
  };
  return {
    verdict(toolbox, server, tool) {
      const key = serverKey(toolbox, server);
      const { mode, quarantine } = modes.get(key) ?? { mode: 'warn' as const, quarantine: false };
      const held = mode === 'quarantine';
      if (pins.kind === 'broken') {
        return { state: 'unverified', held: held || quarantine, reason: `the tool pins file ${pins.reason}, so no definition can be checked` };
      }
      const pinned = pins.kind === 'valid' ? pins.pins.servers[key] : undefined;
      if (!pinned) {
        if (!quarantine) return APPROVED; // trust on first use: recorded as it is now
        return { state: 'new', held: true, reason: `server "${server}" is held until its tools are approved (quarantine: true)` };
      }
      const pin = pinned.tools[tool.name];
      if (!pin) return { state: 'new', held, reason: `new on server "${server}" since its tools were approved` };
      if (pin.fingerprint !== printOf(tool)) return { state: 'changed', held, reason: `what it tells the model changed since it was approved (${pin.approved})` };
      return APPROVED;
    },
  };
}
