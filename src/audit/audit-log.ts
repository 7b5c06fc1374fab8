import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { WorkbenchEvent } from '../core/call-events.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';

/**
 * The audit log (`serve --audit-log PATH`, README "Audit log"): one JSON line per `use_tool` call and per
 * `open_toolbox`, with who, what, when, how long and how it ended — never argument or result values. Lines are
 * appended in the order calls end, written in batches off the call path; when the file would grow past `maxBytes` it
 * is renamed to `PATH.1` (`.1` to `.2` …, the oldest beyond `keep` deleted) and a new one is started, so a line is
 * never split across files.
 */
export interface AuditLogOptions {
  /** Size at which the file is rotated (default {@link DEFAULT_AUDIT_MAX_BYTES}). */
  maxBytes?: number;
  /** Rotated files kept besides the current one (default {@link DEFAULT_AUDIT_KEEP}). */
  keep?: number;
  log: Logger;
  now?: () => number;
}

export const DEFAULT_AUDIT_MAX_BYTES = 10 * 1024 * 1024;
export const DEFAULT_AUDIT_KEEP = 5;

export interface AuditLog {
  /** Queues one event's line; never throws and never waits (a failed write is logged on stderr). */
  record(event: WorkbenchEvent): void;
  /** Writes what is queued and closes the file. */
  close(): Promise<void>;
}

/** One line of the audit log, as written. */
export interface AuditRecord {
  /** When the call or open started (ISO-8601, UTC). */
  time: string;
  event: 'call' | 'open';
  /** The HTTP session id, `http` for a client of MCP 2026-07-28 over HTTP, or `stdio`. */
  session: string | null;
  /** Who: `token:` and the first 8 hex digits of the SHA-256 of the bearer token that admitted the client, `local` for a tokenless loopback workbench, or `stdio`. */
  principal: string | null;
  toolbox: string;
  server: string | null;
  tool: string | null;
  duration_ms: number;
  outcome: WorkbenchEvent['outcome'];
  /** The workbench's error code, when it (not the tool) made the result an error. */
  code: string | null;
  result_bytes: number | null;
}

/**
 * Opens (creating it and its directory if needed, mode 0600) the audit log at `path` for appending.
 *
 * @throws WorkbenchError `AUDIT_UNWRITABLE` naming the path and the OS reason when it cannot be created or opened, so `serve`
 *   refuses to start rather than run without the record it was asked to keep.
 */
export async function openAuditLog(path: string, options: AuditLogOptions): Promise<AuditLog> {
  let file: OpenFile;
  try {
    file = await openFile(path);
  } catch (error) {
    throw new WorkbenchError('AUDIT_UNWRITABLE', `cannot open the audit log ${path}: ${errorMessage(error)}. Choose a writable path for --audit-log.`, { cause: error });
  }
  return new AuditFile(path, file, options);
}

interface OpenFile {
  handle: FileHandle;
  size: number;
}

async function openFile(path: string): Promise<OpenFile> {
  await mkdir(dirname(path), { recursive: true });
  const handle = await open(path, 'a', 0o600);
  return { handle, size: (await handle.stat()).size };
}

/** An open audit log: lines queued by `record` and written in order by one writer, rotated by size. */
class AuditFile implements AuditLog {
  private pending: string[] = [];
  private writing: Promise<void> | undefined;
  private closed = false;
  private failures = 0;
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly now: () => number;

  constructor(
    private readonly path: string,
    private file: OpenFile,
    private readonly options: AuditLogOptions,
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_AUDIT_MAX_BYTES;
    this.keep = options.keep ?? DEFAULT_AUDIT_KEEP;
    this.now = options.now ?? Date.now;
  }

  record(event: WorkbenchEvent): void {
    if (this.closed) return;
    const line: AuditRecord = {
      time: new Date(this.now() - event.duration_ms).toISOString(),
      event: event.kind,
      session: event.session ?? null,
      principal: event.principal ?? null,
      toolbox: event.toolbox,
      server: event.server ?? null,
      tool: event.tool ?? null,
      duration_ms: event.duration_ms,
      outcome: event.outcome,
      code: event.code ?? null,
      result_bytes: event.result_bytes ?? null,
    };
    this.pending.push(`${JSON.stringify(line)}\n`);
    this.flush();
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.writing) await this.writing;
    if (this.pending.length > 0) {
      this.flush();
      while (this.writing) await this.writing;
    }
    await this.file.handle.close().catch(() => {});
  }

  private flush(): void {
    if (this.writing) return;
    this.writing = this.drain()
      .catch((error: unknown) => {
        // Say it once, then every 100th time: a full disk must not flood stderr.
        if (this.failures++ % 100 === 0) this.options.log.error(`audit log ${this.path}: a write failed (${errorMessage(error)}); lines may be missing`);
      })
      .finally(() => {
        this.writing = undefined;
        if (this.pending.length > 0 && !this.closed) this.flush();
      });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const lines = this.pending;
      this.pending = [];
      // Rotate before a batch that would cross the limit; each line is whole in one file.
      let batch = '';
      for (const line of lines) {
        const bytes = Buffer.byteLength(batch) + Buffer.byteLength(line);
        if (this.file.size + bytes > this.maxBytes && this.file.size + Buffer.byteLength(batch) > 0) {
          if (batch !== '') await this.write(batch);
          batch = '';
          await this.rotate();
        }
        batch += line;
      }
      if (batch !== '') await this.write(batch);
    }
  }

  private async write(text: string): Promise<void> {
    await this.file.handle.write(text);
    this.file.size += Buffer.byteLength(text);
  }

  private async rotate(): Promise<void> {
    const { path, keep } = this;
    await this.file.handle.close();
    await rm(`${path}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--) await rename(`${path}.${i}`, `${path}.${i + 1}`).catch(() => {});
    if (keep >= 1) await rename(path, `${path}.1`);
    else await rm(path, { force: true });
    this.file = await openFile(path);
  }
}
