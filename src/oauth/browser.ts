import spawn from 'cross-spawn';
import { parseArgsStringToArgv } from 'string-argv';

/** How an authorization URL is opened: `$BROWSER`, else the platform's opener, else not at all. */
export interface BrowserOptions {
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
}

/**
 * The command that opens `url`, or undefined when there is no way to open a browser here: `$BROWSER` (the first of
 * its `:`-separated commands, split into words as a shell would — a quoted word may hold spaces — but never run by a
 * shell; `%s` is replaced by the URL, else the URL is appended), else `open` on macOS,
 * `rundll32 url.dll,FileProtocolHandler` on Windows, `xdg-open` where a display is set (`DISPLAY`/`WAYLAND_DISPLAY`).
 * A server, a container or CI has none of these: sign-in must then happen where a browser is (`auth login`).
 */
export function browserCommand(url: string, options: BrowserOptions): { command: string; args: string[] } | undefined {
  const configured = options.env.BROWSER?.split(':').find((entry) => entry.trim() !== '')?.trim();
  if (configured) {
    const words = parseArgsStringToArgv(configured);
    if (words.length === 0) return undefined;
    const args = words.slice(1).map((word) => word.replace('%s', url));
    if (!configured.includes('%s')) args.push(url);
    return { command: words[0]!, args };
  }
  if (options.platform === 'darwin') return { command: 'open', args: [url] };
  if (options.platform === 'win32') return { command: 'rundll32', args: ['url.dll,FileProtocolHandler', url] };
  if (options.env.DISPLAY || options.env.WAYLAND_DISPLAY) return { command: 'xdg-open', args: [url] };
  return undefined;
}

/**
 * Starts the browser on `url`, detached and without a shell (the URL is one argument, never parsed by a shell).
 * Resolves false when no browser can be opened here or it could not be started; never throws.
 */
export async function openBrowser(url: string, options: BrowserOptions): Promise<boolean> {
  const how = browserCommand(url, options);
  if (!how) return false;
  return new Promise((resolve) => {
    try {
      const child = spawn(how.command, how.args, { stdio: 'ignore', detached: true, env: { ...options.env } as NodeJS.ProcessEnv });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
