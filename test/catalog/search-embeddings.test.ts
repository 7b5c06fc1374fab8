import assert from 'node:assert/strict';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { API_KEY, startEndpoint } from '../helpers/embeddings-endpoint.js';
import { logLines } from '../helpers/log-lines.js';
import { ERAS, startEra, type EraName, type Over } from '../helpers/era-workbench.js';
import { fixtureServer, startWorkbench, tempDir, waitFor, type RunningWorkbench } from '../helpers/workbench-process.js';

/**
 * The optional semantic ranker (README "Search", "Semantic ranker"), end to end: the built workbench over stdio against
 * an OpenAI-compatible embeddings endpoint the test starts on loopback (test/fixtures/embeddings-server.mjs), which
 * serves deterministic vectors in which "photo" is near "image" although the words differ.
 */

function config(embeddings: Record<string, string>): unknown {
  return { toolboxes: { dev: { description: 'Fixture tools', mcpServers: { fixture: fixtureServer() } } }, search: { embeddings } };
}

async function search(wb: RunningWorkbench, query: string, toolbox?: string): Promise<string[]> {
  const result = await wb.call('open_toolbox', { query, ...(toolbox && { toolbox_name: toolbox }) });
  assert.ok(!result.isError, JSON.stringify(result));
  return (result.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name);
}

describe('search: the optional semantic ranker', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  before(async () => ({ dir, cleanup } = await tempDir('wb-embed-')));
  after(async () => cleanup());

  it('ranks a tool whose words differ but whose meaning matches first, sends the key as Bearer and never logs it', async () => {
    const endpoint = await startEndpoint(dir, 'fused');
    const wb = await startWorkbench(config({ url: endpoint.url, model: 'fixture-embed', apiKey: '${EMBED_API_KEY}' }), {
      env: { EMBED_API_KEY: API_KEY },
      args: ['--log-level', 'debug'],
    });
    try {
      // Tool vectors are embedded in the background from the first search on: wait until they take part.
      assert.ok(await waitFor(async () => (await search(wb, 'photo', 'dev'))[0] === 'dev__fixture__image', 15_000), 'image never came first for "photo"');
      assert.equal((await search(wb, 'photo'))[0], 'dev__fixture__image', 'global search fuses too');
      // A lexical match still leads.
      assert.equal((await search(wb, 'echo', 'dev'))[0], 'dev__fixture__echo');
      const requests = endpoint.requests();
      assert.ok(requests.length >= 2);
      for (const r of requests) {
        assert.equal(r.auth, `Bearer ${API_KEY}`);
        assert.equal(r.path, '/v1/embeddings', 'a URL without /v1 gets /v1/embeddings');
        assert.equal(r.model, 'fixture-embed');
      }
    } finally {
      await wb.close();
      await endpoint.close();
    }
    assert.ok(!wb.stderr().includes(API_KEY), 'the API key appears in the log');
  });

  it('keeps tool vectors on disk: a second process embeds only its queries', async () => {
    const cache = join(dir, 'shared-cache');
    const first = await startEndpoint(dir, 'first');
    const settings = { url: `${first.url}/v1/`, model: 'fixture-embed' };
    let wb = await startWorkbench(config(settings), { env: { MCP_WORKBENCH_CACHE_DIR: cache } });
    try {
      assert.ok(await waitFor(async () => (await search(wb, 'photo', 'dev'))[0] === 'dev__fixture__image', 15_000));
    } finally {
      await wb.close();
    }
    assert.ok(first.requests().some((r) => r.inputs.length > 1), 'the first process embedded the tool texts');
    assert.ok(first.requests().every((r) => r.path === '/v1/embeddings'), 'a URL ending in /v1/ gets /embeddings');
    const files = readdirSync(join(cache, 'embeddings'));
    assert.ok(files.length > 0);
    assert.equal(statSync(join(cache, 'embeddings')).mode & 0o777, 0o700);
    for (const f of files) {
      assert.equal(statSync(join(cache, 'embeddings', f)).mode & 0o777, 0o600);
      assert.ok(!readFileSync(join(cache, 'embeddings', f), 'utf8').includes('Return an image'), 'vector files hold no tool text');
    }

    // A second process with the same cache: only the queries go to the endpoint.
    const before = first.requests().length;
    wb = await startWorkbench(config(settings), { env: { MCP_WORKBENCH_CACHE_DIR: cache } });
    try {
      assert.equal((await search(wb, 'photo', 'dev'))[0], 'dev__fixture__image');
      assert.ok((await search(wb, 'picture')).includes('dev__fixture__image'));
    } finally {
      await wb.close();
      await first.close();
    }
    assert.deepEqual(
      first.requests().slice(before).map((r) => r.inputs),
      [['photo'], ['picture']],
      'only the queries were sent',
    );
  });

  it('trusts stored vectors only when they are the user\'s alone: a file others may write is ignored, with one warning', async () => {
    const cache = join(dir, 'loose-cache');
    const endpoint = await startEndpoint(dir, 'loose');
    const settings = { url: endpoint.url, model: 'fixture-embed' };
    let wb = await startWorkbench(config(settings), { env: { MCP_WORKBENCH_CACHE_DIR: cache } });
    try {
      assert.ok(await waitFor(async () => (await search(wb, 'photo', 'dev'))[0] === 'dev__fixture__image', 15_000));
    } finally {
      await wb.close();
    }
    const files = readdirSync(join(cache, 'embeddings'));
    assert.ok(files.length > 0);
    // Made writable by every user, as a file another user could have replaced would be.
    for (const f of files) chmodSync(join(cache, 'embeddings', f), 0o666);
    const before = endpoint.requests().length;
    wb = await startWorkbench(config(settings), { env: { MCP_WORKBENCH_CACHE_DIR: cache } });
    try {
      assert.ok(await waitFor(async () => (await search(wb, 'photo', 'dev'))[0] === 'dev__fixture__image', 15_000));
    } finally {
      await wb.close();
      await endpoint.close();
    }
    assert.ok(endpoint.requests().slice(before).some((r) => r.inputs.length > 1), 'the tool texts were embedded again');
    const warnings = wb.stderr().split('\n').filter((l) => l.includes('ignoring the search vectors file'));
    assert.equal(warnings.length, files.length, wb.stderr());
    assert.match(warnings[0]!, /is writable by every user \(mode 666/);
  });

  it('answers lexically at once when the endpoint is down, and says so once, naming the URL and what failed', async () => {
    const gone = await startEndpoint(dir, 'gone');
    const url = gone.url;
    await gone.close();
    const wb = await startWorkbench(config({ url, model: 'fixture-embed', apiKey: API_KEY }), { env: { WORKBENCH_LOG_FORMAT: 'json' } });
    try {
      for (const query of ['echo', 'photo', 'add numbers', 'echo text']) await search(wb, query, 'dev');
      assert.equal((await search(wb, 'echo', 'dev'))[0], 'dev__fixture__echo');
      // Meanwhile search answers as a workbench without the ranker does, top-up by meaning and its hint included.
      const photo = await wb.call('open_toolbox', { query: 'photo', toolbox_name: 'dev' });
      assert.match((photo.structuredContent as { hint?: string }).hint ?? '', /nearest to it in meaning/);
    } finally {
      await wb.close();
    }
    const lines = logLines(wb.stderr()).filter((l) => l.fields.event === 'embeddings_down');
    assert.equal(lines.length, 1, wb.stderr());
    assert.equal(lines[0]!.level, 'warn');
    const { endpoint, model, reason, error_code } = lines[0]!.fields;
    assert.deepEqual({ endpoint, model, reason, error_code }, { endpoint: new URL(url).host, model: 'fixture-embed', reason: 'unreachable', error_code: 'ECONNREFUSED' });
    assert.ok(!wb.stderr().includes(API_KEY));
  });

  it('an endpoint that answers badly (HTTP 401, not JSON) is one log line each, and search still answers', async () => {
    const cases = [
      [['--status', '401'], { reason: 'http-status', http_status: 401 }],
      [['--garbage'], { reason: 'not-json', http_status: undefined }],
    ] as const;
    for (const [flags, expected] of cases) {
      const endpoint = await startEndpoint(dir, `bad-${expected.reason}`, ...flags);
      const wb = await startWorkbench(config({ url: endpoint.url, model: 'fixture-embed', apiKey: API_KEY }), { env: { WORKBENCH_LOG_FORMAT: 'json' } });
      try {
        for (const query of ['echo', 'photo', 'echo']) await search(wb, query, 'dev');
        assert.equal((await search(wb, 'echo', 'dev'))[0], 'dev__fixture__echo');
      } finally {
        await wb.close();
        await endpoint.close();
      }
      const lines = logLines(wb.stderr()).filter((l) => l.fields.event === 'embeddings_down');
      assert.equal(lines.length, 1, wb.stderr());
      assert.deepEqual({ reason: lines[0]!.fields.reason, http_status: lines[0]!.fields.http_status }, expected);
      assert.ok(!wb.stderr().includes(API_KEY));
    }
  });
});

// The ranker sits behind open_toolbox whatever carries it: the fused answer, and the fallback when the endpoint goes
// away while the workbench runs, through each transport with clients of both protocol eras.
const PATHS = (['stdio', 'http'] as const).flatMap((over: Over) => ERAS.map((era: EraName) => ({ over, era })));
for (const { over, era } of PATHS) {
  describe(`search: the semantic ranker (${over}, ${era} client)`, () => {
    it('fuses while the endpoint answers, and answers by words with the meaning hint once it is gone', async () => {
      const { dir, cleanup } = await tempDir(`wb-embed-${over}-${era}-`);
      after(cleanup);
      const endpoint = await startEndpoint(dir, 'paths');
      const wb = await startEra(over, era, config({ url: endpoint.url, model: 'fixture-embed' }), undefined, undefined, { env: { WORKBENCH_LOG_FORMAT: 'json' } });
      const ask = async (query: string): Promise<{ tools: { name: string }[]; hint?: string }> => {
        const result = await wb.client.callTool({ name: 'open_toolbox', arguments: { query, toolbox_name: 'dev' } });
        assert.ok(!result.isError, JSON.stringify(result));
        return result.structuredContent as { tools: { name: string }[]; hint?: string };
      };
      try {
        assert.equal(wb.client.getProtocolEra(), era);
        assert.ok(await waitFor(async () => (await ask('photo')).tools[0]?.name === 'dev__fixture__image', 15_000), 'image never came first for "photo"');
        // Fused answers carry no "nearest in meaning" hint: the dense ranking is the meaning.
        assert.doesNotMatch((await ask('photo')).hint ?? '', /nearest to it in meaning/);
        await endpoint.close();
        const byWords = await ask('photo');
        assert.match(byWords.hint ?? '', /nearest to it in meaning/, 'with the endpoint gone, the answer is the one without the ranker');
        assert.equal((await ask('echo')).tools[0]?.name, 'dev__fixture__echo');
      } finally {
        await wb.close();
        await endpoint.close();
      }
      const down = logLines(wb.stderr()).filter((l) => l.fields.event === 'embeddings_down');
      assert.equal(down.length, 1, wb.stderr());
      assert.equal(down[0]!.fields.reason, 'unreachable');
    });
  });
}
