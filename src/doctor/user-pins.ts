import type { Tool } from '@modelcontextprotocol/client';
import type { TrustPolicy } from '../catalog/trust.js';
import { ClientManager } from '../clients/client-manager.js';
import { namesUser, userPlace } from '../clients/user-places.js';
import type { ServerConfig, ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { createLogger } from '../log.js';
import { userOption, usersWithPins, type PinsRead } from '../state/pins.js';
import { createTrustPolicy } from '../state/trust-policy.js';
import { VERSION } from '../version.js';
import type { CatalogProblem, DoctorOptions } from './types.js';

/**
 * The tools whose definitions are not the approved ones: held (an error: they cannot be called) or only flagged. With
 * `user` (a `${user:…}` server's user other than `local`), said for that user, with the `--user` that reviews and
 * approves them (README "Pinned tool definitions").
 */
export function trustProblems(trust: TrustPolicy, toolbox: string, server: string, tools: readonly Tool[], user?: string): CatalogProblem[] {
  const held: string[] = [];
  const flagged: string[] = [];
  for (const tool of tools) {
    const verdict = trust.verdict(toolbox, server, tool, tools);
    if (verdict.state === 'approved') continue;
    (verdict.held ? held : flagged).push(`${tool.name} (${verdict.state})`);
  }
  const option = userOption(user);
  const forUser = option === '' ? '' : ` for user ${user}`;
  const review = `review with \`mcp-workbench tools diff ${toolbox}/${server}${option}\`, approve with \`mcp-workbench tools approve ${toolbox}__${server}__NAME${option}\``;
  return [
    ...(held.length > 0 ? [{ kind: 'tool-held' as const, severity: 'error' as const, message: `${held.length} tool(s) held until approved${forUser}: ${review}`, items: held }] : []),
    ...(flagged.length > 0 ? [{ kind: 'tool-unapproved' as const, severity: 'warning' as const, message: `${flagged.length} tool(s) new or changed since approved${forUser}: ${review}`, items: flagged }] : []),
  ];
}

/** The users other than `local` with pins of their own for a server (keys `TOOLBOX/SERVER@ID`, see pinKey). */
function pinnedUsers(pins: PinsRead, toolbox: string, server: string): string[] {
  return pins.kind === 'valid' ? usersWithPins(pins.pins, toolbox, server).filter((id) => id !== 'local') : [];
}

/**
 * For a server whose entry names `${user:…}`: the trust problems of each user that has pins of its own, each checked
 * against that user's own listing (the server started as that user's, as `serve --http` starts it). A user whose
 * listing cannot be made is left out: the server's own check (as user `local`) reports why it cannot connect.
 */
export async function eachUsersTrustProblems(
  config: WorkbenchConfig,
  toolbox: ToolboxConfig,
  server: ServerConfig,
  options: DoctorOptions & { pins: PinsRead; timeoutMs: number; usersDir: string },
): Promise<CatalogProblem[]> {
  if (!namesUser(server)) return [];
  const found = await Promise.all(
    pinnedUsers(options.pins, toolbox.name, server.name).map(async (id) => {
      const manager = new ClientManager({
        config: { source: config.source, toolboxes: [{ ...toolbox, servers: [{ ...server, connectTimeoutMs: options.timeoutMs }] }], warnings: [], secrets: config.secrets },
        env: options.env,
        log: createLogger({ level: 'error', write: () => {} }),
        clientInfo: { name: 'mcp-workbench-doctor', version: VERSION },
        user: userPlace(id, options.usersDir),
        ...(options.oauth && { oauth: options.oauth }),
      });
      try {
        const opened = await manager.openToolbox(toolbox.name);
        if (opened.failed.length > 0) return [];
        const trust = createTrustPolicy(config, options.pins, { userOf: () => ({ id }) });
        return trustProblems(trust, toolbox.name, server.name, manager.serverTools(toolbox.name)[0]?.tools ?? [], id);
      } catch {
        return [];
      } finally {
        await manager.close();
      }
    }),
  );
  return found.flat();
}
