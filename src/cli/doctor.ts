import { performance } from 'node:perf_hooks';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { InvalidArgumentError, type Command } from 'commander';
import { LATEST_PROTOCOL_VERSION, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { formatToolName } from '../catalog/names.js';
import { ClientManager, type FailedServer } from '../clients/client-manager.js';
import { loadConfig } from '../config/load.js';
import { resolveConfigPath } from '../config/config-path.js';
import type { RemoteServerConfig, ServerConfig, ToolboxConfig, WorkbenchConfig } from '../config/types.js';
import { WorkbenchError, errorMessage, isWorkbenchError } from '../errors.js';
import type { Logger } from '../log.js';
import { createRedactor, redactDeep } from '../shared/redact.js';
import { VERSION } from '../version.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CliContext } from './context.js';

// ajv-formats is CommonJS: under NodeNext the plugin function is its namespace's `default.default`.
const addFormats = addFormatsModule.default;

/**
 * `mcp-workbench doctor`: connects every server of the config (or of one toolbox) at once, each on its own
 * connection with its own timeout, and reports per server whether it connected and why not, how long it took, how
 * many tools it has, and problems in its catalog. Every connection and child process is closed before it returns.
 *
 * Severity: a server that does not connect, and a tool name listed twice by one server (only the first is reachable
 * through use_tool), are errors — the exit code is 1. Everything else is a warning that does not fail the run:
 * the workbench itself copes with it, but clients or models downstream may not (see {@link PROBLEM_TEXT}).
 */
export const DEFAULT_DOCTOR_TIMEOUT_MS = 15_000;

/** Longest canonical tool name some clients accept (several register tool names matching ^[a-zA-Z0-9_-]{1,64}$). */
export const MAX_CANONICAL_NAME_LENGTH = 64;

const NAME_CHARACTERS = /^[A-Za-z0-9_.-]+$/;

export type FailureKind = 'command-not-found' | 'exited' | 'timeout' | 'http-status' | 'unreachable' | 'interrupted' | 'error';

export interface DoctorFailure {
  kind: FailureKind;
  /** Short form for one line: "exited with code 3", "HTTP 401 Unauthorized", … */
  summary: string;
  /** The full explanation, with what to do. */
  message: string;
  exitCode?: number;
  signal?: string;
  /** Last lines the process wrote to stderr. */
  stderr?: string[];
  httpStatus?: number;
}

export type ProblemKind =
  | 'duplicate-name'
  | 'name-characters'
  | 'canonical-name-too-long'
  | 'schema-root-not-object'
  | 'schema-root-combinator'
  | 'schema-external-ref'
  | 'schema-not-compilable'
  | 'stdout-noise'
  | 'server-warning';

export interface CatalogProblem {
  kind: ProblemKind;
  severity: 'error' | 'warning';
  message: string;
  /** The tools concerned (downstream names), or the lines logged. */
  items: string[];
}

export interface ServerReport {
  toolbox: string;
  server: string;
  type: ServerConfig['type'];
  connected: boolean;
  /** Time from start to a listed catalog (or to the failure), in milliseconds. */
  connectMs: number;
  timeoutMs: number;
  tools?: number;
  failure?: DoctorFailure;
  problems: CatalogProblem[];
}

export interface DoctorReport {
  config: string;
  ok: boolean;
  /** The `--timeout` given, else null (each server's connectTimeoutMs, else the default). */
  timeoutMs: number | null;
  interrupted: boolean;
  toolboxes: { name: string; servers: ServerReport[] }[];
  summary: { servers: number; connected: number; failed: number; errors: number; warnings: number };
}

export interface DoctorProgress {
  total: number;
  done: number;
  failed: number;
  /** `toolbox/server` of the checks still running. */
  pending: string[];
}

export interface DoctorOptions {
  config?: string;
  toolbox?: string;
  timeoutMs?: number;
  env: Record<string, string | undefined>;
  cwd: string;
  log: Logger;
  onProgress?: (progress: DoctorProgress) => void;
  /** Aborting closes every connection at once; the report then has `interrupted: true`. */
  signal?: AbortSignal;
}

/**
 * Loads the config and checks its servers in parallel. Resolves with the report once every connection is closed.
 *
 * @throws WorkbenchError the loader's errors (`CONFIG_*`, `ENV_MISSING`); `TOOLBOX_NOT_FOUND` for an unknown
 *   `toolbox`.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const { path } = resolveConfigPath({ flag: options.config, env: options.env, cwd: options.cwd });
  const config = await loadConfig(path, options.env);
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
  const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, addUsedSchema: false });
  addFormats(ajv);
  const reports = await Promise.all(
    checks.map(async ({ toolbox, server }) => {
      const report = await checkServer(config, toolbox, server, options, ajv);
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
async function checkServer(config: WorkbenchConfig, toolbox: ToolboxConfig, server: ServerConfig, options: DoctorOptions, ajv: Ajv): Promise<ServerReport> {
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
    const tools = listed?.tools ?? [];
    // Names listed twice are kept once by the manager; put them back so the catalog check reports them as errors.
    const asListed = [...tools, ...(listed?.duplicates ?? []).flatMap((name) => tools.filter((t) => t.name === name))];
    return { ...base, connected: true, connectMs, tools: tools.length, problems: [...catalogProblems(toolbox.name, server.name, asListed, ajv), ...logProblems(logged, noise)] };
  } catch (error) {
    const message = errorMessage(error);
    return { ...base, connected: false, connectMs: Math.round(performance.now() - started), failure: { kind: 'error', summary: 'error', message }, problems: [] };
  } finally {
    options.signal?.removeEventListener('abort', abort);
    await manager.close();
  }
}

/** What each problem means and why it matters, as shown to the user. */
export const PROBLEM_TEXT: Record<ProblemKind, string> = {
  'duplicate-name': 'tool names listed more than once by this server: only the first of each is reachable through use_tool',
  'name-characters':
    'tool names with characters outside [A-Za-z0-9_.-]: clients and model APIs that restrict tool names may refuse them, and models copy them less reliably',
  'canonical-name-too-long': `canonical names ({toolbox}__{server}__{tool}) longer than ${MAX_CANONICAL_NAME_LENGTH} characters: some clients reject names that long; a shorter toolbox or server name fixes it`,
  'schema-root-not-object': 'input schemas whose root "type" is not "object": the MCP spec requires an object schema, and clients that check it reject the tool',
  'schema-root-combinator':
    'input schemas with oneOf/anyOf/allOf at the root: the Anthropic API rejects them ("input_schema does not support oneOf, allOf, or anyOf at the top level")',
  'schema-external-ref': 'input schemas with a $ref to another document: clients cannot resolve it, and the workbench forwards arguments unchecked',
  'schema-not-compilable': 'input schemas that do not compile as JSON Schema: the workbench forwards arguments unchecked, and strict clients reject them',
  'stdout-noise': 'the server wrote lines to stdout that are not MCP messages (servers must log to stderr); some clients drop the connection when that happens',
  'server-warning': 'warnings while talking to the server',
};

/**
 * The catalog checks, on the tools as the server listed them (before the config's filters: a filtered-out tool is
 * still the server's problem, and filtering is how a user works around it).
 */
export function catalogProblems(toolbox: string, server: string, tools: readonly Tool[], ajv: Ajv): CatalogProblem[] {
  const found = new Map<ProblemKind, string[]>();
  const add = (kind: ProblemKind, item: string): void => {
    const list = found.get(kind);
    if (list) list.push(item);
    else found.set(kind, [item]);
  };
  const seen = new Set<string>();
  for (const tool of tools) {
    const name = tool.name;
    if (seen.has(name)) add('duplicate-name', name);
    seen.add(name);
    if (!NAME_CHARACTERS.test(name)) add('name-characters', name);
    if (formatToolName(toolbox, server, name).length > MAX_CANONICAL_NAME_LENGTH) add('canonical-name-too-long', formatToolName(toolbox, server, name));
    const schema = tool.inputSchema as Record<string, unknown>;
    if (schema.type !== 'object') add('schema-root-not-object', name);
    const combinators = ['oneOf', 'anyOf', 'allOf'].filter((k) => k in schema);
    if (combinators.length > 0) add('schema-root-combinator', `${name} (${combinators.join(', ')})`);
    if (hasExternalRef(schema)) {
      add('schema-external-ref', name);
      continue;
    }
    try {
      const { $schema: _ignored, ...rest } = schema;
      ajv.compile(rest);
    } catch (error) {
      add('schema-not-compilable', `${name}: ${errorMessage(error)}`);
    }
  }
  return [...found].map(([kind, items]) => ({
    kind,
    severity: kind === 'duplicate-name' ? 'error' : 'warning',
    message: PROBLEM_TEXT[kind],
    items: kind === 'duplicate-name' ? [...new Set(items)] : items,
  }));
}

function hasExternalRef(schema: unknown, depth = 0): boolean {
  if (depth > 64 || typeof schema !== 'object' || schema === null) return false;
  if (Array.isArray(schema)) return schema.some((item) => hasExternalRef(item, depth + 1));
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) return true;
    if (hasExternalRef(value, depth + 1)) return true;
  }
  return false;
}

/** Warnings the connection logged (besides the connect failure itself, which is the report's `failure`). */
function logProblems(logged: readonly string[], noise: readonly string[], failure?: string): CatalogProblem[] {
  const other = logged.filter((line) => line !== failure);
  const problems: CatalogProblem[] = [];
  if (noise.length > 0) problems.push({ kind: 'stdout-noise', severity: 'warning', message: PROBLEM_TEXT['stdout-noise'], items: [...noise] });
  if (other.length > 0) problems.push({ kind: 'server-warning', severity: 'warning', message: PROBLEM_TEXT['server-warning'], items: other });
  return problems;
}

/** Turns the ClientManager's typed connect failure into the report's, reading its fields (never its message). */
export function classifyFailure(failed: FailedServer): DoctorFailure {
  const message = failed.error;
  const f = failed.failure;
  const stderr = f?.stderrTail && f.stderrTail.length > 0 ? { stderr: [...f.stderrTail] } : {};
  switch (f?.kind) {
    case 'command-not-found':
      return { kind: 'command-not-found', summary: 'command not found', message };
    case 'command-not-executable':
      return { kind: 'command-not-found', summary: 'command is not executable', message };
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
    default:
      return { kind: 'error', summary: 'error', message };
  }
}

/**
 * The connect error of a remote server rarely carries the HTTP status (the SDK keeps it off the message), so one
 * plain request tells: an initialize POST (http) or an event-stream GET (sse) with the configured headers. A
 * session the probe happens to open is ended at once.
 */
async function probeRemote(server: RemoteServerConfig, timeoutMs: number, failure: DoctorFailure): Promise<void> {
  const signal = AbortSignal.timeout(Math.min(timeoutMs, 10_000));
  try {
    const response =
      server.type === 'http'
        ? await fetch(server.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...server.headers },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 'mcp-workbench-doctor',
              method: 'initialize',
              params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'mcp-workbench-doctor', version: VERSION } },
            }),
            redirect: 'manual',
            signal,
          })
        : await fetch(server.url, { headers: { accept: 'text/event-stream', ...server.headers }, redirect: 'manual', signal });
    await response.body?.cancel().catch(() => {});
    const session = response.headers.get('mcp-session-id');
    if (session && server.type === 'http') {
      await fetch(server.url, { method: 'DELETE', headers: { ...server.headers, 'mcp-session-id': session }, signal: AbortSignal.timeout(1_500) }).catch(() => {});
    }
    if (response.status < 200 || response.status >= 300) {
      failure.kind = 'http-status';
      failure.httpStatus = response.status;
      failure.summary = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    }
  } catch (error) {
    // fetch() fails with "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a TLS error, …) is its cause.
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? 'no answer'
        : typeof cause?.code === 'string'
          ? cause.code
          : typeof cause?.message === 'string'
            ? cause.message
            : errorMessage(error);
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

// ---------------------------------------------------------------------------------------------------------------
// Presentation.

const SHOWN_ITEMS = 5;

export function formatDoctorReport(report: DoctorReport): string {
  const lines = [`Config: ${report.config}`];
  lines.push(
    report.timeoutMs !== null
      ? `Connect timeout: ${report.timeoutMs} ms for every server (--timeout)`
      : `Connect timeout: each server's connectTimeoutMs, else ${DEFAULT_DOCTOR_TIMEOUT_MS} ms`,
  );
  for (const toolbox of report.toolboxes) {
    lines.push('', `Toolbox "${toolbox.name}"${toolbox.servers.length === 0 ? ': no servers' : ''}`);
    for (const server of toolbox.servers) {
      const name = `${toolbox.name}/${server.server}`;
      if (server.connected) {
        lines.push(`  [ok]   ${name}: connected in ${server.connectMs} ms, ${server.tools} tool${server.tools === 1 ? '' : 's'}`);
      } else {
        // A timeout's time is the timeout plus stopping the process; the summary already names the timeout.
        const after = server.failure?.kind === 'timeout' ? '' : ` (after ${server.connectMs} ms)`;
        lines.push(`  [FAIL] ${name}: not connected — ${server.failure?.summary ?? 'error'}${after}`);
        for (const line of (server.failure?.message ?? '').split('\n')) lines.push(`           ${line.trimStart().startsWith('|') ? `  ${line.trim()}` : line}`);
      }
      for (const problem of server.problems) {
        const label = problem.severity === 'error' ? '[ERROR]' : '[warn]';
        const shown = problem.items.slice(0, SHOWN_ITEMS).join(', ');
        const more = problem.items.length > SHOWN_ITEMS ? `, and ${problem.items.length - SHOWN_ITEMS} more` : '';
        lines.push(`         ${label} ${problem.items.length} × ${problem.message}`);
        lines.push(`           ${shown}${more}`);
      }
    }
  }
  const { servers, connected, failed, errors, warnings } = report.summary;
  lines.push('');
  if (report.interrupted) lines.push('Interrupted: the remaining checks were stopped and every connection closed.');
  lines.push(
    `${servers === 0 ? 'No servers to check.' : `${connected} of ${servers} server${servers === 1 ? '' : 's'} connected${failed > 0 ? `, ${failed} failed` : ''}.`} ` +
      `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}. ${report.ok ? 'Healthy.' : 'Not healthy.'}`,
  );
  return lines.join('\n');
}

function progressLine(progress: DoctorProgress, startedAt: number, columns: number): string {
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(0);
  const waiting = progress.pending.length > 0 ? ` — waiting for ${progress.pending.slice(0, 3).join(', ')}${progress.pending.length > 3 ? ` +${progress.pending.length - 3}` : ''}` : '';
  const line = `doctor: ${progress.done}/${progress.total} checked${progress.failed > 0 ? `, ${progress.failed} failed` : ''} (${seconds}s)${waiting}`;
  return line.length >= columns ? `${line.slice(0, Math.max(10, columns - 2))}…` : line;
}

function parseTimeout(value: string): number {
  const ms = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(ms) || ms <= 0) throw new InvalidArgumentError('expected a positive whole number of milliseconds');
  return ms;
}

/** `mcp-workbench doctor`: exit 0 when every checked server is healthy, 1 otherwise, 2 on usage errors. */
export function registerDoctorCommand(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description('connect every server (or one toolbox\'s) and report what works, what does not and why')
    .option('-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json)')
    .option('-t, --toolbox <name>', 'check only this toolbox')
    .option('--timeout <ms>', `connect timeout for every server (default: its connectTimeoutMs, else ${DEFAULT_DOCTOR_TIMEOUT_MS})`, parseTimeout)
    .option('--json', 'print the report as JSON')
    .action(async (opts: { config?: string; toolbox?: string; timeout?: number; json?: boolean }) => {
      const controller = new AbortController();
      const onSignal = (): void => controller.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      const live = ctx.stderrIsTTY;
      const startedAt = performance.now();
      let last: DoctorProgress | undefined;
      const draw = (): void => {
        if (last) process.stderr.write(`\r\x1b[2K${progressLine(last, startedAt, process.stderr.columns || 80)}`);
      };
      const ticker = live ? setInterval(draw, 1000) : undefined;
      try {
        const report = await runDoctor({
          config: opts.config,
          toolbox: opts.toolbox,
          timeoutMs: opts.timeout,
          env: ctx.env,
          cwd: ctx.cwd,
          log: ctx.log,
          signal: controller.signal,
          ...(live && {
            onProgress: (progress: DoctorProgress) => {
              last = progress;
              draw();
            },
          }),
        });
        if (live) process.stderr.write('\r\x1b[2K');
        ctx.print(opts.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report));
        process.exitCode = report.interrupted ? 130 : report.ok ? EXIT_OK : EXIT_FAILURE;
      } catch (error) {
        if (live) process.stderr.write('\r\x1b[2K');
        if (opts.json && isWorkbenchError(error)) {
          ctx.print(JSON.stringify({ ok: false, code: error.code, message: error.message, details: error.details }, null, 2));
        } else {
          ctx.log.error(errorMessage(error));
        }
        process.exitCode = isWorkbenchError(error, 'TOOLBOX_NOT_FOUND') ? EXIT_USAGE : EXIT_FAILURE;
      } finally {
        clearInterval(ticker);
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
