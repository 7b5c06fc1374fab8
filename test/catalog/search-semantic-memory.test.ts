import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FullEntry } from '../../src/catalog/catalog-index.js';
import { rankTools, searchIndex } from '../../src/catalog/search.js';
import { parseQuery } from '../../src/catalog/search-query.js';
import { SemanticRanker } from '../../src/catalog/search-semantic.js';
import { createLogger } from '../../src/log.js';
import { type Endpoint, startEndpoint } from '../helpers/embeddings-endpoint.js';
import { tempDir } from '../helpers/workbench-process.js';

/**
 * The semantic ranker's memory of tool vectors is bounded (a long-running server sees catalog after catalog): with a
 * bound too small to keep any vector, ranking still uses every vector of the indexes it ranks.
 */

function tool(server: string, name: string, description: string): FullEntry {
  return {
    name: `k__${server}__${name}`,
    toolbox_name: 'k',
    source_server: server,
    original_name: name,
    description: `[k/${server}] ${description}`,
    inputSchema: { type: 'object', properties: {} },
  };
}

describe('semantic ranker memory', () => {
  let data: { dir: string; cleanup: () => Promise<void> };
  let endpoint: Endpoint;
  before(async () => {
    data = await tempDir('wb-semantic-memory-');
    endpoint = await startEndpoint(data.dir, 'endpoint');
  });
  after(async () => {
    await endpoint.close();
    await data.cleanup();
  });

  for (const memoryBytes of [undefined, 1]) {
    it(`ranks by meaning with ${memoryBytes === undefined ? 'the default bound' : 'a bound that keeps no vector'}`, async () => {
      const lines: string[] = [];
      const ranker = new SemanticRanker({
        config: { url: endpoint.url, model: 'fixture-embed' },
        log: createLogger({ write: (line) => void lines.push(line) }),
        ...(memoryBytes !== undefined && { memoryBytes }),
      });
      const indexes = [
        searchIndex([tool('a', 'save_image', 'Store an image on disk.'), tool('a', 'list_notes', 'List every note.')]),
        searchIndex([tool('b', 'send_mail', 'Send an email message.'), tool('b', 'delete_note', 'Delete one note.')]),
      ];
      for (const round of [1, 2]) {
        const parsed = parseQuery('keep this photo');
        const ranked = await ranker.rank(indexes, parsed, rankTools(indexes, parsed), 5);
        assert.equal(ranked[0]?.original_name, 'save_image', `round ${round}: ${ranked.map((e) => e.original_name).join(', ')}`);
      }
      assert.deepEqual(lines, [], 'no outage was reported');
    });
  }
});
