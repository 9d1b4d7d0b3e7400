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
    // Three files at a time on CI's two cores (vitest's default there is one): most of a file's time
    // is spent waiting for the processes, servers, browsers and disks it drives, not computing. On
    // fresh clones of the same code, alone: vitest 564 s with three against 641 s with two (whole runs
    // 10 min 35 s and 12 min 15 s, 2026-11-29, evening); earlier in the day, before the event bursts
    // went over node:http, three were slower (613 s against 550 s).
    maxWorkers: 3,
    // The slow files first, and the ten slowest printed before the summary (test/support/run-order.ts).
    sequence: { sequencer: SlowFirst },
    reporters: ['./test/support/run-order.ts'],
  },
});
