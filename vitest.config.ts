import { defineConfig } from 'vitest/config';
import { SlowFirst } from './test/support/run-order.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every sandbox answer a test receives is checked against the OpenAPI document (test/support/check-answers.ts).
    setupFiles: ['test/support/check-answers.ts'],
    // The document those answers are checked against, made once a run (test/support/answers-document.ts).
    globalSetup: ['test/support/answers-document.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Each file in a fresh process, chosen: files start servers and sandboxes and set process-wide
    // state (this also keeps vitest's advice to share workers out of the summary CI ends with).
    isolate: true,
    // Two files at a time on CI's two cores (vitest's default there is one): most of a file's time
    // is spent waiting for the processes, servers, browsers and disks it drives, not computing. Three
    // were slower (vitest 613 s against 550 s for two, 2026-11-29): more CPU for the same work.
    maxWorkers: 2,
    // The slow files first, and the ten slowest printed before the summary (test/support/run-order.ts).
    sequence: { sequencer: SlowFirst },
    reporters: ['./test/support/run-order.ts'],
  },
});
