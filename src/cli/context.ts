import { homedir } from 'node:os';
import type { SecretSource } from '../config/secret-source.js';
import { WorkbenchError, errorMessage, type WorkbenchErrorCode } from '../errors.js';
import { describeEvent, type WorkbenchObserver } from '../core/call-events.js';
import { createLogger, logsAt, parseLogFormat, parseLogLevel, type LogFormat, type Logger, type LogFields, type LoggerOptions, type LogLevel } from '../log.js';
import { type SecretStore, openSecretStore } from '../secrets/secret-store.js';

/**
 * What every command needs from the process, read once here (the only place besides main.ts that touches
 * process.env): the environment, a stderr logger, the working directory, and the exit-code conventions.
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * The codes that say the command was typed wrong (README "Command line"): an argument of the wrong shape, or a
 * toolbox or server the user named that is not there. Every other failure is exit 1.
 */
const USAGE_CODES: ReadonlySet<WorkbenchErrorCode> = new Set<WorkbenchErrorCode>(['USAGE', 'TOOLBOX_NOT_FOUND']);

/** The one rule every command ends a failure with: {@link EXIT_USAGE} for a usage error's code, else {@link EXIT_FAILURE}. */
export function exitCodeFor(error: unknown): number {
  return error instanceof WorkbenchError && USAGE_CODES.has(error.code) ? EXIT_USAGE : EXIT_FAILURE;
}

/** The process a command runs in: its environment, its start directory and the stderr logger. */
export interface HostContext {
  env: Record<string, string | undefined>;
  cwd: string;
  log: Logger;
}

export interface CliContext extends HostContext {
  /** True when stderr is a terminal (progress lines are shown only then). */
  stderrIsTTY: boolean;
  /** Prints a result to stdout (commands other than serve). */
  print(text: string): void;
  /** Logs the error on stderr, with its {@link errorFields}, and sets its exit code ({@link exitCodeFor}). */
  fail(error: unknown): void;
  /** `--log-level` / `--log-format`: applies to every logger made from `log`, children included. */
  setLogging(settings: { level?: LogLevel; format?: LogFormat }): void;
  /** At `debug`, an observer that logs each call and toolbox open (tool, server, duration, outcome; never values). */
  callLogger(): WorkbenchObserver | undefined;
  /** Opens the secret store (README "Secrets"). @throws WorkbenchError SECRET_STORE_FAILED */
  secretStore(): Promise<SecretStore>;
  /**
   * A fresh snapshot of the secret store for `${secret:NAME}`; never throws: a store that cannot be opened becomes
   * the `problem` of every server that uses a secret, never a failure of the workbench.
   */
  secretSource(): Promise<SecretSource>;
}

export function createCliContext(): CliContext {
  const env = process.env as Record<string, string | undefined>;
  const logOptions: LoggerOptions = {
    level: parseLogLevel(env.WORKBENCH_LOG_LEVEL) ?? 'info',
    format: parseLogFormat(env.WORKBENCH_LOG_FORMAT) ?? 'text',
  };
  const log = createLogger(logOptions);
  const secretStore = (): Promise<SecretStore> =>
    openSecretStore({ env, homedir: env.HOME || homedir(), cwd: process.cwd(), platform: process.platform, log });
  return {
    secretStore,
    secretSource: async () => {
      try {
        return await (await secretStore()).source();
      } catch (error) {
        return { where: 'the secret store', get: () => undefined, problem: errorMessage(error) };
      }
    },
    env,
    cwd: process.cwd(),
    log,
    stderrIsTTY: process.stderr.isTTY === true,
    print: (text) => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    fail: (error) => {
      log.error(errorMessage(error), errorFields(error));
      process.exitCode = exitCodeFor(error);
    },
    setLogging: ({ level, format }) => {
      if (level !== undefined) logOptions.level = level;
      if (format !== undefined) logOptions.format = format;
    },
    callLogger: () => {
      if (!logsAt(logOptions, 'debug')) return undefined;
      const calls = log.child('calls');
      return (event) => calls.debug(describeEvent(event), { event: event.kind, ...event, kind: undefined });
    },
  };
}

/** A WorkbenchError's code and where it happened, as log fields (JSON log lines show them as keys); else none. */
export function errorFields(error: unknown): LogFields | undefined {
  if (!(error instanceof WorkbenchError)) return undefined;
  return { code: error.code, ...error.site, ...(error.variables.length > 0 && { variables: error.variables.join(', ') }) };
}

/** The structured facts of a failure a `--json` command prints beside its code, message and details. */
export function errorJson(error: WorkbenchError): { variables?: readonly string[]; excerpt?: string } {
  return { ...(error.variables.length > 0 && { variables: error.variables }), ...(error.local !== undefined && { excerpt: error.local }) };
}

/** `a, b,,c ` → ['a', 'b', 'c']; for options that may also be repeated. */
export function splitList(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter((s) => s.length > 0)];
}

/** Connection chatter (info) is noise for a listing; warnings and errors still show. */
export function quiet(log: Logger): Logger {
  return {
    ...log,
    info: () => {},
    debug: () => {},
    child: (scope: string) => quiet(log.child(scope)),
  };
}

/** The same process with its connection chatter muted: what a one-shot listing or call runs with. */
export function quietHost(host: HostContext): HostContext {
  return { env: host.env, cwd: host.cwd, log: quiet(host.log) };
}
