// The processes `mkt dev` runs side by side, as docker compose and `shopify app dev` do: each line
// they write is shown with the process's name in front, in its colour. A process that exits after it
// ran a while is started again after a backoff (1 s, doubling to 30 s, back to 1 s once it ran 30 s);
// one that exits soon after it started (a start that cannot succeed: a syntax error, a missing
// module) is started again only when a file of the project changes, so its error is shown once.
// stop() ends every process this supervisor started, and nothing else.
import { watch, type FSWatcher } from 'node:fs';
import { copyLinesTo } from '../platform/line-copy.js';
import { spawnChild, type Child, type ProcessMark } from '../platform/processes.js';
import type { Style } from '../output/colour.js';
import type { Output } from '../output/output.js';
import { safeText } from '../output/safe-text.js';

export interface ProcessSpec {
  name: string;
  command: string[];
  cwd?: string;
  env: NodeJS.ProcessEnv;
  style: Style;
  /** Which of its output is shown: everything (default), or only what it writes to stderr. */
  show?: 'all' | 'stderr';
  /**
   * A folder whose changes start it again after an early exit (the project); without one, an early
   * exit is started again with the backoff.
   */
  watch?: string;
}

const BACKOFF_MS = { first: 1_000, max: 30_000, stable: 30_000 };
/** A process that exits within this long of its start failed to start. */
const EARLY_EXIT_MS = 10_000;
/** Folders whose changes are not the project's source. */
const IGNORED = /(^|\/)(node_modules|\.git|\.venv|__pycache__)(\/|$)/;

export class Supervisor {
  private readonly running = new Map<string, Child>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly watchers = new Set<FSWatcher>();
  private stopping = false;

  constructor(
    private readonly out: Output,
    /** Names are padded to this width, so that the lines of every process line up. */
    private readonly width: number,
    /** Told the processes running now each time one starts or ends (to record them). */
    private readonly onRunning: (marks: Record<string, ProcessMark>) => void = () => undefined,
  ) {}

  private told(): void {
    this.onRunning(Object.fromEntries([...this.running].map(([name, child]) => [name, child.mark])));
  }

  /** Starts `spec` and keeps it running until stop(). */
  add(spec: ProcessSpec): void {
    this.start(spec, BACKOFF_MS.first);
  }

  /** One line of a process (or of mkt dev about it) as shown: its name in front, made safe for a terminal. */
  private line(spec: Pick<ProcessSpec, 'name' | 'style'>, line: string): string {
    const label = this.out.paint(spec.style, `${spec.name.padEnd(this.width)} |`);
    return `${label} ${safeText(line)}\n`;
  }

  /** Shows one line of mkt dev about a process. */
  say(spec: Pick<ProcessSpec, 'name' | 'style'>, line: string): void {
    this.out.stdout.write(this.line(spec, line));
  }

  private start(spec: ProcessSpec, backoff: number): void {
    const [command, ...args] = spec.command;
    // Its own process group (killed with mkt dev, src/platform/processes.ts): Ctrl-C reaches mkt dev
    // alone, which then stops each one in order.
    const child = spawnChild(command!, args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const started = Date.now();
    this.running.set(spec.name, child);
    this.told();
    const { stdout, stderr } = child.process;
    if (spec.show === 'stderr') stdout!.resume();
    // Read only as fast as mkt dev's own output takes it, a line at most 16 KiB (src/platform/line-copy.ts).
    for (const stream of spec.show === 'stderr' ? [stderr!] : [stdout!, stderr!])
      void copyLinesTo(stream, this.out.stdout, (line) => this.line(spec, line));
    child.process.on('error', (err) => this.say(spec, `could not start ${command}: ${err.message}`));
    child.process.on('close', (code, signal) => {
      this.running.delete(spec.name);
      this.told();
      if (this.stopping) return;
      const how = signal ? `was stopped by ${signal}` : `exited with code ${code}`;
      const ran = Date.now() - started;
      if (spec.watch && ran < EARLY_EXIT_MS) {
        this.say(
          spec,
          `${how} ${Math.round(ran / 100) / 10} s after it started; it starts again when a file of the project changes.`,
        );
        return this.startOnChange(spec);
      }
      const wait = ran >= BACKOFF_MS.stable ? BACKOFF_MS.first : backoff;
      this.say(spec, `${how}; starting it again in ${wait / 1000} s.`);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!this.stopping) this.start(spec, Math.min(wait * 2, BACKOFF_MS.max));
      }, wait);
      this.timers.add(timer);
    });
  }

  /** Starts `spec` again once a file under its folder changes (the first change after a short pause). */
  private startOnChange(spec: ProcessSpec): void {
    const watcher = watch(spec.watch!, { recursive: true }, (_event, file) => {
      if (file && IGNORED.test(String(file))) return;
      watcher.close();
      this.watchers.delete(watcher);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (this.stopping) return;
        this.say(spec, `${String(file ?? 'a file')} changed: starting it again.`);
        this.start(spec, BACKOFF_MS.first);
      }, 200);
      this.timers.add(timer);
    });
    this.watchers.add(watcher);
  }

  /** Ends every process it started (SIGTERM to its group, SIGKILL after `graceMs`), newest first. */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    for (const w of this.watchers) w.close();
    for (const child of [...this.running.values()].reverse()) await child.stop(graceMs);
  }
}
