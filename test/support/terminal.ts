import { spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { MKT_BIN, baseEnv, type MktResult } from './cli.js';

/** A command line typed into a terminal (a real pseudo-terminal from util-linux `script`). */
export interface Terminal {
  /** Everything the terminal showed so far, control sequences removed. */
  screen(): string;
  /** The same, as the terminal received it (control sequences kept). */
  raw(): string;
  /** Resolves with the first match of `pattern` on the screen; rejects if the command ends first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** Types text, as a person at the keyboard (`\r` is Enter, `\u0003` Ctrl-C). */
  type(text: string): void;
  /** The exit code of the command line. */
  exit: Promise<number | null>;
}

/**
 * Types `line` into bash on a pseudo-terminal in `cwd`; `answers` are typed when their prompt shows.
 * Killed after `timeoutMs`.
 */
export function typeInTerminal(
  line: string,
  options: {
    cwd?: string;
    env: Record<string, string>;
    /** Prompts (text or a pattern) and what to type once each shows, in order. */
    answers?: Array<[string | RegExp, string]>;
    timeoutMs?: number;
  },
): Terminal {
  const child = spawn('script', ['-qefc', line, '/dev/null'], {
    cwd: options.cwd,
    env: { ...options.env, SHELL: '/bin/bash' },
    stdio: 'pipe',
  });
  let raw = '';
  const screen = () => stripVTControlCharacters(raw);
  const pending = [...(options.answers ?? [])];
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    raw += d;
    const next = pending[0];
    if (next && (typeof next[0] === 'string' ? screen().includes(next[0]) : next[0].test(screen()))) {
      pending.shift();
      child.stdin.write(next[1]);
    }
    for (const listener of listeners) listener();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (raw += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  let ended = false;
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      ended = true;
      for (const listener of listeners) listener();
      resolve(code);
    }),
  );
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(screen());
        if (m) {
          listeners.delete(check);
          resolve(m);
        } else if (ended) {
          listeners.delete(check);
          reject(new Error(`"${line}" ended before showing ${pattern}:\n${screen()}`));
        }
      };
      listeners.add(check);
      check();
    });
  return { screen, raw: () => raw, waitFor, type: (text) => child.stdin.write(text), exit };
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `mkt ARGS` on a real pseudo-terminal (util-linux `script`), waits until the output shows
 * `waitFor`, then types `answer`. stdout and stderr arrive mixed, as on a terminal.
 */
export async function runMktInTty(
  args: string[],
  configDir: string,
  options: { env?: Record<string, string>; waitFor: string; answer: string; timeoutMs?: number },
): Promise<MktResult> {
  const terminal = typeInTerminal([process.execPath, MKT_BIN, ...args].map(quote).join(' '), {
    env: { ...baseEnv(configDir), ...options.env, TERM: 'dumb', NO_COLOR: '1' },
    answers: [[options.waitFor, options.answer]],
    timeoutMs: options.timeoutMs ?? 15_000,
  });
  const code = await terminal.exit;
  return { code, signal: null, stdout: terminal.raw(), stderr: '' };
}
