import type { Command } from 'commander';
import { loginServer } from '../clients/auth-login.js';
import { usersDirBeside } from '../clients/user-places.js';
import { loadConfig } from '../config/load.js';
import type { WorkbenchConfig } from '../config/types.js';
import { WorkbenchError } from '../errors.js';
import { signInCommand } from '../oauth/sign-in.js';
import { signInStatus } from '../oauth/status.js';
import { VERSION } from '../version.js';
import type { CliContext } from './context.js';
import { oauthContext } from './runtime.js';
import { configFilePath, namedConfigPath, stateFilePath } from './settings.js';

/**
 * `mcp-workbench auth login | status | logout`: OAuth sign-ins of remote servers (README "Remote servers behind
 * OAuth"). Wiring and printing only; no token is ever printed.
 */
export function registerAuthCommand(program: Command, ctx: CliContext): void {
  const auth = program.command('auth').description('sign in to OAuth-protected remote servers (tokens in ~/.mcp-workbench/oauth/)');
  const configOption = ['-c, --config <file>', 'config file (default: $WORKBENCH_CONFIG, else ./workbench-config.json for status; login needs it named)'] as const;

  registerLogin(auth, ctx, configOption);

  auth
    .command('status')
    .description('list each OAuth server: signed in or not, when its access token expires, its scopes')
    .option(...configOption)
    .option('--json', 'machine-readable output')
    .action(async (opts: { config?: string; json?: boolean }) => {
      try {
        const config = await load(ctx, opts.config);
        const store = oauthContext(ctx, { browser: true }).store;
        const listed = await signInStatus(config, store);
        if (opts.json) return ctx.print(JSON.stringify({ dir: store.dir, servers: listed }, null, 2));
        const lines = [`OAuth sign-ins are kept in ${store.dir}`];
        if (listed.length === 0) lines.push('  (no server of the config uses OAuth)');
        for (const s of listed) {
          const [toolbox, server] = s.server.split('/') as [string, string];
          const state = s.signedIn
            ? `signed in${s.expires ? `, expires ${s.expires}` : ''}${s.refreshable ? ' (refreshable)' : ''}${s.scopes ? `, scopes: ${s.scopes.join(' ')}` : ''}`
            : `not signed in (run: ${signInCommand(toolbox, server, config.source)})`;
          lines.push(`  ${s.server}  ${state}${s.configured ? '' : ' — not in the config any more; remove with auth logout'}`);
        }
        ctx.print(lines.join('\n'));
      } catch (error) {
        ctx.fail(error);
      }
    });

  registerLogout(auth, ctx, configOption);
}

/** `auth login`: signs in to one server afresh. */
function registerLogin(auth: Command, ctx: CliContext, configOption: readonly [string, string]): void {
  auth
    .command('login <toolbox/server>')
    .description('sign in to a remote server in the browser ($BROWSER, else the system browser; the URL is printed too)')
    .option(...configOption)
    .option('--state-file <file>', 'tool state file, beside which users/local is the folder ${user:dir} stands for (default: as for serve)')
    .action(async (target: string, opts: { config?: string; stateFile?: string }) => {
      try {
        const config = await loadConfig(namedConfigPath(opts.config, ctx), ctx.env, { secrets: ctx.secretSource });
        // A person reads this terminal: without a browser here, the URL is printed and the callback awaited.
        const oauth = { ...oauthContext(ctx, { browser: true }), printUrlWithoutBrowser: true };
        const usersDir = usersDirBeside(stateFilePath(opts.stateFile, ctx));
        const done = await loginServer({ config, target, env: ctx.env, log: ctx.log, oauth, version: VERSION, usersDir });
        ctx.print(`signed in to ${done.toolbox}/${done.server.name} (${done.tools} tools); the sign-in is kept in ${oauth.store.dir}`);
      } catch (error) {
        ctx.fail(error);
      }
    });
}

/** `auth logout`: forgets a stored sign-in. */
function registerLogout(auth: Command, ctx: CliContext, configOption: readonly [string, string]): void {
  auth
    .command('logout <toolbox/server>')
    .description("remove a server's stored sign-in (its tokens and client registration)")
    // Taken like login's and status's, so the three commands take the same options; the config is not read: a sign-in
    // is forgotten even for a server no longer in it.
    .option(...configOption)
    .action(async (target: string) => {
      try {
        const [toolbox, server, ...rest] = target.split('/');
        if (!toolbox || !server || rest.length > 0) throw new WorkbenchError('USAGE', `name the server as <toolbox>/<server>, got "${target}"`);
        const store = oauthContext(ctx, { browser: true }).store;
        const removed = await store.remove(toolbox, server);
        if (removed.length === 0) throw new WorkbenchError('USAGE', `no sign-in of ${target} is stored in ${store.dir}; \`mcp-workbench auth status\` lists them.`);
        ctx.print(`signed out of ${target}: removed ${removed.join(', ')}`);
      } catch (error) {
        ctx.fail(error);
      }
    });
}

async function load(ctx: CliContext, flag: string | undefined): Promise<WorkbenchConfig> {
  return loadConfig(configFilePath(flag, ctx), ctx.env, { secrets: ctx.secretSource });
}
