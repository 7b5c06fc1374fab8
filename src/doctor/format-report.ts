import { DEFAULT_DOCTOR_TIMEOUT_MS, type DoctorReport } from './types.js';

/** The doctor's report as text for a terminal: one block per server, the first few problems of each. */

const SHOWN_ITEMS = 5;

export function formatDoctorReport(report: DoctorReport): string {
  const lines = [`Config: ${report.config}`];
  lines.push(
    report.timeoutMs !== null
      ? `Connect timeout: ${report.timeoutMs} ms for every server (--timeout)`
      : `Connect timeout: each server's connectTimeoutMs, else ${DEFAULT_DOCTOR_TIMEOUT_MS} ms`,
  );
  for (const toolbox of report.toolboxes) {
    lines.push('', `Toolbox "${toolbox.name}"${toolbox.servers.length === 0 ? ': no servers' : ''}`);
    for (const server of toolbox.servers) {
      const name = `${toolbox.name}/${server.server}`;
      if (server.connected) {
        const protocol = server.protocol ? `, ${server.protocol.era} protocol${server.protocol.version ? ` ${server.protocol.version}` : ''}` : '';
        lines.push(`  [ok]   ${name}: connected in ${server.connectMs} ms, ${server.tools} tool${server.tools === 1 ? '' : 's'}${protocol}`);
      } else {
        // A timeout's time is the timeout plus stopping the process; the summary already names the timeout.
        const after = server.failure?.kind === 'timeout' ? '' : ` (after ${server.connectMs} ms)`;
        lines.push(`  [FAIL] ${name}: not connected — ${server.failure?.summary ?? 'error'}${after}`);
        for (const line of (server.failure?.message ?? '').split('\n')) lines.push(`           ${line.trimStart().startsWith('|') ? `  ${line.trim()}` : line}`);
      }
      for (const problem of server.problems) {
        const label = problem.severity === 'error' ? '[ERROR]' : '[warn]';
        const shown = problem.items.slice(0, SHOWN_ITEMS).join(', ');
        const more = problem.items.length > SHOWN_ITEMS ? `, and ${problem.items.length - SHOWN_ITEMS} more` : '';
        lines.push(`         ${label} ${problem.items.length} × ${problem.message}`);
        lines.push(`           ${shown}${more}`);
      }
    }
  }
  const { servers, connected, failed, errors, warnings } = report.summary;
  lines.push('');
  if (report.interrupted) lines.push('Interrupted: the remaining checks were stopped and every connection closed.');
  lines.push(
    `${servers === 0 ? 'No servers to check.' : `${connected} of ${servers} server${servers === 1 ? '' : 's'} connected${failed > 0 ? `, ${failed} failed` : ''}.`} ` +
      `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}. ${report.ok ? 'Healthy.' : 'Not healthy.'}`,
  );
  return lines.join('\n');
}
