import type { RemoteServerConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import type { OAuthContext } from '../oauth/sign-in.js';
import { ClientManager } from './client-manager.js';
import { hasStaticAuthorization } from './oauth-connect.js';
import { userPlace } from './user-places.js';

/** The remote server `toolbox/server` of the config. @throws WorkbenchError USAGE naming what exists */
export function findRemoteServer(config: WorkbenchConfig, target: string): { toolbox: string; server: RemoteServerConfig } {
  const [toolboxName, serverName, ...rest] = target.split('/');
  const toolbox = config.toolboxes.find((t) => t.name === toolboxName);
  const server = toolbox?.servers.find((s) => s.name === serverName);
  const remotes = config.toolboxes.flatMap((t) => t.servers.filter((s) => s.type !== 'stdio').map((s) => `${t.name}/${s.name}`));
  const choices = remotes.length > 0 ? `remote servers: ${remotes.join(', ')}` : 'the config has no http/sse server';
  if (!toolbox || !server || rest.length > 0) {
    throw new WorkbenchError('USAGE', `no server "${target}" in ${config.source}: name it as <toolbox>/<server> (${choices}).`);
  }
  if (server.type === 'stdio') throw new WorkbenchError('USAGE', `${target} is a stdio server; only http/sse servers sign in with OAuth (${choices}).`);
  return { toolbox: toolbox.name, server };
}

/** How long `auth login` waits for the sign-in in the browser at least. */
const LOGIN_WAIT_MS = 5 * 60_000;

/**
 * `auth login`: signs in to one remote server as `serve` would — the same connect, the same browser flow — but
 * always afresh (its stored tokens are dropped first, its client registration kept), then lists its tools to prove
 * the sign-in works. It waits for the browser at least 5 minutes, and where no browser can be opened it prints the URL
 * and waits for the callback all the same. A server without `auth` is signed in to with the defaults ("oauth"). It is
 * started as user `local`'s, its `${user:dir}` under `usersDir` (`users` beside the state file, as `serve` has it).
 * @throws WorkbenchError USAGE for a server that carries a static Authorization header; the connect's error else
 */
export async function loginServer(options: {
  config: WorkbenchConfig;
  target: string;
  env: Record<string, string | undefined>;
  log: Logger;
  oauth: OAuthContext;
  version: string;
  usersDir: string;
}): Promise<{ toolbox: string; server: RemoteServerConfig; tools: number }> {
  const { toolbox, server } = findRemoteServer(options.config, options.target);
  if (hasStaticAuthorization(server)) {
    throw new WorkbenchError('USAGE', `${options.target} sends a static Authorization header from the config (a header in "headers", or user info in its "url"), which wins over OAuth; remove it to sign in with OAuth.`);
  }
  const key = { toolbox, server: server.name, url: server.url };
  await options.oauth.store.update(key, ({ tokens: _tokens, savedAt: _savedAt, ...kept }) => kept);
  // A person signs in now (a password manager, a second factor, a browser on another machine): not the 60 s of a connect.
  const connectTimeoutMs = Math.max(server.connectTimeoutMs ?? 0, LOGIN_WAIT_MS);
  const signedIn: RemoteServerConfig = { ...server, auth: server.auth ?? { grantType: 'authorization_code' }, connectTimeoutMs };
  const only = options.config.toolboxes.find((t) => t.name === toolbox)!;
  const manager = new ClientManager({
    config: { ...options.config, toolboxes: [{ ...only, servers: [signedIn] }] },
    env: options.env,
    log: options.log,
    clientInfo: { name: 'mcp-workbench', version: options.version },
    oauth: options.oauth,
    user: userPlace('local', options.usersDir),
  });
  try {
    const failed = await manager.connectServer(toolbox, server.name);
    if (failed) throw failed;
    const tools = manager.serverTools(toolbox).find((s) => s.server === server.name)?.tools.length ?? 0;
    return { toolbox, server, tools };
  } finally {
    await manager.close();
  }
}
