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
 * bound too small to keep any vector, ranking still uses every vector of the indexes it ranks. And an endpoint that
 * fails, then answers again, is said to be down once and up once (JSON log events), with words-only ranking between.
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
        // This is about the memory bound, not the wait: a loaded machine must not turn the answer lexical.
        waitMs: 30_000,
        ...(memoryBytes !== undefined && { memoryBytes }),
      });
      const indexes = [
        searchIndex([tool('a', 'save_image', 'Store an image on disk.'), tool('a', 'list_notes', 'List every note.')]),
        searchIndex([tool('b', 'send_mail', 'Send an email message.'), tool('b', 'delete_note', 'Delete one note.')]),
      ];
      for (const round of [1, 2]) {
        const parsed = parseQuery('keep this photo');
        const ranked = await ranker.rank(indexes, parsed, rankTools(indexes, parsed), 5);
        assert.equal(ranked?.[0]?.original_name, 'save_image', `round ${round}: ${ranked?.map((e) => e.original_name).join(', ')}`);
      }
      assert.deepEqual(lines, [], 'no outage was reported');
    });
  }

  it('says once that the endpoint is down, ranks by words meanwhile, and says once that it answers again', async () => {
    const flaky = await startEndpoint(data.dir, 'flaky', '--fail-first', '1');
    try {
      const lines: string[] = [];
      const ranker = new SemanticRanker({
        config: { url: flaky.url, model: 'fixture-embed' },
        log: createLogger({ format: 'json', write: (line) => void lines.push(line) }),
        retryAfterMs: 50,
      });
      const indexes = [searchIndex([tool('a', 'save_image', 'Store an image on disk.'), tool('a', 'list_notes', 'List every note.')])];
      const parsed = parseQuery('keep this photo');
      const lexical = rankTools(indexes, parsed);
      // The first request fails: no fused answer (the caller answers by words), and the outage is said once.
      assert.equal(await ranker.rank(indexes, parsed, lexical, 5), undefined);
      const events = (): string[] => lines.map((l) => (JSON.parse(l) as { event?: string }).event ?? '');
      assert.deepEqual(events(), ['embeddings_down']);
      const down = JSON.parse(lines[0]!) as Record<string, unknown>;
      assert.equal(down.http_status, 503);
      assert.equal(down.retry_after_ms, 50);
      // Past retryAfterMs it asks again, ranks by meaning, and says once that the endpoint answers.
      await new Promise((resolve) => setTimeout(resolve, 80));
      let ranked: FullEntry[] = [];
      for (let i = 0; i < 20 && ranked[0]?.original_name !== 'save_image'; i++) {
        ranked = (await ranker.rank(indexes, parsed, lexical, 5)) ?? [];
        if (ranked[0]?.original_name !== 'save_image') await new Promise((resolve) => setTimeout(resolve, 80));
      }
      assert.equal(ranked[0]?.original_name, 'save_image', 'ranks by meaning once the endpoint answers');
      assert.deepEqual(events(), ['embeddings_down', 'embeddings_up']);
      assert.equal((JSON.parse(lines[1]!) as { endpoint?: string }).endpoint, new URL(flaky.url).host);
    } finally {
      await flaky.close();
    }
  });
});
