import { describe, expect, it } from 'vitest';
import { eachOf, useOnePath } from '../support/one-path.js';

// The bundled CLI's help screens against oclif run the plain way (test/commands/one-path.test.ts):
// the root's and each topic's here, each command's in one-path-command-help.test.ts.

const one = useOnePath();

describe('the bundled CLI is oclif unchanged', () => {
  it('prints the root and every topic help screen the same', async () => {
    const ids = Object.keys(one.manifest.commands).filter((id) => !one.manifest.commands[id]!.hidden);
    const topics = [...new Set(ids.filter((id) => id.includes(':')).map((id) => id.split(':')[0]!))];
    const screens = [[], ['--help'], ['help'], ['help', 'apps', 'list'], ['-h'], ['--version']];
    for (const topic of topics) screens.push([topic], [topic, '--help']);
    await eachOf(screens, async (args) => {
      const r = await one.expectSame(args);
      expect(r.stdout + r.stderr, args.join(' ')).not.toBe('');
    });
  }, 600_000);
});
