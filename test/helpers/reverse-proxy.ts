import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { stopChild } from './http-servers.js';
import { tempDir, waitFor } from './workbench-process.js';

/**
 * A real nginx in front of several workbench replicas, the way they are deployed behind a load balancer.
 *
 * - `round-robin`: every request goes to the next replica, whatever session it belongs to. Right for the stateless
 *   2026-07-28 era; a legacy (Mcp-Session-Id) session lives on one replica and gets 404 from the others.
 * - `session-affinity`: a legacy session's requests reach the replica that holds it. Hashing on the session id alone
 *   cannot do that: `initialize` carries no id (an empty hash key makes nginx fall back to round-robin), and the id
 *   the replica then makes up hashes to any replica. So requests are hashed on Mcp-Session-Id (stable routing per
 *   session) and a replica's 404 "Session not found" — a refused request that did nothing — is passed on to the next
 *   replica (`proxy_next_upstream http_404 non_idempotent`), which needs the request body buffered (on by default).
 *   Requests without a session id (initialize, modern stateless requests) are still spread round-robin.
 */
export type ProxyMode = 'round-robin' | 'session-affinity';

/** One access-log line: what nginx sent where. */
export interface ProxiedRequest {
  method: string;
  uri: string;
  /** The status the client got. */
  status: number;
  /** Every replica tried, in order (`host:port`); more than one when a 404 was passed on. */
  upstreams: string[];
  /** What each replica answered, in the same order. */
  upstreamStatuses: string[];
  sessionId: string | undefined;
}

export interface ReverseProxy {
  /** http://127.0.0.1:PORT */
  origin: string;
  /** origin + /mcp */
  url: string;
  mode: ProxyMode;
  pid: number;
  /** The generated config, for failure messages. */
  config: string;
  /** Every request nginx has finished so far. nginx logs a request right after its response, so wait for counts. */
  requests(): Promise<ProxiedRequest[]>;
  /** Waits (up to 10 s) until at least `count` requests are logged; returns them all. */
  waitForRequests(count: number): Promise<ProxiedRequest[]>;
  /**
   * The requests logged once the log has stopped growing (no new line for 250 ms, up to 10 s): a request answered
   * just before may be logged a moment later, so count from here.
   */
  settledRequests(): Promise<ProxiedRequest[]>;
  errorLog(): Promise<string>;
  /** Stops nginx (SIGTERM, SIGKILL after 5 s), waits until it is gone and removes its directory. */
  stop(): Promise<void>;
}

const INSTALL_HINT =
  'The replica tests run a real nginx as the reverse proxy. Install it: `apt-get install nginx-light` ' +
  '(Debian/Ubuntu, as root; `nginx` works too), or put an nginx binary on PATH.';

/** The nginx binary: PATH first, then the sbin directories a non-root PATH often lacks. Throws with what to install. */
export function findNginx(env: NodeJS.ProcessEnv = process.env): string {
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'nginx');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new Error(`nginx was not found on PATH nor in /usr/sbin, /usr/local/sbin, /usr/local/nginx/sbin. ${INSTALL_HINT}`);
}

/**
 * Starts nginx on a free 127.0.0.1 port in front of `backends` (`host:port` each) and resolves once it accepts
 * connections. Everything nginx writes (config, pid, temp files, logs) is in a fresh temp dir, so it runs as root and
 * as any other user; one process (`master_process off`), which `stop()` ends. Rejects with nginx's own error output
 * if it cannot start, and with an install hint if it is not installed.
 */
export async function startReverseProxy(options: { backends: string[]; mode: ProxyMode }): Promise<ReverseProxy> {
  if (options.backends.length === 0) throw new Error('startReverseProxy needs at least one backend (host:port)');
  const nginx = findNginx();
  const { dir, cleanup } = await tempDir('wb-nginx-');
  try {
    // A port picked here can be taken before nginx binds it; try again with another then.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const config = nginxConfig({ dir, port, ...options, withoutModules: missingTempPathModules(nginx) });
      await writeFile(join(dir, 'nginx.conf'), config);
      const child = spawn(nginx, ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const started = await waitUntilListening(child, port);
      if (started) return handle(child, { dir, port, config, mode: options.mode, cleanup });
      const errorLog = await readFile(join(dir, 'error.log'), 'utf8').catch(() => '');
      if (/Address already in use/.test(stderr + errorLog) && attempt < 3) continue;
      await stopChild(child, 2_000);
      throw new Error(`nginx did not start (exit ${child.exitCode ?? 'none, not listening after 10 s'}):\n${stderr}${errorLog}\nconfig:\n${config}`);
    }
  } catch (error) {
    await cleanup();
    throw error;
  }
}

function handle(child: ChildProcess, run: { dir: string; port: number; config: string; mode: ProxyMode; cleanup: () => Promise<void> }): ReverseProxy {
  const origin = `http://127.0.0.1:${run.port}`;
  const requests = async (): Promise<ProxiedRequest[]> => parseAccessLog(await readFile(join(run.dir, 'access.log'), 'utf8').catch(() => ''));
  return {
    origin,
    url: `${origin}/mcp`,
    mode: run.mode,
    pid: child.pid!,
    config: run.config,
    requests,
    waitForRequests: async (count) => {
      let seen: ProxiedRequest[] = [];
      await waitFor(async () => (seen = await requests()).length >= count, 10_000);
      return seen;
    },
    settledRequests: async () => {
      let seen = await requests();
      await waitFor(async () => {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const now = await requests();
        const settled = now.length === seen.length;
        seen = now;
        return settled;
      }, 10_000);
      return seen;
    },
    errorLog: () => readFile(join(run.dir, 'error.log'), 'utf8').catch(() => ''),
    stop: async () => {
      await stopChild(child, 5_000);
      await run.cleanup();
    },
  };
}

/** The nginx.conf for one run; every path is inside `dir`. */
export function nginxConfig(options: { dir: string; port: number; backends: string[]; mode: ProxyMode; withoutModules?: string[] }): string {
  const { dir, port, backends, mode } = options;
  const tempPaths = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .filter((module) => !(options.withoutModules ?? []).includes(module))
    .map((module) => `  ${module}_temp_path ${dir}/${module}_temp;`);
  const affinity = mode === 'session-affinity';
  return [
    'daemon off;',
    // One process: nothing to orphan, and no worker that switches to another user.
    'master_process off;',
    // As root nginx would chown its temp dirs to "nobody"; keep them ours.
    ...(process.getuid?.() === 0 ? ['user root;'] : []),
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log notice;`,
    'events { worker_connections 512; }',
    'http {',
    `  log_format upstreams '$request_method $request_uri $status "$upstream_addr" "$upstream_status" "$http_mcp_session_id"';`,
    `  access_log ${dir}/access.log upstreams;`,
    ...tempPaths,
    '  upstream workbench {',
    ...(affinity ? ['    hash $http_mcp_session_id consistent;'] : []),
    ...backends.map((backend) => `    server ${backend};`),
    '  }',
    '  server {',
    `    listen 127.0.0.1:${port};`,
    '    location / {',
    '      proxy_pass http://workbench;',
    '      proxy_http_version 1.1;',
    '      proxy_set_header Connection "";',
    // The workbench refuses a non-loopback Host on a loopback bind (DNS-rebinding guard); the upstream name is not one.
    '      proxy_set_header Host 127.0.0.1;',
    // Passed on by default; named so that a later proxy_set_header in this block cannot drop them.
    '      proxy_set_header Authorization $http_authorization;',
    '      proxy_set_header Mcp-Session-Id $http_mcp_session_id;',
    '      proxy_set_header Mcp-Protocol-Version $http_mcp_protocol_version;',
    // Event streams go through as they come.
    '      proxy_buffering off;',
    '      proxy_cache off;',
    '      proxy_read_timeout 1h;',
    '      proxy_send_timeout 1h;',
    ...(affinity ? ['      proxy_next_upstream error timeout http_404 non_idempotent;', '      proxy_next_upstream_tries 0;'] : []),
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}

/** Which of the fastcgi/uwsgi/scgi modules this nginx was built without (their *_temp_path directives do not exist). */
function missingTempPathModules(nginx: string): string[] {
  const { stderr } = spawnSync(nginx, ['-V'], { encoding: 'utf8' });
  return ['fastcgi', 'uwsgi', 'scgi'].filter((module) => stderr.includes(`--without-http_${module}_module`));
}

function parseAccessLog(text: string): ProxiedRequest[] {
  const entries: ProxiedRequest[] = [];
  for (const line of text.split('\n')) {
    const match = /^(\S+) (\S+) (\d+) "([^"]*)" "([^"]*)" "([^"]*)"$/.exec(line);
    if (!match) continue;
    const list = (value: string): string[] => (value === '-' || value === '' ? [] : value.split(/\s*[,:]\s+/));
    entries.push({
      method: match[1]!,
      uri: match[2]!,
      status: Number(match[3]),
      upstreams: list(match[4]!),
      upstreamStatuses: list(match[5]!),
      sessionId: match[6] === '' || match[6] === '-' ? undefined : match[6],
    });
  }
  return entries;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** True once `port` accepts a connection; false if nginx exits first or 10 s pass. */
async function waitUntilListening(child: ChildProcess, port: number): Promise<boolean> {
  const accepts = (): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  let listening = false;
  await waitFor(async () => child.exitCode !== null || child.signalCode !== null || (listening = await accepts()), 10_000);
  return listening;
}
