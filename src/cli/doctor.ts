import { InvalidArgumentError, type Command } from 'commander';
import { performance } from 'node:perf_hooks';
import { EXIT_FAILURE, EXIT_OK, errorJson, exitCodeFor, type CliContext } from './context.js';
import { runDoctor } from '../doctor/checks.js';
import { doctorSteps } from './next-command.js';
import { oauthContext } from './runtime.js';
import { namedConfigPath, stateFilePath } from './settings.js';
import { formatDoctorReport } from '../doctor/format-report.js';
import { DEFAULT_DOCTOR_TIMEOUT_MS, type DoctorProgress } from '../doctor/types.js';
import { isWorkbenchError } from '../errors.js';

function progressLine(progress: DoctorProgress, startedAt: number, columns: number): string {
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(0);
  const waiting = progress.pending.length > 0 ? ` — waiting for ${progress.pending.slice(0, 3).join(', ')}${progress.pending.length > 3 ? ` +${progress.pending.length - 3}` : ''}` : '';
  const line = `doctor: ${progress.done}/${progress.total} checked${progress.failed > 0 ? `, ${progress.failed} failed` : ''} (${seconds}s)${waiting}`;
  return line.length >= columns ? `${line.slice(0, Math.max(10, columns - 2))}…` : line;
}

function parseTimeout(value: string): number {
  const ms = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(ms) || ms <= 0) throw new InvalidArgumentError('expected a positive whole number of milliseconds');
  return ms;
}

/** `mcp-workbench doctor`: exit 0 when every checked server is healthy, 1 otherwise, 2 on usage errors. */
export function registerDoctorCommand(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description('connect every server (or one toolbox\'s) and report what works, what does not and why')
    .option('-c, --config <file>', 'config file (or $WORKBENCH_CONFIG); required: servers start only from a config you name')
    .option('-t, --toolbox <name>', 'check only this toolbox')
    .option('--timeout <ms>', `connect timeout for every server (default: its connectTimeoutMs, else ${DEFAULT_DOCTOR_TIMEOUT_MS})`, parseTimeout)
    .option('--json', 'print the report as JSON')
    .option('--state-file <file>', 'tool state file, beside which tool-pins.json says which tool definitions are approved (default: as for serve)')
    .action(async (opts: { config?: string; toolbox?: string; timeout?: number; json?: boolean; stateFile?: string }) => {
      const controller = new AbortController();
      const onSignal = (): void => controller.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      const live = ctx.stderrIsTTY;
      const startedAt = performance.now();
      let last: DoctorProgress | undefined;
      const draw = (): void => {
        if (last) process.stderr.write(`\r\x1b[2K${progressLine(last, startedAt, process.stderr.columns || 80)}`);
      };
      const ticker = live ? setInterval(draw, 1000) : undefined;
      try {
        const configPath = namedConfigPath(opts.config, ctx);
        const report = await runDoctor({
          configPath,
          statePath: stateFilePath(opts.stateFile, ctx),
          toolbox: opts.toolbox,
          timeoutMs: opts.timeout,
          env: ctx.env,
          log: ctx.log,
          secrets: ctx.secretSource,
          oauth: { ...oauthContext(ctx, { browser: false, noBrowserReason: 'doctor opens no browser' }), configPath },
          signal: controller.signal,
          // What to fix, then this same doctor again: not the model's "tell the user to run doctor" (README "Command line").
          startSteps: doctorSteps({ configSource: configPath, stateFile: opts.stateFile, toolbox: opts.toolbox, timeoutMs: opts.timeout }),
          ...(live && {
            onProgress: (progress: DoctorProgress) => {
              last = progress;
              draw();
            },
          }),
        });
        if (live) process.stderr.write('\r\x1b[2K');
        ctx.print(opts.json ? JSON.stringify(report, null, 2) : formatDoctorReport(report));
        process.exitCode = report.interrupted ? 130 : report.ok ? EXIT_OK : EXIT_FAILURE;
      } catch (error) {
        if (live) process.stderr.write('\r\x1b[2K');
        if (opts.json && isWorkbenchError(error)) {
          ctx.print(JSON.stringify({ ok: false, code: error.code, message: error.message, details: error.details, ...errorJson(error) }, null, 2));
          process.exitCode = exitCodeFor(error);
        } else {
          ctx.fail(error);
        }
      } finally {
        clearInterval(ticker);
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
