/** Reading a Prometheus text exposition in tests (the web's /api/metrics, the worker's /metrics). */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  /** the metric names with a `# HELP` line */
  names: Set<string>;
  samples: Sample[];
  /** the sum of the samples of `name` whose labels include `labels` (undefined: no such sample) */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** the one sample of `name` with exactly these labels (undefined: no such series) */
  series(name: string, labels: Record<string, string>): number | undefined;
}

/** Prometheus text exposition → samples (label values without escapes are enough here). */
export function parseExposition(text: string): Scrape {
  const names = new Set<string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const help = /^# HELP (\S+) /.exec(line);
    if (help) names.add(help[1]!);
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable exposition line: ${line}`);
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const sameLabels = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);
  return {
    names,
    samples,
    value(name, labels = {}) {
      const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
      return hits.length ? hits.reduce((a, s) => a + s.value, 0) : undefined;
    },
    series(name, labels) {
      return samples.find((s) => s.name === name && sameLabels(s.labels, labels))?.value;
    },
  };
}
