// Text that came from a server or a file, made safe for a terminal: a name, an email or an error
// message can hold ESC sequences (clear the screen, write the clipboard through OSC 52, a disguised
// OSC 8 link) or bidirectional overrides (U+202E shows text backwards). Each such character is shown
// escaped as `\u001b`, `\u202e` (as gh does), so it is seen, never obeyed. --json output is not
// passed through here: JSON.stringify already escapes control characters, and the bytes are the data.

/** C0 controls but tab and newline, DEL, C1 controls, and the bidirectional formatting characters. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same characters, to test a whole text at once (UNSAFE is global: its `test` would keep a position). */
const ANY_UNSAFE = new RegExp(UNSAFE.source);
/** The SGR sequences (colours, bold, dim, reset) that mkt's own styling writes: kept in a message. */
// eslint-disable-next-line no-control-regex -- mkt's own SGR sequences
const OWN_STYLE = /\u001b\[[0-9;]*m/g;

const escaped = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Every control and bidi character of `text` shown escaped (for a value: a name, a cell, a message). */
export function safeText(text: string): string {
  return text.replace(UNSAFE, escaped);
}

/**
 * A whole line for the terminal: as safeText, but colour and style sequences (only colours) are kept,
 * because mkt styles its own lines; values inside it are made safe where they enter (safeText).
 */
export function safeLine(text: string): string {
  if (!ANY_UNSAFE.test(text)) return text; // most lines (JSON's among them): one scan, no copy
  let out = '';
  let last = 0;
  for (const match of text.matchAll(OWN_STYLE)) {
    out += safeText(text.slice(last, match.index)) + match[0];
    last = match.index + match[0].length;
  }
  return out + safeText(text.slice(last));
}

/**
 * A server's text shown in one table cell or line (a handler's answer, an error): whitespace runs as
 * one space, cut at `max` characters, every control character escaped (colour and conceal included,
 * which safeLine would keep). The one way `webhooks deliveries` and the live `listen` line show it.
 */
export function oneLine(text: string | null, max = 60): string | null {
  if (text === null) return null;
  const flat = text.replace(/\s+/g, ' ').trim();
  return safeText(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}
