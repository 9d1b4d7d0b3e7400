#!/usr/bin/env node
// Checks the standalone archives in DIR (scripts/pack-standalone.js --all runs it; alone:
// `node scripts/check-standalone.js DIR`) for what can be checked on a Linux x64 machine: each
// Node and keychain binding is in its platform's format (`file`), each Node is the project's version
// (run where it can run, else the version it carries inside), and every archive lists the files the
// linux-x64 one lists. Exits 1 on any difference. (The tests run the linux-x64 archive for real.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const dir = resolve(process.argv[2] ?? 'release');
const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).devDependencies
  .node;
/** What `file` says of a program and of a native module, per target. */
const FORMAT = {
  'linux-x64': [/ELF 64-bit LSB (pie )?executable, x86-64/, /ELF 64-bit LSB shared object, x86-64/],
  'linux-arm64': [
    /ELF 64-bit LSB (pie )?executable, ARM aarch64/,
    /ELF 64-bit LSB shared object, ARM aarch64/,
  ],
  'darwin-x64': [
    /Mach-O 64-bit x86_64 executable/,
    /Mach-O 64-bit x86_64 (bundle|dynamically linked shared library)/,
  ],
  'win32-x64': [/PE32\+ executable \(console\) x86-64/, /PE32\+ executable \(DLL\) .*x86-64/],
};
const sh = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
/** An archive's list with what differs by platform by design named alike (node.exe, the binding). */
const listing = (archive) =>
  sh('tar', ['-tzf', archive])
    .split('\n')
    .filter(Boolean)
    .map((f) =>
      f
        .replace(/^mkt\/lib\/node\.exe$/, 'mkt/lib/node')
        .replace(/@napi-rs\/keyring-[^/]+/, '@napi-rs/keyring-BINDING')
        .replace(/keyring\.[\w-]+\.node$/, 'keyring.BINDING.node'),
    )
    .sort();

let failed = 0;
const say = (ok, line) => {
  if (!ok) failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${line}`);
};
const archives = readdirSync(dir).filter((f) => /^mkt-v.*\.tar\.gz$/.test(f));
const reference = listing(
  join(
    dir,
    archives.find((f) => f.endsWith('-linux-x64.tar.gz')),
  ),
);
for (const name of archives) {
  const target = /-(\w+-\w+)\.tar\.gz$/.exec(name)[1];
  const tmp = mkdtempSync(join(tmpdir(), 'mkt-check-'));
  try {
    sh('tar', [
      '-xzf',
      join(dir, name),
      '-C',
      tmp,
      '--wildcards',
      'mkt/lib/node*',
      'mkt/node_modules/@napi-rs/keyring-*',
    ]);
    const node = join(tmp, 'mkt/lib', target.startsWith('win32') ? 'node.exe' : 'node');
    const scope = join(tmp, 'mkt/node_modules/@napi-rs');
    const bindings = readdirSync(scope);
    const binding = join(
      scope,
      bindings[0],
      readdirSync(join(scope, bindings[0])).find((f) => f.endsWith('.node')) ?? '',
    );
    const [program, module] = FORMAT[target];
    say(
      program.test(sh('file', ['-b', node])),
      `${name}: Node is a ${target} program (${sh('file', ['-b', node]).trim().slice(0, 60)})`,
    );
    say(
      bindings.length === 1 && module.test(sh('file', ['-b', binding])),
      `${name}: one keychain binding, for ${target} (${bindings.join(', ')})`,
    );
    const runs = target === `${process.platform}-${process.arch}`;
    const reported = runs
      ? sh(node, ['--version']).trim()
      : readFileSync(node).includes(`v${version}`) && `v${version}`;
    say(
      reported === `v${version}`,
      `${name}: Node v${version} (${runs ? 'run here' : 'the version it carries; cannot run here'})`,
    );
    const files = listing(join(dir, name));
    const missing = reference.filter((f) => !files.includes(f));
    const extra = files.filter((f) => !reference.includes(f));
    say(
      !missing.length && !extra.length,
      `${name}: lists what the linux-x64 archive lists${missing.length || extra.length ? ` (missing ${missing.slice(0, 5)}; extra ${extra.slice(0, 5)})` : ''}`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
process.exitCode = failed ? 1 : 0;
