import type { Command } from 'commander';
import { SECRET_NAME_RULE, isSecretName } from '../config/secret-source.js';
import { WorkbenchError } from '../errors.js';
import type { CliContext } from './context.js';

/** Longest value `secret set` accepts (a token, a key, a small certificate). */
const MAX_VALUE_BYTES = 64 * 1024;

/**
 * `mcp-workbench secret set | list | remove`: the secret store from a shell (README "Secrets"). A value is never an
 * argument (arguments show in `ps` and in shell history): it is read from stdin when stdin is piped, or typed at a
 * prompt that does not echo. Nothing here ever prints a value.
 */
export function registerSecretCommand(program: Command, ctx: CliContext): void {
  const secret = program.command('secret').description('keep tokens out of the config: store them for ${secret:NAME} (OS keychain, else ~/.mcp-workbench/secrets.json)');

  secret
    .command('set <name>')
    .description('store a secret; the value is read from stdin when piped, else from a prompt that does not echo (never an argument)')
    .allowExcessArguments()
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      // Never repeat the extra arguments: one of them is probably the value.
      if (cmd.args.length > 1) return ctx.fail(usage('secret set takes only a name: the value is never an argument (arguments show in ps and shell history). Pipe it on stdin or type it at the prompt.'));
      if (!isSecretName(name)) return ctx.fail(usage(`invalid secret name ${JSON.stringify(name)}: ${SECRET_NAME_RULE}`));
      try {
        const store = await ctx.secretStore();
        const value = process.stdin.isTTY ? await promptHidden(`Value for secret "${name}" (not shown): `) : await readPiped();
        const where = await store.set(name, value);
        ctx.print(`stored secret "${name}" in ${where === 'keychain' ? 'the OS keychain' : `the secret file ${store.filePath}`}; use it in the config as \${secret:${name}}`);
      } catch (error) {
        ctx.fail(error);
      }
    });

  secret
    .command('list')
    .description('list the names of stored secrets and which store holds each (never their values)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      try {
        const store = await ctx.secretStore();
        const listed = await store.list();
        if (opts.json) {
          ctx.print(JSON.stringify({ store: store.kind, choice: store.choice, ...(store.filePath && { file: store.filePath }), secrets: listed }, null, 2));
          return;
        }
        const lines = [`secrets are kept in ${store.choice}`];
        if (listed.length === 0) lines.push('  (none stored; add one with: mcp-workbench secret set NAME)');
        for (const item of listed) lines.push(`  ${item.name}  (${item.store === 'keychain' ? 'OS keychain' : 'secret file'})`);
        ctx.print(lines.join('\n'));
      } catch (error) {
        ctx.fail(error);
      }
    });

  secret
    .command('remove <name>')
    .description('remove a stored secret')
    .action(async (name: string) => {
      if (!isSecretName(name)) return ctx.fail(usage(`invalid secret name ${JSON.stringify(name)}: ${SECRET_NAME_RULE}`));
      try {
        const store = await ctx.secretStore();
        const from = await store.remove(name);
        if (from.length === 0) {
          // A name the user typed that matches nothing is a usage error (README "Command line"), as for auth logout.
          throw new WorkbenchError('USAGE', `no secret "${name}" is stored in ${store.choice}; \`mcp-workbench secret list\` shows what is.`);
        }
        ctx.print(`removed secret "${name}" from ${from.map((s) => (s === 'keychain' ? 'the OS keychain' : `the secret file ${store.filePath}`)).join(' and ')}`);
      } catch (error) {
        ctx.fail(error);
      }
    });
}

/** A usage error, ended through {@link CliContext.fail} like every other failure (exit 2). */
function usage(message: string): WorkbenchError {
  return new WorkbenchError('USAGE', message);
}

/** All of piped stdin, without the one line ending `echo` or a file adds. @throws WorkbenchError USAGE */
async function readPiped(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_VALUE_BYTES) throw new WorkbenchError('USAGE', `the value on stdin is longer than ${MAX_VALUE_BYTES} bytes; nothing was stored.`);
    chunks.push(chunk);
  }
  return checked(Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, ''));
}

function checked(value: string): string {
  if (value === '') {
    throw new WorkbenchError('USAGE', 'the value is empty; nothing was stored. Pipe it on stdin (e.g. `printf %s "$TOKEN" | mcp-workbench secret set NAME`) or type it at the prompt.');
  }
  return value;
}

/**
 * Reads one line from the terminal without echoing it (raw mode: every key is handled here). Enter ends it,
 * Backspace deletes, Ctrl-C and Ctrl-D with nothing typed abort. The prompt goes to stderr: stdout is for results.
 */
function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (error?: Error): void => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (error) reject(error);
      else {
        try {
          resolve(checked(value));
        } catch (problem) {
          reject(problem as Error);
        }
      }
    };
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish();
        if (ch === '\u0003' || (ch === '\u0004' && value === '')) return finish(new WorkbenchError('USAGE', 'cancelled; nothing was stored.'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ' || ch === '\t') value += ch;
        if (Buffer.byteLength(value) > MAX_VALUE_BYTES) return finish(new WorkbenchError('USAGE', `the value is longer than ${MAX_VALUE_BYTES} bytes; nothing was stored.`));
      }
    };
    stdin.setEncoding('utf8');
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}
