import client from 'prom-client';

/**
 * One prom-client registry per process. Contexts declare their metrics with `counter`/`gauge`/
 * `histogram` below; asking twice for one name returns the same metric (modules may be imported by
 * both web and worker, and vitest re-imports modules).
 */
export const registry = client.register;

function getOrCreate<T>(name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

/**
 * The values of a label that the composition root names at start-up (every job, every consumer group,
 * every outbox): platform declares the label, the running system says what it holds.
 */
export interface RegisteredLabelValues { readonly registered: RegisteredLabelSet }
export type RegisteredLabelSet = 'job' | 'consumer' | 'outbox';
export const registeredLabel = (set: RegisteredLabelSet): RegisteredLabelValues => ({ registered: set });

/** The closed set of values of every label of a counter (its series that exist from the start). */
export type KnownLabelValues<L extends string> = { readonly [K in L]: readonly string[] | RegisteredLabelValues };

/** name → the known label values a labelled counter declared (the metrics tests read it). */
export const knownCounterLabels = new Map<string, KnownLabelValues<string>>();

const registeredSets = new Map<RegisteredLabelSet, readonly string[]>();

/**
 * The composition root names the values of a registered label set; every counter declared with it gets
 * its series at 0 (now, or when it is declared later).
 */
export function registerLabelValues(set: RegisteredLabelSet, values: readonly string[]): void {
  registeredSets.set(set, values);
  for (const [name, known] of knownCounterLabels) {
    if (!Object.values(known).some((v) => !Array.isArray(v) && (v as RegisteredLabelValues).registered === set)) continue;
    const c = registry.getSingleMetric(name) as client.Counter<string> | undefined;
    for (const labels of labelCombinations(known)) c?.inc(labels, 0);
  }
}

/** Every combination of the known label values (the cartesian product); a registered set not named yet has none. */
export function labelCombinations<L extends string>(known: KnownLabelValues<L>): Record<L, string>[] {
  let combos: Record<string, string>[] = [{}];
  for (const [label, v] of Object.entries(known) as [string, readonly string[] | RegisteredLabelValues][]) {
    const values = Array.isArray(v) ? v : registeredSets.get((v as RegisteredLabelValues).registered) ?? [];
    combos = combos.flatMap((c) => values.map((value) => ({ ...c, [label]: value })));
  }
  return combos as Record<L, string>[];
}

/**
 * A counter. A labelled one names the known values of its labels: each combination is a series at 0
 * from the start, so `increase()` and `rate()` see the first increment after a restart (a series that
 * appears with 1 has no earlier sample to rise from, and an alert on it stays silent). Values outside
 * the sets can still be counted (an error code first seen), they just start absent.
 */
export function counter<L extends string = string>(name: string, help: string, labelNames: L[] = [], known?: KnownLabelValues<L>) {
  return getOrCreate(name, () => {
    const c = new client.Counter<L>({ name, help, labelNames });
    if (known) {
      knownCounterLabels.set(name, known);
      for (const labels of labelCombinations(known)) c.inc(labels as client.LabelValues<L>, 0);
    }
    return c;
  });
}
export function gauge<L extends string = string>(
  name: string,
  help: string,
  labelNames: L[] = [],
  collect?: (this: client.Gauge<L>) => Promise<void> | void,
) {
  return getOrCreate(name, () => new client.Gauge<L>({ name, help, labelNames, ...(collect ? { collect } : {}) }));
}
export function histogram<L extends string = string>(name: string, help: string, labelNames: L[] = [], buckets?: number[]) {
  return getOrCreate(name, () => new client.Histogram<L>({ name, help, labelNames, ...(buckets ? { buckets } : {}) }));
}

let defaultsStarted = false;
export function collectProcessMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  client.collectDefaultMetrics({ register: registry });
}

export async function renderMetrics(): Promise<{ body: string; contentType: string }> {
  return { body: await registry.metrics(), contentType: registry.contentType };
}
