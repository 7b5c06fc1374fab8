import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { formatToolName } from '../../src/catalog/names.js';

/** One server of the frozen corpus (bench/search/corpus/*.json), as capture-corpus.ts wrote it. */
export interface CorpusFile {
  server: string;
  package: string;
  version: string;
  description: string;
  tools: { name: string; title?: string; description?: string; inputSchema: FullEntry['inputSchema']; annotations?: FullEntry['annotations'] }[];
}

const dir = join(dirname(fileURLToPath(import.meta.url)), 'corpus');

export function loadCorpus(): CorpusFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CorpusFile);
}

/**
 * The corpus as the workbench would show it: one toolbox per server (named after it), each tool a full entry with
 * its canonical name and the `[toolbox/server]` description prefix.
 */
export function corpusEntries(files: readonly CorpusFile[]): Map<string, FullEntry[]> {
  const out = new Map<string, FullEntry[]>();
  for (const file of files) {
    out.set(
      file.server,
      file.tools.map((t) => ({
        name: formatToolName(file.server, file.server, t.name),
        toolbox_name: file.server,
        source_server: file.server,
        original_name: t.name,
        ...(t.title !== undefined && { title: t.title }),
        description: `[${file.server}/${file.server}] ${t.description ?? ''}`,
        inputSchema: t.inputSchema,
        ...(t.annotations !== undefined && { annotations: t.annotations }),
      })),
    );
  }
  return out;
}
