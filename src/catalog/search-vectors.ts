import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { CacheFiles, VECTOR_FILES } from './cache-files.js';

const FORMAT = 1;

interface VectorFile {
  format: number;
  kind: 'vectors';
  model: string;
  /** By hash of the tool text embedded: the vector's float32 bytes in base64. */
  vectors: Record<string, string>;
}

/**
 * Tool vectors on disk (README "Search", "Semantic ranker"), in the `embeddings` folder of the catalog cache directory
 * (0700, files 0600, written atomically): one file per catalog and model, named by a hash of the endpoint, the model
 * and the hashes of the catalog's tool texts, holding the vectors by text hash. Files hold hashes and numbers only,
 * never the texts, the URL or the API key. Nothing here is ever fatal: an unreadable file is ignored (and rewritten
 * after the next embedding), a directory that cannot be written costs one warning.
 */
export class VectorStore {
  private readonly pending = new Set<Promise<void>>();
  /** Trusted only when the user's own, as the catalog cache's files are (README "Catalog cache"). */
  private readonly files: CacheFiles | undefined;

  constructor(
    private readonly dir: string | undefined,
    private readonly log: Logger,
  ) {
    this.files = dir === undefined ? undefined : new CacheFiles(dir, log, VECTOR_FILES);
  }

  /** The vectors filed under `key`, or undefined when none (or unreadable, untrusted, or of mixed lengths). */
  async read(key: string): Promise<Map<string, Float32Array> | undefined> {
    const text = await this.files?.read(this.path(key), 'the semantic ranker');
    if (text === undefined) return undefined;
    try {
      const file = JSON.parse(text) as Partial<VectorFile>;
      if (file.format !== FORMAT || file.kind !== 'vectors' || typeof file.vectors !== 'object' || file.vectors === null) return undefined;
      const out = new Map<string, Float32Array>();
      let dims = -1;
      for (const [hash, data] of Object.entries(file.vectors)) {
        const bytes = Buffer.from(data, 'base64');
        const vector = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength - (bytes.byteLength % 4)));
        if (vector.length === 0 || (dims >= 0 && vector.length !== dims)) return undefined;
        dims = vector.length;
        out.set(hash, vector);
      }
      return out;
    } catch (error) {
      this.log.debug(`ignoring the search vectors in ${this.path(key)}: ${errorMessage(error)}; they are embedded again`);
      return undefined;
    }
  }

  /** Files the vectors under `key`; never throws. */
  write(key: string, model: string, vectors: ReadonlyMap<string, Float32Array>): Promise<void> {
    if (this.files === undefined) return Promise.resolve();
    const file: VectorFile = { format: FORMAT, kind: 'vectors', model, vectors: {} };
    for (const [hash, vector] of vectors) file.vectors[hash] = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
    // Atomic, 0600 in a 0700 folder, never into a folder others may write to; a failure costs a warning.
    const done = this.files.write(this.path(key), JSON.stringify(file), 'the semantic ranker');
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return done;
  }

  /** Waits for the writes in progress. */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private path(key: string): string {
    return join(this.dir!, `${key.slice(0, 32)}.json`);
  }
}
