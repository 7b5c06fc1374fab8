/** Text as one shell word in a command the workbench tells a person to run: as is when plain, else in single quotes. */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
