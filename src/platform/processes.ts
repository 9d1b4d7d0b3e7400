// The door for PROCESSES mkt starts or signals. It guarantees: a pid is signalled only when it is
// provably the process mkt recorded (its start time from /proc/PID/stat, kept with the pid when it
// was recorded), never because of a word in its command line; a child started with spawnChild is in
// its own process group (unless the caller keeps it in ours, saying why), its group is ended (SIGTERM,
// SIGKILL after a grace) when stop() is called and killed when mkt exits however it exits (a second
// Ctrl-C's process.exit included); a temporary folder made here is removed then too.
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { makeTempFolderSync } from './fs-atomic.js';

/** A process as mkt recorded it: its pid and, where the system tells (Linux), when it started. */
export interface ProcessMark {
  pid: number;
  /** Its start time in clock ticks since boot (/proc/PID/stat, field 22); absent elsewhere. */
  start?: string;
}

/** The start of process `pid` in clock ticks since boot, from /proc (Linux); undefined elsewhere or when gone. */
export function processStartTicks(pid: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ")".
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** When process `pid` started (ms since the epoch), on Linux; undefined elsewhere or when it cannot be read. */
export function processStartMs(pid: number): number | undefined {
  const ticks = Number(processStartTicks(pid));
  try {
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    return Number.isFinite(ticks) && Number.isFinite(boot) ? boot * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/** The mark of process `pid` now (this process's own: markOf(process.pid)), to record beside its pid. */
export function markOf(pid: number): ProcessMark {
  const start = processStartTicks(pid);
  return start === undefined ? { pid } : { pid, start };
}

/** True while process `pid` exists and has not exited (a zombie waiting to be reaped has). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return process.platform !== 'linux';
  }
}

/**
 * True when the process `mark` names is still the one recorded: alive, and (Linux) started at the
 * recorded time. A mark without a start time proves nothing on Linux (false); elsewhere, where the
 * system does not tell, the pid alone is taken.
 */
export function isSameProcess(mark: ProcessMark): boolean {
  if (!Number.isSafeInteger(mark.pid) || mark.pid <= 0 || !pidAlive(mark.pid)) return false;
  if (process.platform !== 'linux') return true;
  return mark.start !== undefined && processStartTicks(mark.pid) === mark.start;
}

/** Sends `signal` to the process `mark` names only when it is provably that process; answers whether it did. */
export function signalProcess(mark: ProcessMark, signal: NodeJS.Signals): boolean {
  if (!isSameProcess(mark)) return false;
  try {
    process.kill(mark.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Ends the process group whose leader `mark` recorded (a child spawnChild started, left running by
 * an mkt that was killed): SIGTERM, then SIGKILL after `graceMs`, only while the leader is provably
 * the recorded process. Answers whether it was there to end.
 */
export async function stopGroupOf(mark: ProcessMark, graceMs = 5_000): Promise<boolean> {
  if (!isSameProcess(mark)) return false;
  try {
    process.kill(-mark.pid, 'SIGTERM');
  } catch {
    return false;
  }
  for (const until = Date.now() + graceMs; Date.now() < until && isSameProcess(mark);)
    await new Promise((resolve) => setTimeout(resolve, 50));
  if (isSameProcess(mark)) {
    try {
      process.kill(-mark.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return true;
}

/** Every process below `pid` (its children, theirs…), from /proc's parent pids; none elsewhere. */
export function descendants(pid: number): number[] {
  if (process.platform !== 'linux') return [];
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const c of parents.get(p) ?? []) {
      found.push(c);
      walk(c);
    }
  };
  walk(pid);
  return found;
}

/** A child mkt started, with how to end it. */
export interface Child {
  process: ChildProcess;
  mark: ProcessMark;
  /** Sends `signal` to its group (or to it alone when kept in ours); false when it is gone. */
  signal(signal: NodeJS.Signals): boolean;
  /** SIGTERM to its group, SIGKILL after `graceMs` (default 5 s); resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Children still running and temporary folders to remove when mkt exits. */
const live = new Set<Child>();
const folders = new Set<string>();
let exitHook = false;

/** node:child_process, loaded by the first start (a command that starts nothing never loads it). */
const childProcess = () => process.getBuiltinModule('node:child_process');

function onExit(): void {
  for (const child of live) child.signal('SIGKILL');
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
}

function hookExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', onExit);
}

/**
 * Starts `command` in its own process group (`ownGroup: false` keeps it in mkt's, so a terminal's
 * Ctrl-C and input reach it as if run directly), tracked: killed with its group when mkt exits.
 */
export function spawnChild(
  command: string,
  args: string[],
  options: SpawnOptions & { ownGroup?: boolean },
): Child {
  const { ownGroup = true, ...rest } = options;
  const proc = childProcess().spawn(command, args, { ...rest, detached: ownGroup });
  const exited = new Promise<void>((resolve) => {
    if (proc.pid === undefined) return resolve();
    proc.once('exit', () => resolve());
  });
  const gone = () => proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined;
  const child: Child = {
    process: proc,
    mark: proc.pid === undefined ? { pid: -1 } : markOf(proc.pid),
    signal(signal) {
      if (gone()) return false;
      // Kept in our group: SIGKILL takes what it started too (found by parent pid), not only it.
      const pids = ownGroup
        ? [-proc.pid!]
        : signal === 'SIGKILL'
          ? [...descendants(proc.pid!), proc.pid!]
          : [proc.pid!];
      let sent = false;
      for (const pid of pids) {
        try {
          process.kill(pid, signal);
          sent = true;
        } catch {
          // gone meanwhile
        }
      }
      return sent;
    },
    async stop(graceMs = 5_000) {
      child.signal('SIGTERM');
      const timer = setTimeout(() => child.signal('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      // The leader has gone; what it started in its group goes with it.
      if (ownGroup) {
        try {
          process.kill(-proc.pid!, 'SIGKILL');
        } catch {
          // none left
        }
      }
    },
  };
  if (proc.pid !== undefined) {
    live.add(child);
    hookExit();
    void exited.then(() => live.delete(child));
  }
  proc.once('error', () => live.delete(child));
  return child;
}

/**
 * Starts `command` to outlive mkt (a background check, a detached sandbox): its own session, not
 * tracked, not waited for. Answers the child and its mark (to record and signal later).
 */
export function spawnDetached(
  command: string,
  args: string[],
  options: Pick<SpawnOptions, 'env' | 'stdio' | 'cwd'>,
): { process: ChildProcess; mark: ProcessMark } {
  const proc = childProcess().spawn(command, args, { ...options, detached: true });
  return { process: proc, mark: proc.pid === undefined ? { pid: -1 } : markOf(proc.pid) };
}

/** A new private temporary folder, removed by remove() or, at the latest, when mkt exits. */
export function tempFolder(prefix: string): { path: string; remove(): void } {
  const path = makeTempFolderSync(prefix);
  folders.add(path);
  hookExit();
  return {
    path,
    remove() {
      folders.delete(path);
      rmSync(path, { recursive: true, force: true });
    },
  };
}
