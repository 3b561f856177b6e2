import type { BenchCase } from '../lib/context';
import type { Metric } from '../lib/report';

const BUDGET_MIB = 300;

/**
 * Peak RSS of the job-runner child (the worker's job registry and consumers loaded, the jobs run by
 * runJobCycle) during the hold-expiration and delisted-retention cases: VmHWM from /proc/<pid>/status,
 * the kernel's high-water mark, cross-checked with the parent's 100 ms VmRSS samples.
 */
export const memoryCase: BenchCase = {
  name: 'memory',
  title: 'worker peak RSS during hold-expiration and delisted-retention',
  dependsOn: ['hold-expiration', 'delisted-retention'],
  async run(ctx) {
    const metrics: Metric[] = [];
    for (const name of ['hold-expiration', 'delisted-retention']) {
      const m = ctx.memory.get(name);
      if (!m) {
        metrics.push({ case: 'memory', metric: `peak RSS during ${name}`, unit: 'MiB', pass: false, note: `${name} did not run or failed` });
        continue;
      }
      const mib = m.vmHWMKiB / 1024;
      metrics.push({
        case: 'memory', metric: `peak RSS during ${name}`, unit: 'MiB', value: mib, budget: `≤ ${BUDGET_MIB} MiB`, pass: mib <= BUDGET_MIB,
        note: `${m.what}: VmHWM ${mib.toFixed(0)} MiB, max sampled VmRSS ${(m.maxSampledRssKiB / 1024).toFixed(0)} MiB`,
      });
    }
    return metrics;
  },
};
