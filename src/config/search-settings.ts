import { namesSecret, urlSecrets, type Secret } from '../shared/redact.js';
import { expandString, formatJsonPath, type EnvLike } from './expand-env.js';
import type { SecretSource } from './secret-source.js';
import { isHttpUrl } from './text.js';
import type { SearchConfig } from './types.js';

/** `search` as the schema lets it be written. */
export interface RawSearch {
  embeddings?: { url: string; model: string; apiKey?: string };
}

export interface SearchSettings {
  search?: SearchConfig;
  /** Why the embeddings ranker is off although configured (an unset variable, a URL that is not http(s)); paths only. */
  warnings: string[];
  /** The API key and every other credential the settings hold, for redaction. */
  secrets: Secret[];
}

/**
 * The `search` settings, expanded (README "Search"): `${VAR}`, `${VAR:-default}` and `${secret:NAME}` in the
 * embeddings' `url`, `model` and `apiKey`. A problem here never fails the config: search stays lexical and a warning
 * names the path and the fix. The API key is always a secret, whatever it holds; so are the URL's credentials. Never
 * throws; no message holds an expanded value.
 */
export function searchSettings(raw: RawSearch | undefined, env: EnvLike, secretSource?: SecretSource): SearchSettings {
  const embeddings = raw?.embeddings;
  if (!embeddings) return { warnings: [], secrets: [] };
  const warnings: string[] = [];
  const secrets: Secret[] = [];
  const at = ['search', 'embeddings'];
  const expand = (key: 'url' | 'model' | 'apiKey', text: string): string => {
    const result = expandString(text, env, secretSource);
    const path = formatJsonPath([...at, key]);
    for (const { name, value } of result.substituted) if (namesSecret(name)) secrets.push({ value, label: `\${${name}}` });
    for (const { name, value } of result.stored) secrets.push({ value, label: `secret ${name}` });
    for (const name of new Set(result.missing)) warnings.push(`${path}: \${${name}} is not set and has no default; set it in the environment the workbench starts with`);
    for (const name of new Set(result.missingSecrets)) warnings.push(`${path}: \${secret:${name}} is not in the secret store; add it with \`mcp-workbench secret set ${name}\``);
    return result.value;
  };
  const url = expand('url', embeddings.url);
  const model = expand('model', embeddings.model);
  const apiKey = embeddings.apiKey === undefined ? undefined : expand('apiKey', embeddings.apiKey);
  if (apiKey) secrets.push({ value: apiKey, label: 'search.embeddings.apiKey' });
  secrets.push(...urlSecrets(url));
  if (warnings.length === 0 && !isHttpUrl(url)) {
    warnings.push(`${formatJsonPath([...at, 'url'])}: not an absolute http(s) URL; write the endpoint's base, e.g. "http://127.0.0.1:11434" or "https://api.openai.com/v1"`);
  }
  if (warnings.length === 0 && model.trim() === '') warnings.push(`${formatJsonPath([...at, 'model'])}: empty after expansion; name the embeddings model`);
  if (warnings.length > 0) {
    return { warnings: warnings.map((w) => `${w}. Until then search ranks by words only (the semantic ranker is off).`), secrets };
  }
  return { search: { embeddings: { url, model, ...(apiKey ? { apiKey } : {}) } }, warnings, secrets };
}
