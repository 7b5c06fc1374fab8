// The legacy handshake's version: the status probe is a plain initialize POST, which every era of server answers.
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/client';
import type { Ajv } from 'ajv';
import type { TrustPolicy } from '../catalog/trust.js';
import { pinsPathFor, readPins } from '../state/pins.js';
import { createTrustPolicy } from '../state/trust-policy.js';
import { createAjv } from '../core/validators.js';
import { performance } from 'node:perf_hooks';
import { ClientManager, type FailedServer } from '../clients/client-manager.js';
import { failedServerText } from '../clients/server-failure.js';
import { userPlace, usersDirBeside } from '../clients/user-places.js';
import { loadConfig } from '../config/load.js';
import { remoteEndpoint } from '../config/remote-endpoint.js';
import type { RemoteServerConfig, ServerConfig, ServerProblem, ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import { networkReason } from '../shared/errno.js';
import type { Logger } from '../log.js';
import { createRedactor, redactDeep } from '../shared/redact.js';
import { VERSION } from '../version.js';
import { catalogProblems, logProblems, type PROBLEM_TEXT } from './catalog-problems.js';
import { eachUsersTrustProblems, trustProblems } from './user-pins.js';
import { DEFAULT_DOCTOR_TIMEOUT_MS, type DoctorFailure, type DoctorOptions, type DoctorReport, type ServerReport } from './types.js';

/**
 * `mcp-workbench doctor`: connects every server of the config (or of one toolbox) at once, each on its own
 * connection with its own timeout, and reports per server whether it connected and why not, how long it took, how
 * many tools it has, and problems in its catalog. Every connection and child process is closed before it returns.
 *
 * Severity: a server that does not connect, and a tool name listed twice by one server (only the first is reachable
 * through use_tool), are errors — the exit code is 1. Everything else is a warning that does not fail the run:
 * the workbench itself copes with it, but clients or models downstream may not (see {@link PROBLEM_TEXT}).
 */

/**
 * Loads the config and checks its servers in parallel. Resolves with the report once every connection is closed.
 *
 * A server whose config entry cannot start (an unset variable, a malformed URL) is reported as failed with kind
 * `misconfigured`, its problems and their fixes; it is not started.
 *
 * @throws WorkbenchError the loader's errors (`CONFIG_*`); `TOOLBOX_NOT_FOUND` for an unknown `toolbox`.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const path = options.configPath;
  const config = await loadConfig(path, options.env, { secrets: options.secrets });
  for (const warning of config.warnings) options.log.warn(warning);
  let toolboxes = config.toolboxes;
  if (options.toolbox !== undefined) {
    toolboxes = toolboxes.filter((t) => t.name === options.toolbox);
    if (toolboxes.length === 0) {
      throw new WorkbenchError(
        'TOOLBOX_NOT_FOUND',
        `${path} has no toolbox "${options.toolbox}"; toolboxes: ${config.toolboxes.map((t) => t.name).join(', ') || '(none)'}.`,
      );
    }
  }

  const checks = toolboxes.flatMap((toolbox) => toolbox.servers.map((server) => ({ toolbox, server })));
  const pending = new Set(checks.map(({ toolbox, server }) => `${toolbox.name}/${server.name}`));
  let failed = 0;
  const progress = (): void => options.onProgress?.({ total: checks.length, done: checks.length - pending.size, failed, pending: [...pending] });
  progress();
  const ajv = createAjv();
  const pins = await readPins(pinsPathFor(options.statePath));
  const trust = createTrustPolicy(config, pins);
  // Users' folders beside the state file, as serve has them (README "Files of each user").
  const usersDir = usersDirBeside(options.statePath);
  const reports = await Promise.all(
    checks.map(async ({ toolbox, server }) => {
      const report = await checkServer(config, toolbox, server, { ...options, usersDir }, ajv, trust);
      // The pins of each user of a `${user:…}` server, against that user's own listing (README "Pinned tool definitions").
      if (report.connected) report.problems.push(...(await eachUsersTrustProblems(config, toolbox, server, { ...options, pins, usersDir, timeoutMs: report.timeoutMs })));
      pending.delete(`${toolbox.name}/${server.name}`);
      if (!report.connected) failed++;
      progress();
      return report;
    }),
  );

  const byToolbox = toolboxes.map((toolbox) => ({ name: toolbox.name, servers: reports.filter((r) => r.toolbox === toolbox.name) }));
  const problems = reports.flatMap((r) => r.problems);
  const summary = {
    servers: reports.length,
    connected: reports.filter((r) => r.connected).length,
    failed: reports.filter((r) => !r.connected).length,
    errors: reports.filter((r) => !r.connected).length + problems.filter((p) => p.severity === 'error').length,
    warnings: problems.filter((p) => p.severity === 'warning').length,
  };
  // Every string of the report passes the redaction rule once more: a probe's error text can repeat the URL.
  return redactDeep(
    {
      config: path,
      ok: summary.errors === 0 && options.signal?.aborted !== true,
      timeoutMs: options.timeoutMs ?? null,
      interrupted: options.signal?.aborted === true,
      toolboxes: byToolbox,
      summary,
    },
    createRedactor(config.secrets),
  );
}

/** One server on its own ClientManager (so its timing and timeout are its own); always closed before returning. */
async function checkServer(
  config: WorkbenchConfig,
  toolbox: ToolboxConfig,
  server: ServerConfig,
  options: DoctorOptions & { usersDir: string },
  ajv: Ajv,
  trust: TrustPolicy,
): Promise<ServerReport> {
  const timeoutMs = options.timeoutMs ?? server.connectTimeoutMs ?? DEFAULT_DOCTOR_TIMEOUT_MS;
  const logged: string[] = [];
  const noise: string[] = [];
  const manager = new ClientManager({
    onStdoutNoise: (_toolbox, _server, line) => void noise.push(line),
    config: {
      source: config.source,
      toolboxes: [{ ...toolbox, servers: [{ ...server, connectTimeoutMs: timeoutMs }] }],
      warnings: [],
      secrets: config.secrets,
    },
    env: options.env,
    log: capturingLogger(logged),
    clientInfo: { name: 'mcp-workbench-doctor', version: VERSION },
    // User `local`'s folder where serve has it, beside the state file (README "Files of each user").
    user: userPlace('local', options.usersDir),
    ...(options.oauth && { oauth: options.oauth }),
    ...(options.startSteps && { startSteps: options.startSteps }),
  });
  const abort = (): void => void manager.close();
  options.signal?.addEventListener('abort', abort, { once: true });
  const base = { toolbox: toolbox.name, server: server.name, type: server.type, timeoutMs };
  const started = performance.now();
  try {
    const result = await manager.openToolbox(toolbox.name);
    const connectMs = Math.round(performance.now() - started);
    const failed = result.failed[0];
    const failedWith = failed?.error;
    if (failed !== undefined && options.signal?.aborted) {
      return { ...base, connected: false, connectMs, failure: { kind: 'interrupted', summary: 'interrupted', message: 'the check was stopped (SIGINT/SIGTERM) before the server connected' }, problems: [] };
    }
    if (failed !== undefined) {
      const failure = classifyFailure(failed);
      if (server.type !== 'stdio' && (failure.kind === 'error' || failure.kind === 'http-status')) await probeRemote(server, timeoutMs, failure);
      return { ...base, connected: false, connectMs, failure, problems: logProblems(logged, noise, failedWith) };
    }
    const listed = manager.serverTools(toolbox.name)[0];
    const era = manager.serverEras(toolbox.name)[0];
    const protocol = era ? { protocol: { era: era.era, ...(era.protocolVersion ? { version: era.protocolVersion } : {}) } } : {};
    const tools = listed?.tools ?? [];
    // Names listed twice are kept once by the manager; put them back so the catalog check reports them as errors.
    const asListed = [...tools, ...(listed?.duplicates ?? []).flatMap((name) => tools.filter((t) => t.name === name))];
    const problems = [...catalogProblems(toolbox.name, server.name, asListed, ajv), ...trustProblems(trust, toolbox.name, server.name, tools), ...logProblems(logged, noise)];
    return { ...base, connected: true, connectMs, tools: tools.length, ...protocol, problems };
  } catch (error) {
    const message = errorMessage(error);
    return { ...base, connected: false, connectMs: Math.round(performance.now() - started), failure: { kind: 'error', summary: 'error', message }, problems: [] };
  } finally {
    options.signal?.removeEventListener('abort', abort);
    await manager.close();
  }
}

/** Turns the ClientManager's typed connect failure into the report's, reading its fields (never its message). */
export function classifyFailure(failed: FailedServer): DoctorFailure {
  // What to do (raise connectTimeoutMs, clear npx's cache, a config entry's fixes…): the doctor's reader needs it most.
  const message = failedServerText(failed, '\n');
  const f = failed.failure;
  const stderr = f?.stderrTail && f.stderrTail.length > 0 ? { stderr: [...f.stderrTail] } : {};
  switch (f?.kind) {
    case 'command-not-found':
      return { kind: 'command-not-found', summary: 'command not found', message };
    case 'command-not-executable':
      return { kind: 'command-not-found', summary: 'command is not executable', message };
    case 'cwd-not-found':
      return { kind: 'command-not-found', summary: 'working directory not found', message };
    case 'misconfigured':
      return { kind: 'misconfigured', summary: misconfiguredSummary(f.problems ?? []), message, ...(f.problems && { problems: f.problems }) };
    case 'handshake-timeout':
      return { kind: 'timeout', summary: `timed out after ${f.timeoutMs} ms`, message, ...stderr };
    case 'exited':
      return { kind: 'exited', summary: `exited with code ${f.exitCode ?? 'unknown'}`, message, ...(f.exitCode !== undefined && { exitCode: f.exitCode }), ...stderr };
    case 'killed':
      return { kind: 'exited', summary: `killed by ${f.signal}`, message, ...(f.signal !== undefined && { signal: f.signal }), ...stderr };
    case 'closed':
      return { kind: 'exited', summary: 'closed its output', message, ...stderr };
    case 'http-status':
      return { kind: 'http-status', summary: `HTTP ${f.httpStatus}`, message, ...(f.httpStatus !== undefined && { httpStatus: f.httpStatus }) };
    case 'needs-sign-in':
      return { kind: 'needs-sign-in', summary: `needs sign-in: run ${f.signInCommand ?? 'mcp-workbench auth login <toolbox>/<server>'}`, message };
    default:
      return { kind: 'error', summary: 'error', message };
  }
}

/** `unset variable FOO`, `malformed URL`, … for the one-line form. */
function misconfiguredSummary(problems: readonly ServerProblem[]): string {
  const variables = [...new Set(problems.flatMap((p) => p.variables ?? []))];
  const secrets = [...new Set(problems.flatMap((p) => p.secrets ?? []))];
  const parts = [
    ...(variables.length > 0 ? [`unset variable${variables.length === 1 ? '' : 's'} ${variables.join(', ')}`] : []),
    ...(secrets.length > 0 ? [`unknown secret${secrets.length === 1 ? '' : 's'} ${secrets.join(', ')}`] : []),
    ...(problems.some((p) => p.kind === 'invalid-url') ? ['malformed URL'] : []),
    ...(problems.some((p) => p.kind === 'empty-value') ? ['empty after expansion'] : []),
    ...(problems.some((p) => p.kind === 'credentials-twice') ? ['two Authorization headers'] : []),
    ...(problems.some((p) => p.kind === 'oauth-per-user-url') ? ['one OAuth sign-in for an endpoint per user'] : []),
  ];
  return `config problem: ${parts.join(', ') || 'see below'}`;
}

/**
 * The connect error of a remote server rarely carries the HTTP status (the SDK keeps it off the message), so one
 * plain request tells: an initialize POST (http) or an event-stream GET (sse) with the configured headers. A
 * session the probe happens to open is ended at once.
 */
async function probeRemote(server: RemoteServerConfig, timeoutMs: number, failure: DoctorFailure): Promise<void> {
  const signal = AbortSignal.timeout(Math.min(timeoutMs, 10_000));
  const { url, headers } = remoteEndpoint(server);
  try {
    const response =
      server.type === 'http'
        ? await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 'mcp-workbench-doctor',
              method: 'initialize',
              params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'mcp-workbench-doctor', version: VERSION } },
            }),
            redirect: 'manual',
            signal,
          })
        : await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, redirect: 'manual', signal });
    await response.body?.cancel().catch(() => {});
    const session = response.headers.get('mcp-session-id');
    if (session && server.type === 'http') {
      await fetch(url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': session }, signal: AbortSignal.timeout(1_500) }).catch(() => {});
    }
    if (response.status < 200 || response.status >= 300) {
      failure.kind = 'http-status';
      failure.httpStatus = response.status;
      failure.summary = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    }
  } catch (error) {
    // fetch() fails with "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a TLS error, …) is its cause.
    const cause = (error as { cause?: { message?: unknown } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? 'no answer'
        : (networkReason(error) ?? (typeof cause?.message === 'string' ? cause.message : errorMessage(error)));
    if (failure.kind === 'error') {
      failure.kind = 'unreachable';
      failure.summary = `unreachable (${reason})`;
    }
  }
}

/** A Logger that keeps warnings and errors (connection-level findings) and drops the rest. */
function capturingLogger(lines: string[]): Logger {
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (message) => void lines.push(message),
    error: (message) => void lines.push(message),
    child: () => logger,
  };
  return logger;
}
