import { InvalidArgumentError } from 'commander';
import { WorkbenchError } from '../errors.js';
import { isLoopbackHost, normalizeOrigin, parseListenAddress } from '../server/http-security.js';
import { startHttpServer, type HttpServerOptions, type WorkbenchHttpServer } from '../server/http-server.js';
import { createHttpMetrics, type HttpMetrics } from '../server/http-metrics.js';
import type { Logger } from '../log.js';
import type { Workbench } from '../core/workbench.js';
import { VERSION } from '../version.js';
import { chainObservers, createRuntime, untilShutdown, type Runtime } from './runtime.js';
import type { RuntimeSettings } from './settings.js';

/** `serve --http`: where to listen, who may call, and the limits of the HTTP front end. */
export interface HttpSettings {
  /** `--http [host:]port`. */
  listen: string;
  /** `--token`; when absent, `WORKBENCH_TOKEN` from `env`. */
  token?: string;
  /** `--allow-origin` values (already split on commas). */
  allowOrigins?: string[];
  maxSessions?: number;
  /** Idle time after which a session is closed, in seconds. */
  sessionIdleSeconds?: number;
  /** `--metrics`: Prometheus metrics at /metrics (behind the token). */
  metrics?: boolean;
}

/** Below this length a token is easy to guess; it still works, with a warning. */
const SHORT_TOKEN = 16;

/**
 * Runs the workbench as a Streamable HTTP server on `/mcp` until SIGINT/SIGTERM/SIGHUP, then closes every session, the
 * listener and every downstream process tree, and resolves with exit code 0. Usage problems (a bad address, a
 * non-loopback host without a token, a bad origin) reject with WorkbenchError USAGE before anything is loaded or
 * bound (or, found on binding, once the runtime is closed). The actual endpoint is logged as `listening on http://HOST:PORT/mcp` (port 0 picks a free one).
 */
export async function serveHttp(settings: RuntimeSettings, http: HttpSettings): Promise<number> {
  const { log } = settings.host;
  const plan = planHttpServe(http, settings.host.env);
  warnAboutToken(plan, log);
  // Metrics are fed by the call observer, so they exist before the workbench; their gauges read the server once it runs.
  let started: Started | undefined;
  const metrics = http.metrics ? metricsOf(() => started) : undefined;
  const runtime = await createRuntime(metrics ? { ...settings, observer: chainObservers(settings.observer, metrics.observer) } : settings);
  let server: WorkbenchHttpServer;
  try {
    server = await startHttpServer(httpServerOptions(http, settings, plan, runtime, metrics));
    started = { http: server, workbench: runtime.workbench };
  } catch (error) {
    await runtime.close();
    throw error;
  }
  log.info(`listening on ${server.url}`);
  log.info(
    `serving ${runtime.config.toolboxes.length} toolbox(es) from ${runtime.config.source} over Streamable HTTP (version ${VERSION}); ${plan.token === undefined ? 'no token required (loopback only)' : 'bearer token required'}; servers start on first use`,
  );
  return untilShutdown(log, async () => {
    await server.close();
    await runtime.close();
  });
}

/** Where to listen, which tokens to require, which origins to allow: checked before anything is loaded. */
interface HttpPlan {
  host: string;
  port: number;
  token: string | undefined;
  allowedOrigins: string[];
}

/** The HTTP server and the workbench behind it, once both run. */
interface Started {
  http: WorkbenchHttpServer;
  workbench: Workbench;
}

/** No token, or one easy to guess: both still serve, with a warning. */
function warnAboutToken({ token, host }: HttpPlan, log: Logger): void {
  if (token === undefined) {
    log.warn(`no token set: any local process can use this workbench over HTTP. Set WORKBENCH_TOKEN (or --token) to require one.`, { event: 'no_token', host });
  } else if (token.split(',').some((t) => t.trim().length < SHORT_TOKEN)) {
    log.warn(`a token is shorter than ${SHORT_TOKEN} characters; use a long random one (e.g. \`openssl rand -hex 32\`)`, { event: 'short_token', min_length: SHORT_TOKEN });
  }
}

/** `--metrics`: gauges read zero until the server runs. */
function metricsOf(started: () => Started | undefined): HttpMetrics {
  return createHttpMetrics({
    sessions: () => started()?.http.clientCount() ?? 0,
    servers: () => started()?.workbench.connectionCount() ?? 0,
    restarts: () => started()?.workbench.restartCount() ?? 0,
    configured: (toolbox, server) => {
      const names = started()?.workbench.catalogNames() ?? [];
      if (!names.includes(toolbox)) return false;
      return server === undefined || (started()?.workbench.toolboxConfigs().find((t) => t.name === toolbox)?.servers.some((s) => s.name === server) ?? false);
    },
  });
}

/** What the HTTP server is started with: the plan, the limits from the flags, and the workbench it serves. */
function httpServerOptions(
  http: HttpSettings,
  { host, session, maxMessageBytes }: Pick<RuntimeSettings, 'host' | 'session' | 'maxMessageBytes'>,
  plan: HttpPlan,
  runtime: Runtime,
  metrics: HttpMetrics | undefined,
): HttpServerOptions {
  return {
    workbench: runtime.workbench,
    version: VERSION,
    host: plan.host,
    port: plan.port,
    token: plan.token,
    allowedOrigins: plan.allowedOrigins,
    maxSessions: http.maxSessions,
    sessionIdleMs: http.sessionIdleSeconds === undefined ? undefined : http.sessionIdleSeconds * 1000,
    // One limit for client messages on both transports: WORKBENCH_MAX_MESSAGE_BYTES, else the HTTP server's default.
    maxBodyBytes: maxMessageBytes,
    serverOptions: { management: session.managementTools ? { statePath: runtime.statePath, update: runtime.updateState } : undefined },
    ...(metrics ? { metrics } : {}),
    activityIntervalMs: activityIntervalMs(host),
    log: host.log,
  };
}

/** The longest summary interval: a day (a timer cannot wait much longer than 24 days). */
const MAX_SUMMARY_SECONDS = 86_400;

/**
 * WORKBENCH_LOG_SUMMARY_SECONDS: a whole number of seconds from 1 to a day, else the built-in 10 minutes (with a
 * warning if it was set).
 */
function activityIntervalMs({ env, log }: Pick<RuntimeSettings['host'], 'env' | 'log'>): number | undefined {
  const raw = env.WORKBENCH_LOG_SUMMARY_SECONDS;
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0 && value <= MAX_SUMMARY_SECONDS) return value * 1000;
  log.warn(`ignoring WORKBENCH_LOG_SUMMARY_SECONDS="${raw}": expected a whole number of seconds from 1 to ${MAX_SUMMARY_SECONDS}; the summary is logged every 10 minutes at most`);
  return undefined;
}

/** Checks the address, token and origins; WorkbenchError USAGE for anything that must not start. */
function planHttpServe(http: HttpSettings, env: Record<string, string | undefined>): HttpPlan {
  const { host, port } = parseListenAddress(http.listen);
  if (http.token !== undefined && http.token.trim() === '') throw new WorkbenchError('USAGE', '--token must not be empty');
  const fromEnv = env.WORKBENCH_TOKEN;
  const token = http.token ?? (fromEnv !== undefined && fromEnv.trim() !== '' ? fromEnv : undefined);
  if (token === undefined && !isLoopbackHost(host)) {
    throw new WorkbenchError(
      'USAGE',
      `refusing to serve on ${host} without a token: anyone who can reach it could run every configured server. Set WORKBENCH_TOKEN (or --token), or omit the host to bind to 127.0.0.1.`,
    );
  }
  const allowedOrigins = (http.allowOrigins ?? []).map(normalizeOrigin);
  return { host, port, token, allowedOrigins };
}

/** commander argParser for a whole number ≥ 1 (a usage error, exit 2, otherwise). */
export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return n;
}
