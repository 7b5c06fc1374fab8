/** Small statistics and formatting helpers for the benchmark report. */

/** The q-quantile (0..1) of `values` by nearest rank on a sorted copy; NaN for an empty list. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** `a / b`, NaN when either is not a finite number or b is 0. */
export function ratio(a: number, b: number): number {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : Number.NaN;
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`;
  if (ms < 100) return `${ms.toFixed(2)} ms`;
  return `${ms.toFixed(0)} ms`;
}

export function fmtRatio(r: number): string {
  return Number.isFinite(r) ? `${r.toFixed(2)}×` : 'n/a';
}

export function fmtRate(perSecond: number): string {
  return Number.isFinite(perSecond) ? `${Math.round(perSecond).toLocaleString('en-US')}/s` : 'n/a';
}

export function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'n/a';
  if (Math.abs(bytes) < 10 * 1024) return `${bytes.toLocaleString('en-US')} B`;
  if (Math.abs(bytes) < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Rough token estimate used throughout: bytes / 4. */
export function fmtTokens(bytes: number): string {
  return Number.isFinite(bytes) ? `≈${Math.round(bytes / 4).toLocaleString('en-US')}` : 'n/a';
}

export function fmtPct(p: number): string {
  return Number.isFinite(p) ? `${p >= 0 ? '+' : ''}${p.toFixed(1)}%` : 'n/a';
}
