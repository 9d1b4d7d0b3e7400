import { describe, expect, it } from 'vitest';
import { eachOf, useOnePath } from '../support/one-path.js';

// Each command's help screen, bundled and plain (test/commands/one-path.test.ts).

const one = useOnePath();

describe('the bundled CLI is oclif unchanged', () => {
  it("prints every command's help screen the same", async () => {
    const ids = Object.keys(one.manifest.commands).filter((id) => !one.manifest.commands[id]!.hidden);
    await eachOf(
      ids.map((id) => [...id.split(':'), '--help']),
      async (args) => {
        const r = await one.expectSame(args);
        expect(r.stdout + r.stderr, args.join(' ')).not.toBe('');
      },
    );
  }, 600_000);
});
