import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Writes one JSON line per test file to the file CERTWRIGHT_TEST_TIMINGS names: its project, its
 * path and the seconds it held a worker (import and collection, hooks and tests), which is what
 * the run's wall time is made of. `.ci/run` prints the slowest files from it
 * (scripts/ci-report.mjs); docs/development.md explains the figures.
 */
export default class TestTimingsReporter implements Reporter {
  private readonly out = process.env.CERTWRIGHT_TEST_TIMINGS;

  onTestModuleEnd(module: TestModule): void {
    if (!this.out) return;
    const d = module.diagnostic();
    const ms =
      d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
    const line = {
      project: module.project.name,
      file: relative(process.cwd(), module.moduleId),
      seconds: Math.round(ms) / 1000,
      collect_seconds: Math.round(d.collectDuration) / 1000,
      state: module.state(),
    };
    appendFileSync(this.out, `${JSON.stringify(line)}\n`);
  }
}
