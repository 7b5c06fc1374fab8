/**
 * `npm run bench` — what the workbench costs, measured against calling the same servers directly.
 *
 *   npm run bench                      every phase; writes BENCHMARKS.md and prints it
 *   npm run bench -- --profile         also runs the workbench under `node --cpu-prof` during an echo and a 1 MiB
 *                                      throughput run and prints the top self-time functions
 *   npm run bench -- --quick           about a tenth of the iterations (for trying the bench itself; figures noisy)
 *   npm run bench -- --only echo,soak  just these phases (echo, big, open, eras, robust, context, discovery, scale, search, soak, instructions, profile)
 *   npm run bench -- --out FILE        write the report somewhere else (default BENCHMARKS.md at the repo root)
 *
 * Each phase starts and closes its own processes, has a time budget, and a phase that fails prints an error line
 * and is reported as failed while the others still run.
 */
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import type { Phase } from './lib/phase.js';
import { closeAll, openCount } from './lib/processes.js';
import { machine, renderReport, type Section } from './lib/report.js';
import { bigResultPhase, echoPhase } from './phases/calls.js';
import { contextPhase } from './phases/context.js';
import { discoveryPhase } from './phases/discovery.js';
import { erasPhase } from './phases/eras.js';
import { robustPhase } from './phases/robust.js';
import { instructionsPhase } from './phases/instructions.js';
import { openPhase } from './phases/open.js';
import { profilePhase } from './phases/profile.js';
import { scalePhase } from './phases/scale.js';
import { searchPhase } from './phases/search.js';
import { soakPhase } from './phases/soak.js';

interface Options {
  quick: boolean;
  profile: boolean;
  only: string[] | undefined;
  out: string;
  outGiven: boolean;
}

function parseArgs(argv: readonly string[]): Options {
  const options: Options = {
    quick: false,
    profile: false,
    only: undefined,
    out: fileURLToPath(new URL('../BENCHMARKS.md', import.meta.url)),
    outGiven: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    if (flag === '--quick') options.quick = true;
    else if (flag === '--profile') options.profile = true;
    else if (flag === '--only') options.only = value().split(',').map((s) => s.trim());
    else if (flag === '--out') {
      options.out = value();
      options.outGiven = true;
    }
    else throw new Error(`unknown option ${arg} (see the comment at the top of bench/run.ts)`);
  }
  return options;
}

/** Phases in run order, with the time budget each gets (seconds). */
const PHASES: { id: string; title: string; run: Phase; budget: number }[] = [
  { id: 'echo', title: 'Call overhead: server-everything `echo`', run: echoPhase, budget: 70 },
  { id: 'big', title: 'Call overhead: 1 MiB result (fixture `huge`)', run: bigResultPhase, budget: 50 },
  { id: 'open', title: 'Opening a toolbox of 4 servers', run: openPhase, budget: 60 },
  { id: 'eras', title: 'Protocol eras: probe once, remember', run: erasPhase, budget: 150 },
  { id: 'robust', title: 'A mixed, partly broken toolbox', run: robustPhase, budget: 60 },
  { id: 'context', title: 'Context cost', run: contextPhase, budget: 30 },
  { id: 'discovery', title: 'Progressive discovery: budget, search, catalog cache', run: discoveryPhase, budget: 120 },
  { id: 'scale', title: 'Scale: a toolbox of 1,000 tools', run: scalePhase, budget: 45 },
  { id: 'search', title: 'Search', run: searchPhase, budget: 120 },
  { id: 'soak', title: 'Soak: memory over 100,000 calls', run: soakPhase, budget: 60 },
  { id: 'instructions', title: 'Instructions per forwarded call (callgrind)', run: instructionsPhase, budget: 240 },
  { id: 'profile', title: 'CPU profile of the workbench', run: profilePhase, budget: 45 },
];

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const startedAt = new Date();
  const t0 = performance.now();
  const machineInfo = machine();
  const log = (message: string): void => void process.stderr.write(`[bench] ${message}\n`);
  const selected = PHASES.filter((p) => (options.only ? options.only.includes(p.id) : p.id !== 'profile' || options.profile));
  const sections: Section[] = [];
  let interrupted = false;
  process.once('SIGINT', () => {
    interrupted = true;
    log('interrupted: closing every process the bench started');
    void closeAll().then(() => process.exit(130));
  });

  for (const phase of selected) {
    if (interrupted) break;
    log(`${phase.title}…`);
    const start = performance.now();
    let section: Section;
    try {
      section = await phase.run({
        n: (count, min = 1) => Math.max(min, options.quick ? Math.round(count / 10) : count),
        deadline: start + phase.budget * 1000 * (options.quick ? 0.5 : 1),
        log,
      });
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      log(`ERROR in phase "${phase.id}": ${message}`);
      section = { title: phase.title, tables: [], notes: [], targets: [], error: (error instanceof Error ? error.message : String(error)).split('\n')[0] };
    } finally {
      await closeAll();
    }
    section.seconds = (performance.now() - start) / 1000;
    sections.push(section);
    const verdicts = section.targets.map((t) => `${t.pass ? 'PASS' : 'FAIL'} ${t.name} ${t.measured}`).join('; ');
    log(`  done in ${section.seconds.toFixed(1)} s${section.key ? `: ${section.key}` : ''}${verdicts ? ` — ${verdicts}` : ''}`);
    if (openCount() > 0) log(`  warning: ${openCount()} process(es) still open after the phase`);
  }

  const report = renderReport({
    startedAt,
    totalSeconds: (performance.now() - t0) / 1000,
    machineLines: machineInfo.lines,
    loadAtEnd: loadavg(),
    sections,
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  });
  process.stdout.write(report);
  if ((!options.only && !options.quick) || options.outGiven) {
    await writeFile(options.out, report);
    log(`wrote ${options.out}`);
  } else {
    log('partial or --quick run: BENCHMARKS.md not written (pass --out FILE to write it somewhere)');
  }
}

try {
  await main();
} catch (error) {
  process.stderr.write(`[bench] ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await closeAll();
}
