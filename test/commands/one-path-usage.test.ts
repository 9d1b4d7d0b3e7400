import { describe, it } from 'vitest';
import { eachOf, useOnePath } from '../support/one-path.js';
import { useSandbox } from '../support/sandbox.js';

// Every command's usage errors, bundled and plain (test/commands/one-path.test.ts).

const ctx = useSandbox();
const one = useOnePath();

describe('the bundled CLI is oclif unchanged', () => {
  it('gives every command the same usage errors', async () => {
    await eachOf(Object.keys(one.manifest.commands), async (id) => {
      await one.expectSame([...id.split(':'), '--no-such-flag'], { MKT_SITE_URL: ctx.sandbox.siteUrl });
    });
    await one.expectSame(['whoam']);
    await one.expectSame(['apps', 'lsit']);
  }, 600_000);
});
