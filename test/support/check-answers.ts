import { afterAll } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Every test file (vitest.config.ts, setupFiles): each sandbox it starts, in this process
// (startTestSandbox) or as `mkt sandbox start/exec` (runMkt passes the variable on), checks each answer
// against the OpenAPI document (MKT_SANDBOX_CHECK_ANSWERS, src/sandbox/openapi/check-answers.ts) and
// appends each mismatch to one file; after the file's tests, a mismatch fails the file.
// MKT_SANDBOX_CHECK_ANSWERS=0 in the runner's environment turns it off.

const folder = mkdtempSync(join(tmpdir(), 'mkt-answers-'));
const file = join(folder, 'answers-outside-openapi.jsonl');
if (process.env.MKT_SANDBOX_CHECK_ANSWERS !== '0') process.env.MKT_SANDBOX_CHECK_ANSWERS = file;

/** The mismatches recorded so far in this file (one string each), and forgets them. */
export function takeAnswerMismatches(): string[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  rmSync(file, { force: true });
  return text.split('\n').filter((line) => line !== '');
}

afterAll(() => {
  const found = takeAnswerMismatches();
  rmSync(folder, { recursive: true, force: true });
  if (found.length > 0) {
    // One line per kind of mismatch: array positions and the path's ids are left out.
    const kinds = new Map<string, number>();
    for (const line of found) {
      const m = JSON.parse(line) as { operation?: string; status: number; problem: string };
      const kind = `${m.operation} ${m.status}: ${m.problem.replace(/\/\d+(?=\/|\s)/g, '/*')}`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    const shown = [...kinds].map(([kind, n]) => `${n}x ${kind}`);
    throw new Error(
      `${found.length} sandbox answers outside the OpenAPI document (MKT_SANDBOX_CHECK_ANSWERS), ${kinds.size} kinds:\n${shown.join('\n')}`,
    );
  }
});
