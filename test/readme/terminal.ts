import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stripVTControlCharacters } from 'node:util';

/** The shell commands in a README section's ```sh blocks, one a line, their `# …` comments removed. */
export function readmeCommands(readmePath: string, section: string): string[] {
  const text = readFileSync(readmePath, 'utf8');
  const start = text.indexOf(`\n## ${section}\n`);
  if (start === -1) throw new Error(`README has no section "${section}"`);
  const end = text.indexOf('\n## ', start + 1);
  const body = text.slice(start, end === -1 ? undefined : end);
  return [...body.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((block) =>
    block[1]!
      .split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
}

/** A command line typed into a terminal (a real pseudo-terminal from util-linux `script`). */
export interface Terminal {
  /** Everything the terminal showed so far, control sequences removed. */
  screen(): string;
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
    cwd: string;
    env: Record<string, string>;
    answers?: Array<[RegExp, string]>;
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
    if (next && next[0].test(screen())) {
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
  return { screen, waitFor, type: (text) => child.stdin.write(text), exit };
}
