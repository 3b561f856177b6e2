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

export function counter<L extends string = string>(name: string, help: string, labelNames: L[] = []) {
  return getOrCreate(name, () => new client.Counter<L>({ name, help, labelNames }));
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
