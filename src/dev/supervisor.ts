// The processes `mkt dev` runs side by side, as docker compose and `shopify app dev` do: each line
// they write is shown with the process's name in front, in its colour; a process that exits is
// started again after a backoff (1 s, doubling to 30 s, back to 1 s once it ran 30 s); stop() ends
// every process this supervisor started, and nothing else.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Style } from '../output/colour.js';
import type { Output } from '../output/output.js';
import { safeText } from '../output/safe-text.js';

export interface ProcessSpec {
  name: string;
  command: string[];
  cwd?: string;
  env: NodeJS.ProcessEnv;
  style: Style;
  /** Started again when it exits (default true). */
  restart?: boolean;
}

const BACKOFF_MS = { first: 1_000, max: 30_000, stable: 30_000 };

export class Supervisor {
  private readonly running = new Map<string, ChildProcess>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopping = false;

  constructor(
    private readonly out: Output,
    /** Names are padded to this width, so that the lines of every process line up. */
    private readonly width: number,
  ) {}

  /** Starts `spec` and keeps it running until stop(). */
  add(spec: ProcessSpec): void {
    this.start(spec, BACKOFF_MS.first);
  }

  private say(spec: Pick<ProcessSpec, 'name' | 'style'>, line: string): void {
    const label = this.out.paint(spec.style, `${spec.name.padEnd(this.width)} |`);
    this.out.stdout.write(`${label} ${safeText(line)}\n`);
  }

  private start(spec: ProcessSpec, backoff: number): void {
    const [command, ...args] = spec.command;
    // Its own process group: Ctrl-C reaches mkt dev alone, which then stops each one in order.
    const child = spawn(command!, args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const started = Date.now();
    this.running.set(spec.name, child);
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => this.say(spec, line));
    }
    child.on('error', (err) => this.say(spec, `could not start ${command}: ${err.message}`));
    child.on('close', (code, signal) => {
      this.running.delete(spec.name);
      if (this.stopping) return;
      const how = signal ? `was stopped by ${signal}` : `exited with code ${code}`;
      if (spec.restart === false) return this.say(spec, `${how}.`);
      const wait = Date.now() - started >= BACKOFF_MS.stable ? BACKOFF_MS.first : backoff;
      this.say(spec, `${how}; starting it again in ${wait / 1000} s.`);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!this.stopping) this.start(spec, Math.min(wait * 2, BACKOFF_MS.max));
      }, wait);
      this.timers.add(timer);
    });
  }

  /** Ends every process it started (SIGTERM to its group, SIGKILL after `graceMs`), newest first. */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    for (const child of [...this.running.values()].reverse()) {
      const closed = new Promise((resolve) => child.once('close', resolve));
      signalGroup(child, 'SIGTERM');
      const kill = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
      await closed;
      clearTimeout(kill);
    }
  }
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}
