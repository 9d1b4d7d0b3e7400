// How the suite runs on CI's two cores (vitest.config.ts): the files known to take longest start
// first, so that none of them is left running alone at the end; and, at the end of the run, the ten
// slowest files, printed just before vitest's own summary (which stays the last thing printed).
import { BaseSequencer, DefaultReporter, type TestModule, type TestSpecification } from 'vitest/node';

/** The slowest files of a full run, slowest first (the list CI prints at the end; keep it current). */
export const SLOW_FIRST = [
  'test/package/standalone.test.ts',
  'test/init/walk.test.ts',
  'test/package/installed.test.ts',
  'test/commands/one-path-usage.test.ts',
  'test/sandbox/durability.test.ts',
  'test/commands/one-path-command-help.test.ts',
  'test/webhooks/handler-test.test.ts',
  'test/console/browser.test.ts',
  'test/sandbox/slow-readers.test.ts',
  'test/sandbox/persistence.test.ts',
  'test/readme/readme.test.ts',
  'test/init/dev.test.ts',
  'test/openapi/fuzz.test.ts',
  'test/auth/accounts.test.ts',
  'test/auth/login.test.ts',
  'test/commands/first-hour-round4.test.ts',
  'test/commands/first-hour-round3.test.ts',
  'test/commands/one-path.test.ts',
  'test/lifecycle/commands.test.ts',
  'test/openapi/generated-clients.test.ts',
  'test/trust/parallel-writers.test.ts',
  'test/commands/one-path-help.test.ts',
  'test/console/no-webhook-url.test.ts',
  'test/trust/jq-expression.test.ts',
  'test/lifecycle/year.test.ts',
  'test/sandbox/exec.test.ts',
  'test/webhooks/faults.test.ts',
];

/** vitest's order (larger files first on a fresh clone), with the known slow files before the rest. */
export class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const at = SLOW_FIRST.findIndex((path) => spec.moduleId.replaceAll('\\', '/').endsWith(path));
      return at < 0 ? SLOW_FIRST.length : at;
    };
    return sorted
      .map((spec, at) => ({ spec, at, rank: rank(spec) }))
      .sort((a, b) => a.rank - b.rank || a.at - b.at)
      .map(({ spec }) => spec);
  }
}

/** The default reporter, with the ten slowest files (and each one's slowest test) before its summary. */
export default class SlowFilesReporter extends DefaultReporter {
  override onTestRunEnd(...args: Parameters<DefaultReporter['onTestRunEnd']>): void {
    const [modules] = args;
    const rows = modules.map((module: TestModule) => {
      const d = module.diagnostic();
      let slowest: { name: string; ms: number } | undefined;
      for (const test of module.children.allTests()) {
        const ms = test.diagnostic()?.duration ?? 0;
        if (!slowest || ms > slowest.ms) slowest = { name: test.name, ms };
      }
      const ms =
        d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
      return { file: module.relativeModuleId, ms, slowest };
    });
    rows.sort((a, b) => b.ms - a.ms);
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
    const lines = ['', 'The ten slowest test files (setup, import and tests; slowest test of each):'];
    for (const { file, ms, slowest } of rows.slice(0, 10))
      lines.push(
        `${seconds(ms)}  ${file}${slowest ? `  (${seconds(slowest.ms).trim()}: ${slowest.name.slice(0, 70)})` : ''}`,
      );
    this.ctx.logger.log(lines.join('\n'));
    super.onTestRunEnd(...args);
  }
}
