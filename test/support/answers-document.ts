import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxDocument } from '../../src/sandbox/app.js';

// vitest's globalSetup (vitest.config.ts): the sandbox's OpenAPI document, made once a run from the
// source, for every sandbox the run starts to check its answers against (test/support/check-answers.ts,
// MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT), in this process's test files and in the `mkt sandbox start/exec`
// they run alike, instead of each process making it from its router (~0.2 s of CPU each, ~200 a run).
// test/openapi/openapi.test.ts checks that the document a running sandbox serves is this one.
export default function setup(): () => void {
  if (process.env.MKT_SANDBOX_CHECK_ANSWERS === '0') return () => {};
  const folder = mkdtempSync(join(tmpdir(), 'mkt-answers-document-'));
  const file = join(folder, 'openapi.json');
  writeFileSync(file, JSON.stringify(sandboxDocument()), { mode: 0o600 });
  process.env.MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT = file;
  return () => rmSync(folder, { recursive: true, force: true });
}
