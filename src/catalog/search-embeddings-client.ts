import type { EmbeddingsConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';

/**
 * The client of an OpenAI-compatible embeddings endpoint (README "Search", "Semantic ranker"): `POST …/v1/embeddings`
 * with `{ model, input: [texts] }`, the API key as a Bearer token, an answer of `{ data: [{ index, embedding }] }`.
 */

/** Texts per request when embedding tools: hosted endpoints accept far more, local ones answer sooner with less. */
export const EMBED_BATCH = 64;

/**
 * Where embeddings are asked for: the configured URL with `/v1/embeddings` appended, or only `/embeddings` when it
 * already ends in `/v1` (trailing slashes ignored). `http://127.0.0.1:11434` and `https://api.openai.com/v1` both work.
 */
export function embeddingsUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return /\/v1$/.test(trimmed) ? `${trimmed}/embeddings` : `${trimmed}/v1/embeddings`;
}

/** The endpoint's host and port, for logs: no credentials, path or query (a key can hide in those). */
export function endpointHost(base: string): string {
  try {
    return new URL(base).host;
  } catch {
    return '?';
  }
}

/**
 * Why an endpoint gave no usable vectors, as a fact: `unreachable` (no connection; `errorCode` such as ECONNREFUSED
 * when known), `timeout`, `http-status` (`httpStatus`), `not-json`, `bad-answer` (JSON without one vector per text),
 * `down` (not asked: the endpoint failed a moment ago).
 */
export type EmbeddingsFailureReason = 'unreachable' | 'timeout' | 'http-status' | 'not-json' | 'bad-answer' | 'down';

/** Why an endpoint gave no usable vectors; `what` is short and never holds the API key or the texts sent. */
export class EmbeddingsFailure extends Error {
  constructor(
    readonly what: string,
    readonly facts: { reason: EmbeddingsFailureReason; httpStatus?: number; errorCode?: string },
  ) {
    super(what);
    this.name = 'EmbeddingsFailure';
  }
}

/**
 * The vectors of `texts`, in order, each scaled to unit length (so a dot product is the cosine). One request, which
 * gives up after `timeoutMs`.
 *
 * @throws EmbeddingsFailure when the endpoint cannot be reached, does not answer in time, answers with an HTTP error,
 *   or answers with anything but one finite vector per text, all of one length.
 */
export async function embedTexts(config: EmbeddingsConfig, texts: readonly string[], timeoutMs: number): Promise<Float32Array[]> {
  let response: Response;
  try {
    response = await fetch(embeddingsUrl(config.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}) },
      body: JSON.stringify({ model: config.model, input: texts }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw unreachable(error, timeoutMs);
  }
  let body: unknown;
  try {
    const text = await response.text();
    if (!response.ok) {
      throw new EmbeddingsFailure(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`, { reason: 'http-status', httpStatus: response.status });
    }
    body = JSON.parse(text);
  } catch (error) {
    if (error instanceof EmbeddingsFailure) throw error;
    throw (error as Error).name === 'TimeoutError'
      ? new EmbeddingsFailure(`no whole answer within ${timeoutMs} ms`, { reason: 'timeout' })
      : new EmbeddingsFailure('an answer that is not JSON', { reason: 'not-json' });
  }
  return vectorsOf(body, texts.length);
}

function unreachable(error: unknown, timeoutMs: number): EmbeddingsFailure {
  if ((error as Error).name === 'TimeoutError') return new EmbeddingsFailure(`no answer within ${timeoutMs} ms`, { reason: 'timeout' });
  // fetch() fails with "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a TLS error, …) is its cause.
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  const reason = code ?? (typeof cause?.message === 'string' ? cause.message : errorMessage(error));
  return new EmbeddingsFailure(`unreachable (${reason})`, { reason: 'unreachable', ...(code !== undefined && { errorCode: code }) });
}

function vectorsOf(body: unknown, count: number): Float32Array[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== count) {
    throw new EmbeddingsFailure(`an answer without one vector per text (${count} sent, ${Array.isArray(data) ? data.length : 'no "data" list'} back)`, { reason: 'bad-answer' });
  }
  const out = new Array<Float32Array | undefined>(count);
  let dims = -1;
  data.forEach((item: unknown, position) => {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    const at = typeof index === 'number' && Number.isInteger(index) ? index : position;
    if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new EmbeddingsFailure('an answer whose "embedding" is not a list of numbers', { reason: 'bad-answer' });
    }
    if (dims >= 0 && embedding.length !== dims) throw new EmbeddingsFailure('vectors of different lengths in one answer', { reason: 'bad-answer' });
    if (at < 0 || at >= count || out[at]) throw new EmbeddingsFailure('an answer whose "index" values do not match the texts sent', { reason: 'bad-answer' });
    dims = embedding.length;
    out[at] = unit(embedding as number[]);
  });
  return out as Float32Array[];
}

/** The vector scaled to length 1 (a zero vector stays zero: it matches nothing). */
export function unit(values: ArrayLike<number>): Float32Array {
  let norm = 0;
  for (let i = 0; i < values.length; i++) norm += values[i]! * values[i]!;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = values[i]! * scale;
  return out;
}
