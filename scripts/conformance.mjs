#!/usr/bin/env node
/**
 * Runs the MCP conformance suite's server scenarios against the built workbench over HTTP, once per spec revision's
 * requirement set, and prints a pass/fail table.
 *
 *   npm run build && npm run conformance
 *   npm run conformance -- --requirements 2026-07-28 --keep /tmp/conformance-results
 *
 * It builds nothing: it starts `node dist/cli/main.js serve --http 127.0.0.1:0` with server-everything (from
 * devDependencies) behind it, a fresh process per requirement set. The suite (@modelcontextprotocol/conformance) needs
 * Node >= 22 (it imports fs.globSync), so it is not a dependency of this package: it is fetched with npx together
 * with the `node@22` package from the npm registry into the npm cache, and runs on that Node.
 *
 * The suite drives its own reference server's tools, resources and prompts (test_simple_text, …). The workbench shows
 * its client only open_toolbox and use_tool, so those scenarios cannot pass through a proxy; they still run and are
 * listed, but the exit code is decided by the scenarios a proxy can pass ("proxy" in the table): lifecycle, sessions,
 * ping, logging, tools/list, streams, HTTP headers and DNS-rebinding protection. Exit 0 when every scored proxy
 * scenario passes, 1 when one fails, 2 when the run itself could not happen.
 *
 * `--client` runs the client scenarios instead, with the workbench as the client of each scenario's server:
 * scripts/conformance-client.mjs (the command the suite starts) configures the scenario server as a downstream HTTP
 * server and drives the workbench over stdio with open_toolbox/use_tool; for the `auth/*` scenarios it configures the
 * server's `auth` from the credentials the suite gives, and a stand-in browser follows the authorization redirect.
 *
 * `--auth` runs every `auth/*` client scenario at every spec version the suite tags it with, extensions included
 * (scripts/conformance-auth.mjs): exit 0 when all pass, 1 when one fails, 2 when the suite could not be run.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAuthScenarios } from './conformance-auth.mjs';

const SUITE = '@modelcontextprotocol/conformance@0.2.0-alpha.12';
const SUITE_NODE = 'node@22';
const REVISIONS = ['2025-11-25', '2026-07-28'];
const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'dist/cli/main.js');
const everything = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const clientDriver = join(root, 'scripts/conformance-client.mjs');

/**
 * Scenarios that need the suite's reference server behind the endpoint (its test_* tools, resources, prompts,
 * completions, elicitation/sampling tools, tasks): a proxy that shows only open_toolbox/use_tool cannot pass them.
 * Everything else is about the endpoint itself and counts.
 */
const NEEDS_REFERENCE_SERVER = [
  /^tools-call-/,
  /^resources-/,
  /^prompts-/,
  /^completion-/,
  /^elicitation-/,
  /^input-required-result-/,
  /^tasks-/,
  /^json-schema-2020-12$/,
  /^sep-2164-resource-not-found$/,
  /^sep-2640-/,
  /^http-custom-header-server-validation$/,
];
/** Client scenarios (`--client`, the workbench as the client of the scenario's server) that do not apply: skills. */
const NOT_A_WORKBENCH_CLIENT_FEATURE = [/^sep-2640-/];
let leg = 'server';
const kindOf = (scenario) =>
  leg === 'server'
    ? NEEDS_REFERENCE_SERVER.some((pattern) => pattern.test(scenario)) ? 'reference' : 'proxy'
    : NOT_A_WORKBENCH_CLIENT_FEATURE.some((pattern) => pattern.test(scenario)) ? 'n/a' : 'proxy';

function parseArgs(argv) {
  const options = { revisions: REVISIONS, keep: undefined, verbose: false, client: false, auth: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--requirements') {
      options.revisions = (argv[++i] ?? '').split(',').filter(Boolean);
      const unknown = options.revisions.filter((revision) => !REVISIONS.includes(revision));
      if (unknown.length > 0 || options.revisions.length === 0) usage(`--requirements takes one or more of ${REVISIONS.join(', ')} (comma-separated), got "${argv[i] ?? ''}"`);
    } else if (arg === '--keep') {
      options.keep = argv[++i];
      if (!options.keep) usage('--keep needs a directory to leave the results in');
    } else if (arg === '--client') {
      options.client = true;
    } else if (arg === '--auth') {
      options.auth = true;
    } else if (arg === '--verbose') {
      options.verbose = true;
    } else {
      usage(`unknown option "${arg}"`);
    }
  }
  return options;
}

function usage(problem) {
  process.stderr.write(`conformance: ${problem}\nusage: npm run conformance -- [--client | --auth] [--requirements ${REVISIONS.join(',')}] [--keep DIR] [--verbose]\n`);
  process.exit(2);
}

/** Starts the workbench over HTTP on a free loopback port; resolves once it printed its URL. */
async function startWorkbench(dir) {
  const configPath = join(dir, 'workbench-config.json');
  const config = { toolboxes: { demo: { mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } } } };
  await writeFile(configPath, JSON.stringify(config, null, 2));
  // No token: the suite cannot send an Authorization header. Without one the workbench serves on loopback only.
  const child = spawn(process.execPath, [cli, 'serve', '--config', configPath, '--http', '127.0.0.1:0'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'catalog-cache') },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk.toString('utf8')));
  const exited = once(child, 'exit');
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the workbench did not print "listening on" within 20 s:\n${stderr}`));
    }, 20_000);
    child.stderr.on('data', () => {
      const match = /listening on (http:\/\/\S+\/mcp)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(([code]) => {
      clearTimeout(timer);
      reject(new Error(`the workbench exited with ${code} before listening:\n${stderr}`));
    });
  });
  return {
    url,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * `conformance server --url …` or `conformance client --command …`, with `--requirements <revision>`, on Node 22 via
 * npx; resolves with its output and exit code.
 */
async function runSuite(target, revision, outDir, verbose) {
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const leg = 'url' in target ? ['server', '--url', target.url] : ['client', '--command', target.command];
  const args = ['--yes', '-p', SUITE_NODE, '-p', SUITE, '--', 'conformance', ...leg, '--requirements', revision, '-o', outDir];
  const child = spawn(npx, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  let output = '';
  const collect = (chunk) => {
    output += chunk.toString('utf8');
    if (verbose) process.stderr.write(chunk);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const timer = setTimeout(() => child.kill('SIGKILL'), 15 * 60_000);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code, output };
}

/**
 * Scenario → { passed, failed, failures } from the suite's own summary lines (`✗ name: 1 passed, 2 failed`), with
 * the failed checks' messages from its result folders (`server-<scenario>-<timestamp>/checks.json`) where it wrote
 * one: a scenario that throws leaves an empty folder.
 */
async function readResults(output, outDir) {
  const results = new Map();
  const summary = output.split(/\n=== (?:SUITE )?SUMMARY ===\n/)[1] ?? '';
  for (const match of summary.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed/gm)) {
    results.set(match[1], { passed: Number(match[2]), failed: Number(match[3]), failures: [] });
  }
  const entries = existsSync(outDir) ? await readdir(outDir) : [];
  for (const entry of entries) {
    const match = /^(?:server-)?(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    const result = match && results.get(match[1]);
    const file = join(outDir, entry, 'checks.json');
    if (!result || !existsSync(file)) continue;
    const checks = JSON.parse(await readFile(file, 'utf8'));
    result.failures = checks.filter((check) => check.status === 'FAILURE').map((check) => `${check.id}: ${check.errorMessage ?? ''}`);
  }
  return results;
}

/** The scenarios the suite ran for visibility without scoring them (its "Not scored for …" block). */
function notScored(output) {
  const block = output.split(/\nNot scored for [^\n]*\n/)[1] ?? '';
  return new Set([...block.matchAll(/^\s+[✓✗]\s+(\S+)\s+\(/gm)].map((match) => match[1]));
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.client) leg = 'client';
  if (!existsSync(cli)) usage(`${cli} does not exist: run "npm run build" first (this script builds nothing)`);
  if (options.auth) {
    process.exitCode = (await runAuthScenarios({ suite: SUITE, node: SUITE_NODE, driver: clientDriver, verbose: options.verbose })) > 0 ? 1 : 0;
    return;
  }
  if (!existsSync(everything)) usage(`${everything} does not exist: run "npm ci" (server-everything is a devDependency)`);
  const work = await mkdtemp(join(tmpdir(), 'wb-conformance-'));
  const byRevision = new Map();
  let broken = false;
  try {
    for (const revision of options.revisions) {
      const dir = await mkdtemp(join(work, `${revision}-`));
      const outDir = join(options.keep ?? work, `results-${revision}`);
      let run;
      if (options.client) {
        process.stderr.write(`conformance: client scenarios for ${revision}, the workbench as the client (${SUITE} on ${SUITE_NODE} via npx)\n`);
        run = await runSuite({ command: `"${process.execPath}" "${clientDriver}"` }, revision, outDir, options.verbose);
      } else {
        const workbench = await startWorkbench(dir);
        try {
          process.stderr.write(`conformance: ${revision} against ${workbench.url} (${SUITE} on ${SUITE_NODE} via npx)\n`);
          run = await runSuite({ url: workbench.url }, revision, outDir, options.verbose);
        } finally {
          await workbench.stop();
        }
      }
      const results = await readResults(run.output, outDir);
      if (results.size === 0) {
        broken = true;
        process.stderr.write(`conformance: the suite produced no results for ${revision} (exit ${run.code}):\n${run.output.slice(-4000)}\n`);
        continue;
      }
      byRevision.set(revision, { results, unscored: notScored(run.output) });
    }
    printTable(byRevision);
    if (options.verbose) printFailures(byRevision);
    if (options.keep) process.stdout.write(`\nResults (checks.json per scenario) are in ${options.keep}\n`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  if (broken) process.exitCode = 2;
  else if (gateFailures(byRevision) > 0) process.exitCode = 1;
}

const cell = (result) => (result === undefined ? '-' : result.failed === 0 ? `pass ${result.passed}` : `FAIL ${result.passed}/${result.passed + result.failed}`);

function printTable(byRevision) {
  const revisions = [...byRevision.keys()];
  const scenarios = [...new Set(revisions.flatMap((revision) => [...byRevision.get(revision).results.keys()]))];
  const rows = scenarios.map((scenario) => [
    scenario,
    kindOf(scenario),
    ...revisions.map((revision) => {
      const { results, unscored } = byRevision.get(revision);
      const text = cell(results.get(scenario));
      return unscored.has(scenario) ? `${text} (not scored)` : text;
    }),
  ]);
  const header = ['scenario', 'needs', ...revisions];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)));
  const line = (row) => row.map((text, i) => text.padEnd(widths[i])).join('  ').trimEnd();
  process.stdout.write(`${line(header)}\n${line(widths.map((width) => '-'.repeat(width)))}\n${rows.map(line).join('\n')}\n\n`);
  process.stdout.write('Scenarios passed (a scenario passes when none of its checks failed):\n');
  for (const revision of revisions) {
    const { results, unscored } = byRevision.get(revision);
    const count = (filter) => {
      const picked = [...results].filter(([scenario]) => filter(scenario));
      return `${picked.filter(([, result]) => result.failed === 0).length}/${picked.length}`;
    };
    process.stdout.write(
      `  ${revision}: scored ${count((s) => !unscored.has(s))}` +
        ` | scored, proxy-applicable ${count((s) => !unscored.has(s) && kindOf(s) === 'proxy')}` +
        ` | scored, ${leg === 'server' ? 'needs the reference server' : 'not a workbench feature (skills)'} ${count((s) => !unscored.has(s) && kindOf(s) !== 'proxy')}` +
        ` | not scored ${count((s) => unscored.has(s))}\n`,
    );
  }
}

function printFailures(byRevision) {
  for (const [revision, { results }] of byRevision) {
    for (const [scenario, result] of results) {
      for (const failure of result.failures) process.stdout.write(`${revision} ${scenario} ${failure.slice(0, 300)}\n`);
    }
  }
}

function gateFailures(byRevision) {
  let failures = 0;
  for (const [revision, { results, unscored }] of byRevision) {
    for (const [scenario, result] of results) {
      if (result.failed > 0 && !unscored.has(scenario) && kindOf(scenario) === 'proxy') {
        failures++;
        process.stderr.write(`conformance: ${revision} ${leg} ${scenario} failed (a scenario a proxy can pass)\n`);
      }
    }
  }
  return failures;
}

main().catch((error) => {
  process.stderr.write(`conformance: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 2;
});
