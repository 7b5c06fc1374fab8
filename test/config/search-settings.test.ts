import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { createRedactor } from '../../src/shared/redact.js';
import { failure } from '../helpers/expect-error.js';

/** `search.embeddings` in the config (README "Search", "Semantic ranker"): expanded, validated, its key a secret. */

const SOURCE = '/cfg/workbench-config.json';
const toolboxes = { dev: { mcpServers: { fs: { command: 'node' } } } };

describe('config: search.embeddings', () => {
  it('expands ${VAR} in url, model and apiKey; the key is a secret whatever its variable is called', () => {
    const config = parseConfig(
      { toolboxes, search: { embeddings: { url: '${EMBED_URL}', model: '${EMBED_MODEL:-nomic-embed-text}', apiKey: '${EMBEDDINGS}' } } },
      SOURCE,
      { EMBED_URL: 'http://127.0.0.1:11434', EMBEDDINGS: 'sk-live-abcdef123456' },
    );
    assert.deepEqual(config.search, { embeddings: { url: 'http://127.0.0.1:11434', model: 'nomic-embed-text', apiKey: 'sk-live-abcdef123456' } });
    assert.equal(createRedactor(config.secrets)('key sk-live-abcdef123456 sent'), 'key [redacted: search.embeddings.apiKey] sent');
    assert.deepEqual(config.warnings, []);
  });

  it('is off with a warning (never a failed config) when a variable is unset or the URL is not http(s)', () => {
    const unset = parseConfig({ toolboxes, search: { embeddings: { url: '${EMBED_URL}', model: 'm' } } }, SOURCE, {});
    assert.equal(unset.search, undefined);
    assert.equal(unset.warnings.length, 1);
    assert.match(unset.warnings[0]!, /^search\.embeddings\.url: \$\{EMBED_URL\} is not set and has no default; .*words only/);
    const ftp = parseConfig({ toolboxes, search: { embeddings: { url: 'ftp://host', model: 'm' } } }, SOURCE, {});
    assert.equal(ftp.search, undefined);
    assert.match(ftp.warnings[0]!, /search\.embeddings\.url: not an absolute http\(s\) URL/);
  });

  it('refuses unknown keys and a missing model like the rest of the config', () => {
    const error = failure(() => parseConfig({ toolboxes, search: { embeddings: { url: 'http://x', modle: 'm' } } }, SOURCE, {}), 'CONFIG_INVALID');
    assert.ok(error.details.some((d) => d.startsWith('search.embeddings')), error.details.join('\n'));
    assert.ok(error.details.some((d) => /model/.test(d)), error.details.join('\n'));
  });

  it('is absent when not configured', () => {
    assert.equal(parseConfig({ toolboxes }, SOURCE, {}).search, undefined);
  });
});
