/**
 * A tiny stderr-only logger. In `serve`, stdout carries MCP messages only, so nothing here may ever write to it.
 * The sink is injected so tests and non-serve commands can capture or redirect output.
 *
 * Every line carries an ISO-8601 time and its level (README "Command line", Logs). Text lines read
 * `2026-01-02T03:04:05.678Z mcp-workbench warn: [scope] message`; JSON lines are one object each:
 * `{"time", "level", "scope"?, "message", …fields}`.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Structured facts about a line (e.g. a call's tool, server, duration and outcome): JSON lines carry them as keys. */
export type LogFields = Record<string, string | number | boolean | undefined>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose lines are prefixed with `[scope]`, sharing this one's sink and level. */
  child(scope: string): Logger;
}

export interface LoggerOptions {
  /** Read at every line, so a logger can be set up before the command line is parsed and adjusted after. */
  level?: LogLevel;
  format?: LogFormat;
  /** Where lines go; defaults to process.stderr. */
  write?: (line: string) => void;
  /** The time stamped on each line; defaults to now. */
  now?: () => Date;
}

export function parseLogLevel(value: string | undefined): LogLevel | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  return (LOG_LEVELS as readonly string[]).includes(v) ? (v as LogLevel) : undefined;
}

export function parseLogFormat(value: string | undefined): LogFormat | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  return (LOG_FORMATS as readonly string[]).includes(v) ? (v as LogFormat) : undefined;
}

/** Whether a logger made with these options writes lines of `level`. */
export function logsAt(options: LoggerOptions, level: LogLevel): boolean {
  return ORDER[level] >= ORDER[options.level ?? 'info'];
}

/** Keys a field may not take in a JSON line: they belong to the line itself. */
const RESERVED = new Set(['time', 'level', 'scope', 'message']);

export function createLogger(options: LoggerOptions = {}, scope?: string): Logger {
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const emit = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (!logsAt(options, level)) return;
    const time = (options.now?.() ?? new Date()).toISOString();
    if (options.format === 'json') {
      const extra: LogFields = {};
      for (const [key, value] of Object.entries(fields ?? {})) if (!RESERVED.has(key) && value !== undefined) extra[key] = value;
      write(`${JSON.stringify({ time, level, ...(scope ? { scope } : {}), message, ...extra })}\n`);
      return;
    }
    const prefix = scope ? `[${scope}] ` : '';
    write(`${time} mcp-workbench ${level}: ${prefix}${message}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (s) => createLogger(options, scope ? `${scope}/${s}` : s),
  };
}

/**
 * A logger that passes every message through `redact` (see shared/redact) before `log` sees it; children too. For
 * the loggers of downstream connections, whose messages can repeat URLs, headers and values from the config.
 */
export function redactingLogger(log: Logger, redact: (text: string) => string): Logger {
  return {
    debug: (m, f) => log.debug(redact(m), f),
    info: (m, f) => log.info(redact(m), f),
    warn: (m, f) => log.warn(redact(m), f),
    error: (m, f) => log.error(redact(m), f),
    child: (scope) => redactingLogger(log.child(scope), redact),
  };
}
