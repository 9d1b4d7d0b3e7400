/** C0 and C1 control characters and DEL: what could move a terminal's cursor or change its colours. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Text from a server made safe for a terminal: control characters (escape sequences, carriage
 * returns, new lines) shown as `\u{…}`, so a line stays one line and nothing is interpreted.
 */
export function printable(value: unknown): string {
  const text = value === undefined || value === null ? '' : String(value);
  return text.replace(CONTROL, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
}
