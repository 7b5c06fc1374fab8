import { basename } from 'node:path';

/** The parts of V8's .cpuprofile JSON that the summary needs. */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionTime {
  name: string;
  where: string;
  area: string;
  ms: number;
  pct: number;
}

export interface ProfileSummary {
  /** Sampled wall time in the window (ms). */
  windowMs: number;
  /** Time the process was not idle (ms). */
  busyMs: number;
  /** Self time per function, busiest first (percent of busy time). */
  self: FunctionTime[];
  /** Inclusive (self + callees) time per function of the workbench, SDK and zod code, busiest first. */
  inclusive: FunctionTime[];
  /** Self time per area (our code, SDK, zod, ajv, node internals, GC, …). */
  areas: { area: string; ms: number; pct: number }[];
}

/** Which code a frame belongs to, for the per-area breakdown. */
export function areaOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)' || name === '(idle)' || name === '(root)') return name;
  if (url.includes('/node_modules/zod/')) return 'zod (SDK schemas)';
  if (url.includes('/node_modules/@modelcontextprotocol/sdk/')) return 'MCP SDK';
  if (url.includes('/node_modules/ajv')) return 'ajv';
  if (url.includes('/node_modules/')) return 'other dependency';
  if (url.includes('/dist/')) return 'workbench (dist/)';
  if (url.startsWith('node:') || url === '') return 'node internals / native';
  return 'other';
}

function where(url: string, line: number): string {
  if (!url) return '(native)';
  const short = url.includes('/node_modules/')
    ? url.slice(url.lastIndexOf('/node_modules/') + '/node_modules/'.length).replace(/^@modelcontextprotocol\/sdk\/dist\/esm\//, 'sdk/')
    : url.includes('/dist/')
      ? url.slice(url.lastIndexOf('/dist/') + 1)
      : url.startsWith('node:')
        ? url
        : basename(url);
  return `${short}:${line + 1}`;
}

/**
 * Self and inclusive time per function over the samples whose timestamps fall in [fromUs, toUs] (V8 timestamps are
 * CLOCK_MONOTONIC microseconds, the clock of process.hrtime, so a window measured in the parent selects the same
 * stretch of the child's profile). Each sample is charged the interval to the next one.
 */
export function summarise(profile: CpuProfile, fromUs = Number.NEGATIVE_INFINITY, toUs = Number.POSITIVE_INFINITY, top = 20): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const self = new Map<string, { name: string; where: string; area: string; us: number }>();
  const inclusive = new Map<string, { name: string; where: string; area: string; us: number }>();
  const keyOf = (node: ProfileNode): { key: string; name: string; where: string; area: string } => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const w = where(url, lineNumber);
    return { key: `${name} ${w}`, name, where: w, area: areaOf(url, name) };
  };
  let t = profile.startTime;
  let windowUs = 0;
  let idleUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < fromUs || t > toUs) continue;
    const duration = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i]!);
    if (!node || duration <= 0) continue;
    windowUs += duration;
    const k = keyOf(node);
    if (k.name === '(idle)') {
      idleUs += duration;
      continue;
    }
    const s = self.get(k.key) ?? { name: k.name, where: k.where, area: k.area, us: 0 };
    s.us += duration;
    self.set(k.key, s);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!;
      const fk = keyOf(frame);
      if (seen.has(fk.key)) continue;
      seen.add(fk.key);
      const inc = inclusive.get(fk.key) ?? { name: fk.name, where: fk.where, area: fk.area, us: 0 };
      inc.us += duration;
      inclusive.set(fk.key, inc);
    }
  }
  const busyUs = windowUs - idleUs;
  const toList = (map: Map<string, { name: string; where: string; area: string; us: number }>): FunctionTime[] =>
    [...map.values()]
      .sort((a, b) => b.us - a.us)
      .map((f) => ({ name: f.name, where: f.where, area: f.area, ms: f.us / 1000, pct: busyUs > 0 ? (f.us / busyUs) * 100 : 0 }));
  const areas = new Map<string, number>();
  for (const f of self.values()) areas.set(f.area, (areas.get(f.area) ?? 0) + f.us);
  return {
    windowMs: windowUs / 1000,
    busyMs: busyUs / 1000,
    self: toList(self).slice(0, top),
    inclusive: toList(inclusive)
      .filter((f) => ['workbench (dist/)', 'MCP SDK', 'zod (SDK schemas)', 'ajv'].includes(f.area))
      .slice(0, top),
    areas: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([area, us]) => ({ area, ms: us / 1000, pct: busyUs > 0 ? (us / busyUs) * 100 : 0 })),
  };
}
