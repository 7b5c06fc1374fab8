import { performance } from 'node:perf_hooks';
import type { Tool } from '@modelcontextprotocol/client';
import { ToolboxCatalog } from '../../src/catalog/toolbox-catalog.js';
import { createVisibilityPolicy } from '../../src/catalog/visibility.js';
import type { WorkbenchConfig } from '../../src/config/types.js';

/** Tools shaped like the fixture's generated ones. */
function generated(count: number): Tool[] {
  const types = ['string', 'number', 'boolean', 'integer'] as const;
  return Array.from({ length: count }, (_, i) => ({
    name: `gen_${String(i).padStart(4, '0')}`,
    description: `generated tool ${i}`,
    inputSchema: { type: 'object' as const, properties: { [`p${i}`]: { type: types[i % 4]! } }, additionalProperties: false },
  }));
}

/**
 * Nanoseconds per name lookup as `use_tool` does it (the name-only visibility check, then `ToolboxCatalog.find`), in
 * this process, for a toolbox of `count` tools: canonical name and bare downstream name. Isolates the lookup from the
 * two stdio hops, whose noise is far larger than the lookup itself.
 */
export function lookupNs(count: number, iterations: number): { canonical: number; bare: number } {
  const config: WorkbenchConfig = {
    source: 'bench',
    warnings: [],
    toolboxes: [
      {
        name: 'big',
        description: '',
        disabledTools: [],
        servers: [{ name: 'fx', type: 'stdio', command: 'node', args: [], env: {}, inheritEnv: false, shared: false, disabledTools: [] }],
      },
    ],
  };
  const policy = createVisibilityPolicy({ config });
  const catalog = new ToolboxCatalog('big', [{ server: 'fx', tools: generated(count) }], policy);
  const target = `gen_${String(Math.floor(count / 2)).padStart(4, '0')}`;
  const canonical = `big__fx__${target}`;
  let sink = 0;
  const time = (name: string, withPolicy: boolean): number => {
    const run = (n: number): number => {
      const start = performance.now();
      for (let i = 0; i < n; i++) {
        if (withPolicy && !policy.check('big', 'fx', target).enabled) sink++;
        if ('found' in catalog.find(name)) sink++;
      }
      return performance.now() - start;
    };
    run(Math.min(iterations, 10_000)); // warm-up (JIT)
    return (run(iterations) * 1e6) / iterations;
  };
  const result = { canonical: time(canonical, true), bare: time(target, false) };
  if (sink < 0) throw new Error('unreachable');
  return result;
}
