import assert from 'node:assert/strict';

/** One stderr log line of the workbench, read back (README "Command line", Logs). */
export interface LogLine {
  time: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  scope?: string;
  message: string;
  /** A JSON line's other keys (a call's toolbox, server, tool, duration_ms, outcome…). */
  fields: Record<string, unknown>;
}

const TEXT_LINE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) mcp-workbench (debug|info|warn|error): (?:\[([^\]]+)\] )?(.*)$/;

/**
 * The log lines of a stderr capture, text or JSON (told apart per line). Lines that are neither — a server's own
 * stderr passed through, a continuation of a multi-line message — are skipped.
 */
export function logLines(stderr: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const raw of stderr.split('\n')) {
    if (raw.startsWith('{')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        continue;
      }
      const { time, level, scope, message, ...fields } = parsed as Record<string, unknown>;
      if (typeof time === 'string' && typeof level === 'string' && typeof message === 'string') {
        lines.push({ time, level: level as LogLine['level'], ...(typeof scope === 'string' ? { scope } : {}), message, fields });
      }
      continue;
    }
    const match = TEXT_LINE.exec(raw);
    if (match) lines.push({ time: match[1]!, level: match[2] as LogLine['level'], ...(match[3] ? { scope: match[3] } : {}), message: match[4]!, fields: {} });
  }
  return lines;
}

/** Asserts the time of a log line is a valid ISO-8601 UTC instant. */
export function assertIsoTime(time: string): void {
  assert.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(new Date(time).toISOString(), time);
}

/**
 * The error line a failed command logged (run with `--log-format json` or `WORKBENCH_LOG_FORMAT=json`), whose
 * `fields.code` is the WorkbenchError's code; fails the test, showing stderr, when there is none.
 */
export function errorLine(stderr: string): LogLine {
  const line = logLines(stderr).filter((l) => l.level === 'error').at(-1);
  assert.ok(line !== undefined, `an error log line on stderr:\n${stderr}`);
  return line;
}
