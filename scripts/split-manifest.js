#!/usr/bin/env node
// A run of one command needs that command's entry of oclif.manifest.json, not all 65 (parsing the
// 180 KB and building every command's and topic's entries took ~9 % of `mkt whoami --json`'s
// instructions: BENCHMARKS.md, issue 51). After `oclif manifest` (npm run build), this writes
// dist/manifests/ID.json, the manifest with that one command, for each command, and
// dist/manifests/index.json: what src/boot.ts (commandManifest) needs to know that oclif, given all
// commands, would run exactly that one for a command line (every command id and the words oclif
// takes as a command name, and which commands take words of their own), and the size of the
// manifest they were split from (a manifest written since by hand is used whole; not its time: npm
// pack gives every file the same).
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync('oclif.manifest.json', 'utf8'));
const info = statSync('oclif.manifest.json');
mkdirSync('dist/manifests', { recursive: true });
const usable = new Set();
const commands = {};
for (const [id, command] of Object.entries(manifest.commands)) {
  writeFileSync(
    `dist/manifests/${id.replaceAll(':', '.')}.json`,
    JSON.stringify({ ...manifest, commands: { [id]: command } }),
  );
  // oclif's collectUsableIds: every id and alias, and each of their leading parts (the topics).
  for (const name of [id, ...(command.aliases ?? []), ...(command.hiddenAliases ?? [])]) {
    const parts = name.split(':');
    for (let i = 1; i <= parts.length; i++) usable.add(parts.slice(0, i).join(':'));
  }
  // What oclif's parser reads after the id: positional arguments, or any words (strict: false).
  commands[id] = command.strict === false || Object.keys(command.args ?? {}).length > 0;
}
writeFileSync(
  'dist/manifests/index.json',
  JSON.stringify({ manifest: info.size, usable: [...usable].sort(), commands }),
);
