import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

// Which runs read one command's entry of the manifest (src/command-manifest.ts): only those where
// oclif, given every command, runs exactly that command. The one-path tests prove the output the same.

const root = fileURLToPath(new URL('../../', import.meta.url));
const boot = createRequire(import.meta.url)(`${root}dist/boot.js`) as {
  commandManifest(args: string[]): string | undefined;
};
const picked = (line: string) => {
  const file = boot.commandManifest(line.split(' ').filter(Boolean));
  return file && basename(file, '.json');
};

describe('one command of the manifest', () => {
  it('is read for a command with its flags and arguments', () => {
    expect(picked('whoami --json')).toBe('whoami');
    expect(picked('config get app')).toBe('config.get');
    expect(picked('apps get --app APP --json')).toBe('apps.get');
    // A command that is also a topic: the longest words that name a command.
    expect(picked('simulator clock advance 1d')).toBe('simulator.clock.advance');
    expect(picked('simulator clock')).toBe('simulator.clock');
    expect(picked('sandbox exec -- ls')).toBe('sandbox.exec');
  });

  it('holds that command alone, as the full manifest has it', () => {
    const file = boot.commandManifest(['config', 'get', 'app'])!;
    const one = JSON.parse(readFileSync(file, 'utf8'));
    const all = JSON.parse(readFileSync(`${root}oclif.manifest.json`, 'utf8'));
    expect(one).toEqual({ ...all, commands: { 'config:get': all.commands['config:get'] } });
  });

  it('is not read for help, autocomplete, topics, or words that are no command', () => {
    for (const line of [
      'whoami --help',
      'whoami -h',
      'help whoami',
      'autocomplete bash',
      'config',
      'simulator',
      'whoam',
      // whoami takes no argument: oclif makes `whoami:extra` of it, an unknown command whose
      // suggestions need every command.
      'whoami extra',
      '--version',
      '',
    ])
      expect(picked(line), line).toBeUndefined();
  });
});
