import { createTwoFilesPatch, FILE_HEADERS_ONLY } from 'diff';

/**
 * The unified diff (`---`/`+++` headers, `@@ -a,b +c,d @@` hunks, three lines of context, `\ No newline at end of
 * file` where a last line lacks one) from `before` to `after`, or '' when they are equal; made by the `diff`
 * library (Myers' algorithm), for showing what `migrate` would change in a config file. Labels go into the
 * `---`/`+++` lines.
 */
export function unifiedDiff(before: string, after: string, beforeLabel: string, afterLabel: string): string {
  if (before === after) return '';
  return createTwoFilesPatch(beforeLabel, afterLabel, before, after, undefined, undefined, {
    context: 3,
    headerOptions: FILE_HEADERS_ONLY,
  });
}
