import type { Output } from '../../output/output.js';
import { oneLine } from '../../output/safe-text.js';
import type { CaseResult } from './grade.js';
import type { HandlerReport } from './index.js';

/** The report as a table (stdout) and a summary (stderr); the handler's answers escaped and bounded. */
export function render(out: Output, report: HandlerReport): void {
  out.info(`Graded ${report.target} with the signing secret from ${report.secret_source}.`);
  out.table(report.cases, [
    { header: 'case', get: (c) => c.id },
    { header: 'expected', get: (c) => c.expected },
    { header: 'got', get: got },
    { header: 'time', get: (c) => `${time(c.ms)}${c.time === 'slow' ? ' slow' : ''}` },
    { header: 'verdict', get: (c) => (c.verdict === 'pass' ? 'pass' : 'FAIL') },
    { header: 'fix', get: (c) => c.fix ?? '' },
  ]);
  if (report.ok) out.success(`All ${report.cases.length} cases passed.`);
  else out.info(`How to write a handler that passes: ${report.guide}.`);
}

/** The statuses, and for a failed case the first words of the handler's answer. */
function got(c: CaseResult): string {
  const said = c.verdict === 'fail' ? oneLine(c.answer, 40) : null;
  return said ? `${c.got} "${said}"` : c.got;
}

function time(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
