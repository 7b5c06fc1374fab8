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

/** Why an endpoint gave no usable vectors; `what` is short and never holds the API key or the texts sent. */
export class EmbeddingsFailure extends Error {
  constructor(readonly what: string) {
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
    throw new EmbeddingsFailure(unreachable(error, timeoutMs));
  }
  let body: unknown;
  try {
    const text = await response.text();
    if (!response.ok) throw new EmbeddingsFailure(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
    body = JSON.parse(text);
  } catch (error) {
    if (error instanceof EmbeddingsFailure) throw error;
    throw new EmbeddingsFailure((error as Error).name === 'TimeoutError' ? `no whole answer within ${timeoutMs} ms` : 'an answer that is not JSON');
  }
  return vectorsOf(body, texts.length);
}

function unreachable(error: unknown, timeoutMs: number): string {
  if ((error as Error).name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  // fetch() fails with "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a TLS error, …) is its cause.
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const reason = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : errorMessage(error);
  return `unreachable (${reason})`;
}

function vectorsOf(body: unknown, count: number): Float32Array[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== count) {
    throw new EmbeddingsFailure(`an answer without one vector per text (${count} sent, ${Array.isArray(data) ? data.length : 'no "data" list'} back)`);
  }
  const out = new Array<Float32Array | undefined>(count);
  let dims = -1;
  data.forEach((item: unknown, position) => {
    const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown };
    const at = typeof index === 'number' && Number.isInteger(index) ? index : position;
    if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw new EmbeddingsFailure('an answer whose "embedding" is not a list of numbers');
    }
    if (dims >= 0 && embedding.length !== dims) throw new EmbeddingsFailure('vectors of different lengths in one answer');
    if (at < 0 || at >= count || out[at]) throw new EmbeddingsFailure('an answer whose "index" values do not match the texts sent');
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
