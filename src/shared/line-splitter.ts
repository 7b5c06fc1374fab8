import { ID_SEARCH_BYTES, findMessageId, type MessageId } from './message-id.js';

const NEWLINE = 0x0a;

/** An oversized line, dropped unread: how many bytes it had and the id found at either end of it, if any. */
export interface OversizedLine {
  bytes: number;
  id: MessageId | undefined;
}

export interface LineHandlers {
  /** A complete line (without its newline), at most `maxLineBytes` long; may be empty. */
  line(buffer: Buffer): void;
  /** The end of a line that went over the limit: never buffered, only both ends kept to find its id. */
  oversized(line: OversizedLine): void;
}

/**
 * Newline-delimited JSON-RPC framing, shared by both ends of stdio (the workbench's own server side and its
 * downstream child processes): splits chunks into lines without re-copying the buffer for every chunk, and stops
 * buffering a line as soon as it passes `maxLineBytes`, keeping only its first and last bytes so the answer can
 * still name the message's id (see message-id.ts).
 */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private skipping: { head: string; tail: string; bytes: number } | undefined;

  constructor(
    private readonly maxLineBytes: number,
    private readonly handlers: LineHandlers,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (end > start) this.take(chunk.subarray(start, end));
      if (newline === -1) break;
      this.endOfLine();
      start = newline + 1;
    }
  }

  /** Drops whatever was buffered (the stream closed). */
  reset(): void {
    this.chunks = [];
    this.buffered = 0;
    this.skipping = undefined;
  }

  private take(piece: Buffer): void {
    if (this.skipping) {
      this.skipping.bytes += piece.length;
      this.skipping.tail = (this.skipping.tail + piece.subarray(-ID_SEARCH_BYTES).toString('latin1')).slice(-ID_SEARCH_BYTES);
    } else if (this.buffered + piece.length > this.maxLineBytes) {
      // Too big to ever deliver: stop buffering now, keep only both ends to find the id.
      const seen = Buffer.concat([...this.chunks, piece]);
      this.skipping = {
        head: seen.subarray(0, ID_SEARCH_BYTES).toString('latin1'),
        tail: seen.subarray(-ID_SEARCH_BYTES).toString('latin1'),
        bytes: seen.length,
      };
      this.chunks = [];
      this.buffered = 0;
    } else {
      this.chunks.push(piece);
      this.buffered += piece.length;
    }
  }

  private endOfLine(): void {
    const skipped = this.skipping;
    if (skipped) {
      this.skipping = undefined;
      this.handlers.oversized({ bytes: skipped.bytes, id: findMessageId(skipped.head, skipped.tail) });
      return;
    }
    const line = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    this.chunks = [];
    this.buffered = 0;
    this.handlers.line(line);
  }
}
