import type { Writable } from 'node:stream';
import { colorFor, isCI, palette, type Style } from './colour.js';
import type { JqFilter } from './jq.js';
import { safeLine, safeText } from './safe-text.js';
import { drained } from '../platform/line-copy.js';

type Env = Record<string, string | undefined>;
type Stream = Writable & { isTTY?: boolean; columns?: number };

/** A column of a table: the header and how to read the cell from a row. */
export interface Column<T> {
  header: string;
  get(row: T): unknown;
}

/**
 * Where a command's words go: data on stdout, everything else on stderr. Colour and tables only
 * on a terminal, never under CI, NO_COLOR or --json (src/output/colour.ts). Every human line is
 * made safe for the terminal (src/output/safe-text.ts); JSON is written as it is.
 */
export class Output {
  readonly stdout: Stream;
  readonly stderr: Stream;
  /** stdout is a terminal and nothing asked for machine output. */
  readonly interactive: boolean;
  /** stderr may carry colour. */
  readonly color: boolean;
  /** The --jq filter every JSON document and JSON line goes through, when the flag was given. */
  readonly jq: JqFilter | undefined;
  private readonly said = new Set<string>();
  private readonly style: ReturnType<typeof palette>;

  constructor(options: { stdout: Stream; stderr: Stream; env: Env; json: boolean; jq?: JqFilter }) {
    const { env, json } = options;
    this.jq = options.jq;
    this.stdout = options.stdout;
    this.stderr = options.stderr;
    this.interactive = Boolean(this.stdout.isTTY) && !isCI(env) && !json;
    this.color = !json && colorFor(this.stderr, env);
    this.style = palette(this.color);
  }

  /** Writes a line of data to stdout. */
  data(line: string): void {
    const safe = safeLine(line);
    this.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
  }

  /**
   * Undefined while stdout takes more; while its reader is behind (write() said false), a promise
   * that resolves once it drained. A stream reader stops reading until then: memory stays bounded
   * by stdout's buffer however slow its reader (`mkt logs tail | less`, a paused pipe).
   */
  backlog(): Promise<void> | undefined {
    // Lines waiting for --jq count as output not yet taken.
    if (this.jqPending > 64) return this.jqQueue;
    return drained(this.stdout);
  }

  /** Writes a JSON document to stdout (the one way mkt prints JSON: jsonText), or what --jq makes of it. */
  async json(value: unknown): Promise<void> {
    if (!this.jq) {
      this.stdout.write(jsonText(value));
      return;
    }
    const { text, error } = await this.jq.apply(value);
    this.stdout.write(text);
    if (error) throw error;
  }

  /** The --jq runs of stream lines not yet printed (jsonLine), in order. */
  private jqQueue: Promise<void> = Promise.resolve();
  private jqPending = 0;

  /**
   * One line of a JSON-lines stream (listen, logs tail) handed to `print` as it goes to stdout: the
   * line itself at once, or what --jq makes of it, in order (nothing when it printed nothing; a
   * failure of the expression is a warning, and the stream goes on).
   */
  jsonLine(line: string, print: (text: string) => void): void {
    const jq = this.jq;
    if (!jq) return print(line);
    this.jqPending++;
    this.jqQueue = this.jqQueue
      .then(() => jq.apply(JSON.parse(line)))
      .then(
        ({ text, error }) => {
          if (error) this.warn(error.message);
          if (text) print(text.slice(0, -1));
        },
        (err: Error) => this.warn(err.message),
      )
      .finally(() => this.jqPending--);
  }

  /** A progress or information line on stderr. */
  info(message: string): void {
    this.stderr.write(`${safeLine(message)}\n`);
  }

  /** The same notice only once per process (for example, "credentials are kept in a file"). */
  noticeOnce(message: string): void {
    if (this.said.has(message)) return;
    this.said.add(message);
    this.warn(message);
  }

  success(message: string): void {
    this.stderr.write(`${this.paint('green', '✓')} ${safeLine(message)}\n`);
  }

  warn(message: string): void {
    this.stderr.write(`${this.paint('yellow', '!')} ${safeLine(message)}\n`);
  }

  /** Bold on a colour terminal, plain otherwise. */
  bold(text: string): string {
    return this.paint('bold', text);
  }

  dim(text: string): string {
    return this.paint('dim', text);
  }

  paint(style: Style, text: string): string {
    return this.style(style, text);
  }

  /** Rows as an aligned table on a terminal, tab-separated without a header otherwise (for cut and awk). */
  table<T>(rows: T[], columns: Column<T>[]): void {
    const cells = rows.map((row) => columns.map((c) => cell(c.get(row))));
    if (!this.interactive) {
      for (const line of cells) this.data(line.map((v) => v.replace(/[\t\n]/g, ' ')).join('\t'));
      return;
    }
    if (rows.length === 0) {
      this.info('(none)');
      return;
    }
    const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((line) => line[i]!.length)));
    const format = (line: string[]) =>
      line
        .map((v, i) => v.padEnd(widths[i]!))
        .join('  ')
        .trimEnd();
    this.data(this.bold(format(columns.map((c) => c.header.toUpperCase()))));
    for (const line of cells) this.data(format(line));
  }

  /** Label: value lines for one object (a TTY summary). */
  fields(pairs: Array<[string, unknown]>): void {
    const width = Math.max(...pairs.map(([label]) => label.length));
    for (const [label, value] of pairs)
      this.data(`${this.dim(`${label}:`.padEnd(width + 1))} ${cell(value)}`);
  }
}

/** A JSON document as mkt prints it: two-space indented, one newline at the end. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function cell(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  if (Array.isArray(value)) return value.length ? safeText(value.map(String).join(',')) : '-';
  if (typeof value === 'object') return safeText(JSON.stringify(value));
  return safeText(String(value));
}
