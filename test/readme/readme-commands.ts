import { readFileSync } from 'node:fs';

/** The repository's file at `path` (relative to its root: `README.md`, `docs/webhooks.md`). */
export function docPath(path: string): string {
  return new URL(`../../${path}`, import.meta.url).pathname;
}

/**
 * The text of a section of a Markdown file: from its `# title` or `## title` heading to the next
 * heading of either level.
 */
export function docSection(path: string, title: string): string {
  const text = readFileSync(path, 'utf8');
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const start = new RegExp(`^##? ${escaped}$`, 'm').exec(text);
  if (!start) throw new Error(`${path} has no section "${title}"`);
  const rest = text.slice(start.index + start[0].length);
  const end = /^##? /m.exec(rest);
  return start[0] + (end ? rest.slice(0, end.index) : rest);
}

/** The shell commands in a section's ```sh blocks (also in a list), one a line, their `# …` comments removed. */
export function readmeCommands(path: string, section: string): string[] {
  return [...docSection(path, section).matchAll(/^ *```sh\n([\s\S]*?)^ *```$/gm)].flatMap((block) =>
    block[1]!
      .split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#')),
  );
}
