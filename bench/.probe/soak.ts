import { startWorkbench, servers } from '../lib/processes.js';
import { throughput, sleep } from '../lib/load.js';
import { useTool, callOk } from '../lib/mcp.js';
const gc = process.argv.includes('--gc');
const wb = await startWorkbench('probe', { toolboxes: { bench: { mcpServers: { everything: servers.everything() } } } }, { nodeArgs: ['--import', '/tmp/wb-probe/mem.mjs', ...(gc ? ['--expose-gc'] : [])], env: gc ? { PROBE_GC: '1' } : {} });
await callOk(wb.client, 'open_toolbox', { toolbox_name: 'bench' });
let n = 0;
const total = Number(process.argv[2] ?? 40000);
for (let i = 0; i < total / 5000; i++) {
  await throughput(() => useTool(wb.client, 'bench', 'bench__everything__echo', { message: `soak ${n++}` }), 5000, 8);
  await sleep(1100);
  const lines = wb.stderr().trim().split('\n').filter(l => l.startsWith('MEM') || l.startsWith('AFTERGC'));
  console.log(`${(i + 1) * 5000}: ${lines.slice(-2).join(' | ')}`);
}
await wb.close();
