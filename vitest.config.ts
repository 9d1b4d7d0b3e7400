import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Each file in a fresh process, chosen: files start servers and sandboxes and set process-wide
    // state (this also keeps vitest's advice to share workers out of the summary CI ends with).
    isolate: true,
  },
});
