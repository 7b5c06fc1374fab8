import type { Section } from './report.js';

/** What every phase gets from the runner. */
export interface PhaseContext {
  /** Scales an iteration count (smaller with --quick), never below `min`. */
  n(count: number, min?: number): number;
  /** performance.now() value after which loops stop early (and the phase says so). */
  deadline: number;
  /** Progress line on stderr. */
  log(message: string): void;
}

export type Phase = (ctx: PhaseContext) => Promise<Section>;

export function emptySection(title: string): Section {
  return { title, tables: [], notes: [], targets: [] };
}
