import { fileURLToPath } from 'node:url';
import { node } from './workbench-process.js';

/**
 * `$BROWSER` for the OAuth tests: the stand-in browser (test/fixtures/oauth-browser.mjs) run by node, each path quoted
 * so that a clone in a folder whose name has spaces works as anywhere else (README "Which browser").
 */
export const fixtureBrowser = `"${node}" "${fileURLToPath(new URL('../fixtures/oauth-browser.mjs', import.meta.url))}"`;
