import type { Writable } from 'node:stream';

type Env = Record<string, string | undefined>;
type Stream = Writable & { isTTY?: boolean; columns?: number };

/** A column of a table: the header and how to read the cell from a row. */
export interface Column<T> {
  header: string;
  get(row: T): unknown;
}

/**
 * Where a command's words go: data on stdout, everything else on stderr. Colour and tables only
 * on a terminal, never under CI, NO_COLOR or --json.
 */
export class Output {
  readonly stdout: Stream;
  readonly stderr: Stream;
  /** stdout is a terminal and nothing asked for machine output. */
  readonly interactive: boolean;
  /** stderr may carry colour. */
  readonly color: boolean;
  private readonly said = new Set<string>();

  constructor(options: { stdout: Stream; stderr: Stream; env: Env; json: boolean }) {
    const { env, json } = options;
    this.stdout = options.stdout;
    this.stderr = options.stderr;
    this.interactive = Boolean(this.stdout.isTTY) && !isCI(env) && !json;
    this.color = !json && colorFor(this.stderr, env);
  }

  /** Writes a line of data to stdout. */
  data(line: string): void {
    this.stdout.write(line.endsWith('\n') ? line : `${line}\n`);
  }

  /** Writes a JSON document to stdout (the one way mkt prints JSON: jsonText). */
  json(value: unknown): void {
    this.stdout.write(jsonText(value));
  }

  /** A progress or information line on stderr. */
  info(message: string): void {
    this.stderr.write(`${message}\n`);
  }

  /** The same notice only once per process (for example, "credentials are kept in a file"). */
  noticeOnce(message: string): void {
    if (this.said.has(message)) return;
    this.said.add(message);
    this.warn(message);
  }

  success(message: string): void {
    this.stderr.write(`${this.paint('32', '✓')} ${message}\n`);
  }

  warn(message: string): void {
    this.stderr.write(`${this.paint('33', '!')} ${message}\n`);
  }

  /** Bold on a colour terminal, plain otherwise. */
  bold(text: string): string {
    return this.paint('1', text);
  }

  dim(text: string): string {
    return this.paint('2', text);
  }

  paint(code: string, text: string): string {
    return this.color ? `\u001b[${code}m${text}\u001b[0m` : text;
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

/** Whether the environment says this is a CI job (`CI` set to anything but "false" or "0"). */
function isCI(env: Env): boolean {
  return Boolean(env.CI) && env.CI !== 'false' && env.CI !== '0';
}

/** The one colour decision: a terminal, not CI, no NO_COLOR, not TERM=dumb. */
export function colorFor(stream: { isTTY?: boolean }, env: Env): boolean {
  return Boolean(stream.isTTY) && !isCI(env) && env.NO_COLOR === undefined && env.TERM !== 'dumb';
}

function cell(value: unknown): string {
  if (value === undefined || value === null || value === '') return '-';
  if (Array.isArray(value)) return value.length ? value.map(String).join(',') : '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
