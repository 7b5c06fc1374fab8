/**
 * Worker for the no-lost-update test: `node --import tsx test/helpers/state-toggler.ts <statePath> <prefix> <count>`.
 * Performs <count> separate updates, each disabling its own name `tb__<prefix>__t<i>` and flipping the shared
 * name `tb__shared__x` (disable on even i, enable on odd), so every update is a real read-modify-write that a
 * concurrent writer could clobber. Prints `done <count>` on success; exits 1 with the error otherwise.
 */
import { updateToolState } from '../../src/state/update.js';
import { errorMessage } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';

const [path, prefix, countText] = process.argv.slice(2);
const count = Number(countText);
if (!path || !prefix || !Number.isInteger(count) || count < 0) {
  process.stderr.write('usage: state-toggler.ts <statePath> <prefix> <count>\n');
  process.exitCode = 2;
} else {
  const log = createLogger({ level: 'warn' }, `toggler-${prefix}`);
  try {
    for (let i = 0; i < count; i++) {
      const own = `tb__${prefix}__t${i}`;
      const change = i % 2 === 0 ? { disable: [own, 'tb__shared__x'] } : { disable: [own], enable: ['tb__shared__x'] };
      // Generous lock timeout: this proves exclusion, not latency, and CI machines stall.
      await updateToolState(path, change, { log, lockTimeoutMs: 60_000 });
    }
    process.stdout.write(`done ${count}\n`);
  } catch (error) {
    process.stderr.write(`state-toggler ${prefix}: ${errorMessage(error)}\n`);
    process.exitCode = 1;
  }
}
