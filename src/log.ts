/**
 * A tiny stderr-only logger. In `serve`, stdout carries MCP messages only, so nothing here may ever write to it.
 * The sink is injected so tests and non-serve commands can capture or redirect output.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** A logger whose lines are prefixed with `[scope]`, sharing this one's sink and level. */
  child(scope: string): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go; defaults to process.stderr. */
  write?: (line: string) => void;
}

export function parseLogLevel(value: string | undefined): LogLevel | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  return v === 'debug' || v === 'info' || v === 'warn' || v === 'error' ? v : undefined;
}

export function createLogger(options: LoggerOptions = {}, scope?: string): Logger {
  const min = ORDER[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const emit = (level: LogLevel, message: string): void => {
    if (ORDER[level] < min) return;
    const prefix = scope ? `[${scope}] ` : '';
    write(`mcp-workbench ${level}: ${prefix}${message}\n`);
  };
  return {
    debug: (m) => emit('debug', m),
    info: (m) => emit('info', m),
    warn: (m) => emit('warn', m),
    error: (m) => emit('error', m),
    child: (s) => createLogger(options, scope ? `${scope}/${s}` : s),
  };
}

/**
 * A logger that passes every message through `redact` (see shared/redact) before `log` sees it; children too. For
 * the loggers of downstream connections, whose messages can repeat URLs, headers and values from the config.
 */
export function redactingLogger(log: Logger, redact: (text: string) => string): Logger {
  return {
    debug: (m) => log.debug(redact(m)),
    info: (m) => log.info(redact(m)),
    warn: (m) => log.warn(redact(m)),
    error: (m) => log.error(redact(m)),
    child: (scope) => redactingLogger(log.child(scope), redact),
  };
}
