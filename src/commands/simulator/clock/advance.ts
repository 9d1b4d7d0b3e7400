import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../base-command.js';
import { UsageError } from '../../../errors.js';
import { arg } from '../../../flags.js';

/** On a terminal, an advance longer than this goes in steps of it, with progress between them. */
const STEP_S = 7 * 86_400;
/** On a terminal, more transitions than this are summed up rather than listed. */
const LIST_AT_MOST = 200;

export default class SimulatorClockAdvance extends BaseCommand<typeof SimulatorClockAdvance> {
  static summary =
    'Move business time forward; every renewal, retry and expiry in between happens, in order.';
  static description =
    'Prints each transition (and the events it sent) in time order; on a terminal a long advance shows its progress and ends with a summary by transition and event. --json lists them all. Time never goes back.';
  static examples = [
    '<%= config.bin %> simulator clock advance 31d',
    '<%= config.bin %> simulator clock advance 1mo',
    '<%= config.bin %> simulator clock advance 1y',
    '<%= config.bin %> simulator clock advance 36h --json',
    '<%= config.bin %> simulator clock advance --to 2027-01-01T00:00:00Z',
  ];
  static enableJsonFlag = true;
  static args = {
    duration: arg({ description: 'how far: 1y, 1mo (calendar), 2w, 31d, 36h, 90m, 1d12h' }),
  };
  static flags = {
    to: Flags.string({ description: 'advance to this ISO 8601 time instead (later than now)' }),
  };

  async run() {
    const { duration } = this.args;
    const { to } = this.flags;
    if ((duration === undefined) === (to === undefined)) {
      throw new UsageError('Say how far to move the clock: a duration (31d) or --to TIME.', {
        code: 'duration_required',
        hints: ['mkt simulator clock advance 31d'],
      });
    }
    const clock = await import('../../../simulator/clock.js');
    const parsed = duration === undefined ? undefined : clock.parseDuration(duration);
    const deps = await this.deps();
    // Calendar months and years count from business time now.
    const from = parsed?.months ? Date.parse((await clock.showClock(deps)).now) : 0;
    const seconds = parsed && clock.durationFrom(from, parsed);
    const { out } = deps;
    const progress = out.interactive && seconds !== undefined && seconds > STEP_S;
    let listed = 0;
    const result = await clock.moveBusinessTime(deps, {
      seconds,
      to,
      stepSeconds: progress ? STEP_S : undefined,
      onStep: (step, done) => {
        if (deps.json) return;
        for (const t of step.transitions ?? []) {
          if (out.interactive && listed >= LIST_AT_MOST) break;
          for (const line of clock.transitionLines(t)) out.data(line);
          listed += 1;
        }
        if (progress) out.info(out.dim(`… ${step.now} (${Math.round(done * 100)} %)`));
      },
    });
    if (!deps.json) {
      const n = result.transitions.length;
      if (out.interactive && n > listed) out.info(`(${n - listed} more transitions; --json lists them all)`);
      if (progress || n > LIST_AT_MOST) {
        const sums = clock.summarize(result.transitions);
        const pairs = [
          ...Object.entries(sums.transitions),
          ...Object.entries(sums.events).map(([e, c]) => [`event ${e}`, c] as const),
        ];
        for (const [what, count] of pairs) out.info(`  ${String(count).padStart(7)}  ${what}`);
      }
      out.success(`Business time is now ${result.now} (${n} transition${n === 1 ? '' : 's'}).`);
    }
    return result;
  }
}
