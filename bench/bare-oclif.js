// A CLI built on oclif as oclif's generator makes one (CommonJS, `execute()` in bin/run.js, the
// manifest written by `oclif manifest`), with the project's own @oclif/core and nothing of mkt: the
// floor that keeps the whole promise of a command (oclif's parser, help and errors, then its work).
// bench/startup.js runs its two commands: `whoami --json` makes the GET mkt's whoami makes (the
// request's code given by the bench), `hello` prints a line.
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Writes the CLI into DIR (run by NODE for its manifest); returns its bin/run.js. */
export function bareOclif(dir, node, get) {
  mkdirSync(join(dir, 'bin'), { recursive: true });
  mkdirSync(join(dir, 'dist', 'commands'), { recursive: true });
  symlinkSync(fileURLToPath(new URL('../node_modules', import.meta.url)), join(dir, 'node_modules'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'bare',
      version: '1.0.0',
      type: 'commonjs',
      files: ['bin', 'dist', 'oclif.manifest.json'],
      oclif: { bin: 'bare', dirname: 'bare', commands: './dist/commands', topicSeparator: ' ' },
    }),
  );
  const bin = join(dir, 'bin', 'run.js');
  writeFileSync(bin, "require('@oclif/core').execute({ dir: __dirname });\n");
  const command = (name, body) =>
    writeFileSync(
      join(dir, 'dist', 'commands', `${name}.js`),
      `const { Command, Flags } = require('@oclif/core');
class C extends Command {
  static enableJsonFlag = true;
  static flags = { profile: Flags.string() };
  async run() {
    await this.parse(C);
    ${body}
  }
}
module.exports = { default: C };
`,
    );
  const answer =
    "(res) => { const chunks = []; res.on('data', (c) => chunks.push(c)).on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString()))); }";
  command(
    'whoami',
    `return new Promise((resolve, reject) => ${get(answer).replace(/;$/, '')}.on('error', reject));`,
  );
  command('hello', "this.log('hello');");
  const oclif = createRequire(import.meta.url).resolve('oclif/bin/run.js');
  execFileSync(node, [oclif, 'manifest'], { cwd: dir, stdio: 'ignore' });
  return bin;
}
