import { readFileSync } from 'node:fs';

/** The shell commands in a README section's ```sh blocks, one a line, their `# …` comments removed. */
export function readmeCommands(readmePath: string, section: string): string[] {
  const text = readFileSync(readmePath, 'utf8');
  const start = text.indexOf(`\n## ${section}\n`);
  if (start === -1) throw new Error(`README has no section "${section}"`);
  const end = text.indexOf('\n## ', start + 1);
  const body = text.slice(start, end === -1 ? undefined : end);
  return [...body.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((block) =>
    block[1]!
      .split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
}
