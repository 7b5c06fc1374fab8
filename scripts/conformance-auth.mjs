/**
 * `npm run conformance -- --auth`: every `auth/*` client scenario of the conformance suite, at every spec version the
 * suite tags it with (an extension scenario once, at none), with the workbench as the OAuth client of the scenario's
 * server (scripts/conformance-client.mjs writes the scenario's credentials into the server's `auth`). The suite runs on
 * Node 22 fetched with npx (see conformance.mjs). Prints one line per run and a summary; resolves with the number of
 * runs that failed, or throws when the suite could not be run at all.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs at once: each starts a workbench, its downstream sign-in and the suite's servers. */
const PARALLEL = 3;

/** `npx -p <node> -p <suite> -- conformance …args`; resolves with its output and exit code. */
async function conformance(suite, node, args, timeoutMs) {
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
  const child = spawn(npx, ['--yes', '-p', node, '-p', suite, '--', 'conformance', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk) => (output += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code, output };
}

/** Every (scenario, spec version) pair `conformance list --client` shows for auth/*; `version` undefined: extension. */
function authRuns(listing) {
  const runs = [];
  for (const [, scenario, tags] of listing.matchAll(/^\s*- (auth\/\S+) \[([^\]]*)\]/gm)) {
    if (tags === 'extension') runs.push({ scenario });
    else for (const version of tags.split(',')) runs.push({ scenario, version });
  }
  return runs;
}

/** The suite's verdict on one run: its `Passed: a/b, n failed, w warnings` line. */
function verdict(output) {
  const match = /^Passed: (\d+)\/(\d+), (\d+) failed, (\d+) warnings/m.exec(output);
  if (!match) return { ok: false, text: 'no result (the run did not complete)' };
  const [, passed, total, failed, warnings] = match.map(Number);
  const ok = failed === 0 && warnings === 0 && /OVERALL: PASSED/.test(output);
  return { ok, text: `${passed}/${total} checks passed${failed ? `, ${failed} failed` : ''}${warnings ? `, ${warnings} warnings` : ''}` };
}

export async function runAuthScenarios({ suite, node, driver, verbose }) {
  const listed = await conformance(suite, node, ['list', '--client'], 5 * 60_000);
  const runs = authRuns(listed.output);
  if (runs.length === 0) throw new Error(`the suite listed no auth/* client scenarios (exit ${listed.code}):\n${listed.output.slice(-2000)}`);
  process.stderr.write(`conformance: ${runs.length} auth/* client runs, the workbench as the OAuth client (${suite} on ${node} via npx)\n`);
  const work = await mkdtemp(join(tmpdir(), 'wb-conformance-auth-'));
  const results = [];
  try {
    let next = 0;
    const worker = async () => {
      while (next < runs.length) {
        const run = runs[next++];
        const args = ['client', '--command', `"${process.execPath}" "${driver}"`, '--scenario', run.scenario, ...(run.version ? ['--spec-version', run.version] : []), '-o', join(work, String(next))];
        const { output } = await conformance(suite, node, args, 3 * 60_000);
        const result = { ...run, ...verdict(output) };
        results.push(result);
        process.stdout.write(`${result.ok ? 'pass' : 'FAIL'}  ${run.scenario} @ ${run.version ?? 'extension'}: ${result.text}\n`);
        if (!result.ok && verbose) process.stdout.write(`${output.slice(-6000)}\n`);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok);
  const scenarios = new Set(results.map((r) => r.scenario));
  process.stdout.write(`\nauth/* client scenarios: ${results.length - failed.length}/${results.length} runs passed (${scenarios.size} scenarios)\n`);
  for (const r of failed) process.stdout.write(`  failed: ${r.scenario} @ ${r.version ?? 'extension'}: ${r.text}\n`);
  return failed.length;
}
