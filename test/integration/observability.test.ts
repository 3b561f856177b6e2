import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { parseEnv } from '../../server/main/env';
import { EnvError } from '../../server/platform/env';
import { createCapturingLogger } from '../../server/platform/logger';
import '../../server/main/metric-modules';
import { registry, renderMetrics } from '../../server/platform/metrics';
import { createDatabase } from '../../server/platform/db';
import { OUTBOX_NAMES } from '../../server/main/outboxes';
import { bindOutboxMetrics } from '../../server/platform/outbox/relay';
import { bindCatalogMetrics } from '../../server/catalog/retention-metrics';
import { bindHoldExpirationMetrics, unbindHoldExpirationMetrics } from '../../server/chessboard/metrics';
import { contextFromHeaders, linkFromHeaders, startTracing, traceHeaders, withSpan, type Tracing } from '../../server/platform/tracing';

/**
 * The operability deliverable without infrastructure: every metric the specs name exists with its
 * labels; docs/operations.md lists every metric; the alert rules pass promtool (syntax and unit tests of the
 * expressions) and, like the Grafana dashboard, name only metrics the code defines; the OTEL settings;
 * the tracing helpers (traceparent in, parent span out) with an in-memory span exporter.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const ALERTS_FILE = path.join(ROOT, 'observability/prometheus/alerts.yml');
const DASHBOARD_FILE = path.join(ROOT, 'observability/grafana/pin-booking-dashboard.json');

interface RegisteredMetric {
  name: string;
  type: string;
  help: string;
  labelNames?: string[];
}
const registered = () => registry.getMetricsAsArray() as unknown as RegisteredMetric[];
const byName = () => new Map(registered().map((m) => [m.name, m]));

/**
 * Every metric named in the specs' "Observability" sections (and the issue's lag / liveness metrics),
 * with the label set the code exports. Labels the specs spell out: phase, result, initiated_by.
 */
const SPEC_METRICS: { name: string; type: 'counter' | 'gauge' | 'histogram'; labels: string[]; spec: string }[] = [
  { spec: 'crm-booking-saga', name: 'crm_booking_expiration_items_total', type: 'counter', labels: ['phase'] },
  { spec: 'crm-booking-saga', name: 'crm_booking_cancel_total', type: 'counter', labels: ['result'] },
  { spec: 'crm-booking-saga', name: 'crm_bookings_created_total', type: 'counter', labels: ['initiated_by'] },
  { spec: 'crm-booking-saga', name: 'crm_booking_confirm_total', type: 'counter', labels: ['result'] },
  { spec: 'crm-booking-saga (gauge «застряло в Reserved»)', name: 'crm_bookings_stuck_in_reserved', type: 'gauge', labels: [] },
  { spec: 'crm-booking-saga (time-in-phase)', name: 'crm_booking_saga_phase_duration_seconds', type: 'histogram', labels: ['phase'] },
  { spec: 'crm-booking-saga', name: 'chessboard_crm_hold_mismatch_total', type: 'counter', labels: ['topic'] },
  { spec: 'hold-expiration', name: 'chessboard_property_object_hold_expiration_run_total', type: 'counter', labels: [] },
  { spec: 'hold-expiration', name: 'chessboard_property_object_hold_expiration_cycle_duration_seconds', type: 'histogram', labels: [] },
  { spec: 'hold-expiration', name: 'chessboard_property_object_hold_expiration_items_total', type: 'counter', labels: ['phase'] },
  { spec: 'hold-expiration', name: 'chessboard_property_object_hold_expiration_backlog', type: 'gauge', labels: [] },
  { spec: 'hold-expiration', name: 'chessboard_property_object_hold_expiration_skip_locked_total', type: 'counter', labels: [] },
  { spec: 'hold-expiration', name: 'chessboard_property_object_hold_expiration_errors_total', type: 'counter', labels: [] },
  { spec: 'delisted-retention', name: 'catalog_delisted_retention_run_duration_seconds', type: 'histogram', labels: [] },
  { spec: 'delisted-retention', name: 'catalog_delisted_deleted_property_object_cards_total', type: 'counter', labels: [] },
  { spec: 'delisted-retention', name: 'catalog_delisted_deleted_project_cards_total', type: 'counter', labels: [] },
  { spec: 'delisted-retention', name: 'catalog_delisted_deleted_overrides_total', type: 'counter', labels: [] },
  { spec: 'delisted-retention', name: 'catalog_delisted_retention_batches_processed', type: 'counter', labels: [] },
  { spec: 'delisted-retention (всего и за cutoff)', name: 'catalog_delisted_backlog', type: 'gauge', labels: ['kind', 'scope'] },
  { spec: 'delisted-retention', name: 'catalog_delisted_retention_lock_contention_total', type: 'counter', labels: [] },
  { spec: 'crm-booking-saga (outbox lag)', name: 'pin_outbox_backlog', type: 'gauge', labels: ['outbox'] },
  { spec: 'crm-booking-saga (outbox lag)', name: 'pin_outbox_oldest_pending_age_seconds', type: 'gauge', labels: ['outbox'] },
  { spec: 'crm-booking-saga (лаг консюмеров), hold-expiration (лаг доставки)', name: 'pin_consumer_lag_messages', type: 'gauge', labels: ['consumer'] },
  { spec: 'crm-booking-saga (лаг консюмеров > 5 мин)', name: 'pin_consumer_processing_delay_seconds', type: 'gauge', labels: ['consumer'] },
  { spec: 'delisted-retention (job не отработал, error-rate)', name: 'pin_job_runs_total', type: 'counter', labels: ['job', 'status'] },
  { spec: 'delisted-retention (job не отработал > 26 ч)', name: 'pin_job_last_success_timestamp_seconds', type: 'gauge', labels: ['job'] },
  { spec: 'issue: HTTP request duration', name: 'pin_http_request_duration_seconds', type: 'histogram', labels: ['procedure', 'status'] },
];

// ------------------------------------------------------------------------------------- PromQL names

const PROMQL_KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'inf', 'nan']);

/** The metric names an expression selects (functions, keywords, label names, durations and numbers left out). */
function metricNamesIn(expr: string): string[] {
  const e = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // string literals
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // label lists
    .replace(/\$\{?\w+\}?/g, ' ') // Grafana variables
    .replace(/#.*$/gm, ' ');
  const names = new Set<string>();
  for (const m of e.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const before = e[m.index! - 1];
    if (before && /[0-9.]/.test(before)) continue; // 5m, 1e3
    if (e.slice(m.index! + m[0].length).trimStart().startsWith('(')) continue; // a function call
    if (PROMQL_KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

/** A name the code exports, or a histogram's series (_bucket, _sum, _count). */
function unknownMetrics(names: string[]): string[] {
  const known = byName();
  return names.filter((n) => {
    if (known.has(n)) return false;
    const base = n.replace(/_(bucket|sum|count)$/, '');
    return !(base !== n && known.get(base)?.type === 'histogram');
  });
}

describe('PromQL metric-name extraction (used by the checks below)', () => {
  it.each([
    ['sum by (phase) (increase(chessboard_property_object_hold_expiration_items_total[15m])) > 0', ['chessboard_property_object_hold_expiration_items_total']],
    ['time() - max(pin_job_last_success_timestamp_seconds{job="delisted-retention"}) > 26 * 3600', ['pin_job_last_success_timestamp_seconds']],
    ['histogram_quantile(0.95, sum by (le) (rate(x_seconds_bucket[7d]))) > 0.8 * 1200', ['x_seconds_bucket']],
    ['a > 300 and on (consumer) max by (consumer) (b) > 0 unless c offset 5m', ['a', 'b', 'c']],
    ['min_over_time((max by (kind, scope) (delta(g[1d])))[3d:1d]) > 1e3', ['g']],
    ['sum(rate(h_count{status=~"5.."}[$__rate_interval])) by (procedure)', ['h_count']],
  ])('%s', (expr, names) => {
    expect(metricNamesIn(expr).sort()).toEqual([...names].sort());
  });
});

// ------------------------------------------------------------------------------------------- metrics

describe('metrics', () => {
  it.each(SPEC_METRICS.map((m) => [m.name, m] as const))('%s exists with the labels of the spec', (_name, spec) => {
    const metric = byName().get(spec.name);
    expect(metric, `${spec.name} (${spec.spec}) is not registered`).toBeDefined();
    expect(metric!.type).toBe(spec.type);
    expect([...(metric!.labelNames ?? [])].sort()).toEqual([...spec.labels].sort());
    expect(metric!.help.length).toBeGreaterThan(10);
  });

  it('metric-modules.ts registers every metric declared anywhere in server/ (so /api/metrics lists them all)', () => {
    const declared = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(p);
        else if (/\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) {
          const src = fs.readFileSync(p, 'utf8');
          for (const m of src.matchAll(/\b(?:counter|gauge|histogram)(?:<[^>]*>)?\(\s*'([a-z_:][a-z0-9_:]*)'/g)) declared.add(m[1]!);
        }
      }
    };
    walk(path.join(ROOT, 'server'));
    expect(declared.size).toBeGreaterThan(30);
    const names = new Set(registered().map((m) => m.name));
    expect([...declared].filter((n) => !names.has(n))).toEqual([]);
  });

  it('a scrape still answers while the database is unreachable (the database gauges keep their last values)', async () => {
    const down = createDatabase('postgres://nobody@127.0.0.1:1/none', { max: 1, applicationName: 'pin-test-down' });
    bindOutboxMetrics(down, OUTBOX_NAMES);
    bindCatalogMetrics(down);
    bindHoldExpirationMetrics(down, 600_000);
    try {
      const { body } = await renderMetrics();
      for (const name of ['pin_outbox_backlog', 'pin_outbox_oldest_pending_age_seconds', 'catalog_delisted_backlog', 'chessboard_property_object_hold_expiration_backlog']) {
        expect(body).toContain(`# HELP ${name} `);
      }
    } finally {
      bindCatalogMetrics(undefined);
      unbindHoldExpirationMetrics();
      await down.close();
    }
  }, 30_000);

  it('the operations guide lists every metric with each of its labels', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
    const start = readme.indexOf('## Metrics, logs, traces, alerts');
    expect(start).toBeGreaterThan(-1);
    const rest = readme.slice(start + 3);
    const section = rest.slice(0, rest.search(/\n## /) === -1 ? undefined : rest.search(/\n## /));
    const rows = section.split('\n').filter((l) => l.startsWith('| `'));
    for (const m of registered()) {
      const row = rows.find((r) => r.startsWith(`| \`${m.name}\` |`));
      expect(row, `docs/operations.md: no row for ${m.name}`).toBeDefined();
      expect(row).toContain(`| ${m.type} |`);
      for (const label of m.labelNames ?? []) expect(row, `docs/operations.md: ${m.name} label ${label}`).toContain(`\`${label}\``);
    }
    // and no row for a metric that does not exist
    const listed = rows.map((r) => /^\| `([a-z_:]+)` \| (counter|gauge|histogram) \|/.exec(r)?.[1]).filter(Boolean) as string[];
    expect(unknownMetrics(listed)).toEqual([]);
  });
});

// -------------------------------------------------------------------------------------------- alerts

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
const alertRules = (): Rule[] => (YAML.parse(fs.readFileSync(ALERTS_FILE, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

function promtool(args: string[], cwd?: string) {
  const res = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  if (res.error && (res.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new Error('promtool is not installed: apt-get install prometheus (Debian) — the alert rules cannot be checked');
  }
  return res;
}

/** The specs' alerts and the rule that implements each (with the metric it must watch). */
const SPEC_ALERTS: [string, string, string][] = [
  ['crm-booking-saga: объект «завис» в Резерв/Бронь (рост hold-expiration)', 'PinLostCrmReleases', 'chessboard_property_object_hold_expiration_items_total'],
  ['crm-booking-saga: объект «завис» в Резерв/Бронь (held past grace)', 'PinHoldsPastGrace', 'chessboard_property_object_hold_expiration_backlog'],
  ['crm-booking-saga: лаг консюмеров > 5 мин', 'PinConsumerLagHigh', 'pin_consumer_processing_delay_seconds'],
  ['crm-booking-saga: лаг консюмеров (not decreasing)', 'PinConsumerLagNotDecreasing', 'pin_consumer_lag_messages'],
  ['crm-booking-saga: outbox backlog > 1000', 'PinOutboxBacklogHigh', 'pin_outbox_backlog'],
  ['crm-booking-saga: рост hold_mismatch_total', 'PinHoldMismatchRising', 'chessboard_crm_hold_mismatch_total'],
  ['hold-expiration: алерт по errors_total', 'PinHoldExpirationErrors', 'chessboard_property_object_hold_expiration_errors_total'],
  ['delisted-retention: job не отработал > 26 ч', 'PinDelistedRetentionNotRun', 'pin_job_last_success_timestamp_seconds'],
  ['delisted-retention: catalog_delisted_backlog растёт N дней подряд', 'PinDelistedBacklogGrowing', 'catalog_delisted_backlog'],
  ['delisted-retention: error-rate прогонов', 'PinDelistedRetentionFailing', 'pin_job_runs_total'],
  ['delisted-retention: run_duration регулярно близок к MaxRunDuration', 'PinDelistedRetentionNearMaxRunDuration', 'catalog_delisted_retention_run_duration_seconds_bucket'],
  ['jobs: error-rate прогонов (every job)', 'PinJobFailing', 'pin_job_runs_total'],
];

/**
 * promtool unit tests of the expressions: input series, the evaluation time and the alerts expected
 * then (labels beyond the rule's own severity/context). An empty `fires` = must stay silent.
 */
interface AlertCase {
  alert: string;
  name: string;
  interval?: string;
  evaluationInterval?: string;
  series: [string, string][];
  at: string;
  fires: Record<string, string>[];
}
const w = 'instance="worker-1"';
const ALERT_CASES: AlertCase[] = [
  { alert: 'PinLostCrmReleases', name: 'a release by the safety net fires at once, by phase', series: [[`chessboard_property_object_hold_expiration_items_total{phase="reserved",${w}}`, '0x10 1x10']], at: '15m', fires: [{ phase: 'reserved' }] },
  { alert: 'PinLostCrmReleases', name: 'no release, no alert', series: [[`chessboard_property_object_hold_expiration_items_total{phase="reserved",${w}}`, '0x30']], at: '15m', fires: [] },
  { alert: 'PinHoldsPastGrace', name: 'pending during the first 5 min', series: [[`chessboard_property_object_hold_expiration_backlog{${w}}`, '0 1x20'], ['chessboard_property_object_hold_expiration_backlog{instance="web"}', '0 1x20']], at: '4m', fires: [] },
  { alert: 'PinHoldsPastGrace', name: 'fires after 5 min (web and worker report the same gauge: one alert)', series: [[`chessboard_property_object_hold_expiration_backlog{${w}}`, '0 1x20'], ['chessboard_property_object_hold_expiration_backlog{instance="web"}', '0 1x20']], at: '10m', fires: [{}] },
  { alert: 'PinBookingsStuckInReserved', name: 'stuck for 5 min', series: [[`crm_bookings_stuck_in_reserved{${w}}`, '2x10']], at: '7m', fires: [{}] },
  { alert: 'PinConsumerLagHigh', name: 'delay > 5 min with messages behind', series: [[`pin_consumer_processing_delay_seconds{consumer="catalog.card-projection",${w}}`, '400x20'], [`pin_consumer_lag_messages{consumer="catalog.card-projection",${w}}`, '5x20']], at: '10m', fires: [{ consumer: 'catalog.card-projection' }] },
  { alert: 'PinConsumerLagHigh', name: 'an old delay with nothing behind is not lag', series: [[`pin_consumer_processing_delay_seconds{consumer="catalog.card-projection",${w}}`, '400x20'], [`pin_consumer_lag_messages{consumer="catalog.card-projection",${w}}`, '0x20']], at: '10m', fires: [] },
  { alert: 'PinConsumerLagNotDecreasing', name: 'lag stuck above zero', series: [[`pin_consumer_lag_messages{consumer="chessboard.crm-property-object-status",${w}}`, '10x30']], at: '12m', fires: [{ consumer: 'chessboard.crm-property-object-status', instance: 'worker-1' }] },
  { alert: 'PinConsumerLagNotDecreasing', name: 'a shrinking lag is catching up', series: [[`pin_consumer_lag_messages{consumer="chessboard.crm-property-object-status",${w}}`, '100-4x20']], at: '12m', fires: [] },
  { alert: 'PinOutboxBacklogHigh', name: 'more than 1000 unpublished rows', series: [['pin_outbox_backlog{outbox="crm",instance="web"}', '1500x10'], [`pin_outbox_backlog{outbox="crm",${w}}`, '1500x10']], at: '5m', fires: [{ outbox: 'crm' }] },
  { alert: 'PinOutboxBacklogHigh', name: '1000 or fewer is fine', series: [['pin_outbox_backlog{outbox="crm",instance="web"}', '1000x10']], at: '5m', fires: [] },
  { alert: 'PinOutboxEventsDelayed', name: 'the oldest pending row is older than 5 min', series: [['pin_outbox_oldest_pending_age_seconds{outbox="chessboard",instance="web"}', '400x10']], at: '7m', fires: [{ outbox: 'chessboard' }] },
  { alert: 'PinHoldMismatchRising', name: 'a refused CRM event', series: [[`chessboard_crm_hold_mismatch_total{topic="pin.crm.booking-created.v1",${w}}`, '0 0 1 1 1']], at: '4m', fires: [{ topic: 'pin.crm.booking-created.v1' }] },
  { alert: 'PinConsumerDeadLetters', name: 'messages rejected to the DLQ', series: [[`pin_consumer_messages_total{consumer="chessboard.crm-property-object-status",result="rejected",${w}}`, '0 0 2 2']], at: '3m', fires: [{ consumer: 'chessboard.crm-property-object-status', result: 'rejected' }] },
  { alert: 'PinHoldExpirationErrors', name: 'a poison object failing every cycle', series: [[`chessboard_property_object_hold_expiration_errors_total{${w}}`, '0 1 2 3 4']], at: '4m', fires: [{}] },
  { alert: 'PinHoldExpirationErrors', name: 'one error is not systematic', series: [[`chessboard_property_object_hold_expiration_errors_total{${w}}`, '0 1 1 1 1']], at: '4m', fires: [] },
  { alert: 'PinHoldExpirationNotRunning', name: 'no cycle for 10 min', series: [[`chessboard_property_object_hold_expiration_run_total{${w}}`, '5x20']], at: '15m', fires: [{}] },
  { alert: 'PinHoldExpirationNotRunning', name: 'a cycle every minute', series: [[`chessboard_property_object_hold_expiration_run_total{${w}}`, '0+1x20']], at: '15m', fires: [] },
  { alert: 'PinDelistedRetentionNotRun', name: 'last success 27 h ago', interval: '1h', series: [[`pin_job_last_success_timestamp_seconds{job="delisted-retention",${w}}`, '0x30']], at: '27h', fires: [{}] },
  { alert: 'PinDelistedRetentionNotRun', name: 'a success every hour', interval: '1h', series: [[`pin_job_last_success_timestamp_seconds{job="delisted-retention",${w}}`, '0+3600x30']], at: '27h', fires: [] },
  { alert: 'PinDelistedBacklogGrowing', name: 'grew on each of the last 3 days', interval: '1h', evaluationInterval: '10m', series: [[`catalog_delisted_backlog{kind="property_object",scope="past_cutoff",${w}}`, '0+1x100']], at: '98h', fires: [{ kind: 'property_object', scope: 'past_cutoff' }] },
  { alert: 'PinDelistedBacklogGrowing', name: 'a flat backlog', interval: '1h', evaluationInterval: '10m', series: [[`catalog_delisted_backlog{kind="property_object",scope="past_cutoff",${w}}`, '50x100']], at: '98h', fires: [] },
  { alert: 'PinDelistedRetentionFailing', name: 'a failed run', interval: '1h', series: [[`pin_job_runs_total{job="delisted-retention",status="failed",${w}}`, '0 0 1x5']], at: '3h', fires: [{}] },
  {
    alert: 'PinDelistedRetentionNearMaxRunDuration', name: 'runs between 10 and 20 min: p95 above 960 s', interval: '1h', evaluationInterval: '30m',
    series: [
      [`catalog_delisted_retention_run_duration_seconds_bucket{le="600",${w}}`, '0x200'],
      [`catalog_delisted_retention_run_duration_seconds_bucket{le="1200",${w}}`, '0+1x200'],
      [`catalog_delisted_retention_run_duration_seconds_bucket{le="+Inf",${w}}`, '0+1x200'],
    ],
    at: '180h', fires: [{}],
  },
  {
    alert: 'PinDelistedRetentionNearMaxRunDuration', name: 'runs under 10 min', interval: '1h', evaluationInterval: '30m',
    series: [
      [`catalog_delisted_retention_run_duration_seconds_bucket{le="600",${w}}`, '0+1x200'],
      [`catalog_delisted_retention_run_duration_seconds_bucket{le="1200",${w}}`, '0+1x200'],
      [`catalog_delisted_retention_run_duration_seconds_bucket{le="+Inf",${w}}`, '0+1x200'],
    ],
    at: '180h', fires: [],
  },
  { alert: 'PinDelistedRetentionLockStuck', name: 'skipped on the lock, no success', interval: '1h', series: [[`catalog_delisted_retention_lock_contention_total{${w}}`, '0 1x30']], at: '10h', fires: [{}] },
  { alert: 'PinDelistedRetentionLockStuck', name: 'skipped once, but another instance succeeded', interval: '1h', series: [[`catalog_delisted_retention_lock_contention_total{${w}}`, '0 1x30'], [`pin_job_runs_total{job="delisted-retention",status="succeeded",instance="worker-2"}`, '0 1x30']], at: '10h', fires: [] },
  { alert: 'PinJobFailing', name: 'half the cycles fail', series: [[`pin_job_runs_total{job="booking-expiration",status="failed",${w}}`, '0+1x40'], [`pin_job_runs_total{job="booking-expiration",status="succeeded",${w}}`, '0+1x40']], at: '35m', fires: [{ job: 'booking-expiration' }] },
  { alert: 'PinJobFailing', name: 'no failures', series: [[`pin_job_runs_total{job="booking-expiration",status="failed",${w}}`, '0x40'], [`pin_job_runs_total{job="booking-expiration",status="succeeded",${w}}`, '0+1x40']], at: '35m', fires: [] },
  { alert: 'PinJobStale', name: 'the relay has not succeeded for 15 min', series: [[`pin_job_last_success_timestamp_seconds{job="outbox-relay",${w}}`, '0x30']], at: '15m', fires: [{ job: 'outbox-relay' }] },
  { alert: 'PinJobStale', name: 'a success every minute', series: [[`pin_job_last_success_timestamp_seconds{job="outbox-relay",${w}}`, '0+60x30']], at: '15m', fires: [] },
];

describe('alert rules (observability/prometheus/alerts.yml)', () => {
  it('pass promtool check rules (fails when promtool is missing)', () => {
    const res = promtool(['check', 'rules', ALERTS_FILE]);
    expect(res.status, `${res.stdout}\n${res.stderr}`).toBe(0);
    expect(res.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('every rule has a severity, a context, a summary, a description and a runbook action', () => {
    const rules = alertRules();
    expect(rules.length).toBeGreaterThanOrEqual(SPEC_ALERTS.length);
    for (const r of rules) {
      expect(r.alert, JSON.stringify(r)).toMatch(/^Pin[A-Za-z]+$/);
      expect(['critical', 'warning', 'info'], r.alert).toContain(r.labels?.severity);
      expect(r.labels?.context, r.alert).toMatch(/^(crm|chessboard|catalog|platform)$/);
      for (const a of ['summary', 'description', 'runbook']) {
        expect(typeof r.annotations?.[a] === 'string' && r.annotations[a].trim().length > 10, `${r.alert}: annotations.${a}`).toBe(true);
      }
    }
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
  });

  it('name only metrics the code defines', () => {
    for (const r of alertRules()) {
      const names = metricNamesIn(r.expr);
      expect(names.length, r.alert).toBeGreaterThan(0);
      expect(unknownMetrics(names), r.alert).toEqual([]);
    }
  });

  it.each(SPEC_ALERTS)('covers the spec alert «%s» (%s on %s)', (_what, alert, metric) => {
    const rule = alertRules().find((r) => r.alert === alert);
    expect(rule, alert).toBeDefined();
    expect(metricNamesIn(rule!.expr)).toContain(metric);
  });

  it('fire and stay silent as intended (promtool test rules)', () => {
    const rules = alertRules();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pin-alerts-'));
    try {
      // the expressions are what is tested here: annotations (templates) are checked by `check rules`
      const stripped = YAML.parse(fs.readFileSync(ALERTS_FILE, 'utf8')) as { groups: { rules: Partial<Rule>[] }[] };
      for (const g of stripped.groups) for (const r of g.rules) delete r.annotations;
      fs.writeFileSync(path.join(dir, 'rules.yml'), YAML.stringify(stripped));
      const files = ALERT_CASES.map((c, i) => {
        const rule = rules.find((r) => r.alert === c.alert);
        expect(rule, c.alert).toBeDefined();
        const file = `case-${i}.yml`;
        fs.writeFileSync(path.join(dir, file), YAML.stringify({
          rule_files: ['rules.yml'],
          evaluation_interval: c.evaluationInterval ?? '1m',
          tests: [{
            name: `${c.alert}: ${c.name}`,
            interval: c.interval ?? '1m',
            input_series: c.series.map(([series, values]) => ({ series, values })),
            alert_rule_test: [{
              eval_time: c.at,
              alertname: c.alert,
              exp_alerts: c.fires.map((labels) => ({ exp_labels: { ...rule!.labels, ...labels } })),
            }],
          }],
        }));
        return file;
      });
      const res = promtool(['test', 'rules', ...files], dir);
      expect(res.status, `${res.stdout}\n${res.stderr}`).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

// ----------------------------------------------------------------------------------------- dashboard

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
  panels?: Panel[];
}

describe('Grafana dashboard (observability/grafana/pin-booking-dashboard.json)', () => {
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD_FILE, 'utf8')) as { uid: string; title: string; panels: Panel[]; templating: { list: { name: string; type: string }[] } };
  const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  const queries = panels.filter((p) => p.targets?.length);

  it('has the rows overview, jobs, saga, outbox/consumers, catalog', () => {
    expect(dashboard.uid).toBe('pin-booking');
    const rows = panels.filter((p) => p.type === 'row').map((p) => p.title.toLowerCase());
    expect(rows).toEqual(['overview', 'jobs', 'saga', 'outbox / consumers', 'catalog']);
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('queries only metrics the code defines, through the data source variable', () => {
    expect(dashboard.templating.list.find((v) => v.name === 'DS_PROMETHEUS')?.type).toBe('datasource');
    expect(queries.length).toBeGreaterThan(30);
    for (const p of queries) {
      expect(p.datasource?.uid, p.title).toBe('${DS_PROMETHEUS}');
      for (const t of p.targets!) {
        const names = metricNamesIn(t.expr);
        expect(names.length, `${p.title}: ${t.expr}`).toBeGreaterThan(0);
        expect(unknownMetrics(names), `${p.title}: ${t.expr}`).toEqual([]);
      }
    }
  });

  it('shows every metric the specs name', () => {
    const shown = new Set(queries.flatMap((p) => p.targets!.flatMap((t) => metricNamesIn(t.expr))).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    expect(SPEC_METRICS.map((m) => m.name).filter((n) => !shown.has(n))).toEqual([]);
  });

  it('lays panels out on the 24-column grid without overlaps', () => {
    const cells = new Set<string>();
    for (const p of panels) {
      const { x, y, w: width, h } = p.gridPos;
      expect(x + width, p.title).toBeLessThanOrEqual(24);
      for (let i = x; i < x + width; i++) {
        for (let j = y; j < y + h; j++) {
          expect(cells.has(`${i}:${j}`), `${p.title} overlaps at ${i}:${j}`).toBe(false);
          cells.add(`${i}:${j}`);
        }
      }
    }
  });
});

// ----------------------------------------------------------------------------------- OTEL settings

describe('OpenTelemetry settings', () => {
  const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', KAFKA_BROKERS: '127.0.0.1:9092' };
  it('traces are off by default; the OTLP endpoint defaults to the local collector', () => {
    const env = parseEnv(base);
    expect(env.OTEL_TRACES_EXPORTER).toBe('none');
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://localhost:4318');
    expect(parseEnv({ ...base, OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' }).OTEL_TRACES_EXPORTER).toBe('otlp');
  });
  it.each([['OTEL_TRACES_EXPORTER', 'jaeger'], ['OTEL_EXPORTER_OTLP_ENDPOINT', 'otel:4318']])('rejects %s=%s with a line naming it', (name, value) => {
    expect(() => parseEnv({ ...base, [name]: value })).toThrow(EnvError);
    expect(() => parseEnv({ ...base, [name]: value })).toThrow(new RegExp(`^invalid configuration: ${name} `));
  });
});

// ------------------------------------------------------------------------------------------- tracing

describe('tracing helpers', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: Tracing | undefined;
  afterAll(async () => {
    await tracing?.shutdown();
  });

  it('off (the default): no SDK, spans are no-ops and no traceparent is written', async () => {
    const off = await startTracing({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' }, 'test');
    expect(off.enabled).toBe(false);
    const headers = await withSpan('noop', {}, async () => traceHeaders());
    expect(headers).toEqual({});
    const { logger, lines } = createCapturingLogger();
    await withSpan('noop', {}, async () => logger.info('inside'));
    expect(lines()[0]).not.toHaveProperty('traceId');
  });

  it('on: traceparent of the active span in the headers; a span started from them is its child; logs carry the ids', async () => {
    tracing = await startTracing({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' }, 'test', {
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    expect(tracing.enabled).toBe(true);
    const { logger, lines } = createCapturingLogger();
    const headers = await withSpan('command', {}, async () => {
      logger.info('inside the command');
      return traceHeaders();
    });
    logger.info('outside');
    const [command] = exporter.getFinishedSpans();
    const { traceId, spanId } = command!.spanContext();
    expect(headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
    expect(lines()[0]).toMatchObject({ traceId, spanId, msg: 'inside the command' });
    expect(lines()[1]).not.toHaveProperty('traceId');

    // Kafka hands headers over as Buffers
    const kafkaHeaders = { traceparent: Buffer.from(headers.traceparent!), correlationId: Buffer.from('c-1') };
    await withSpan('consume', { parent: contextFromHeaders(kafkaHeaders) }, async () => {});
    const consume = exporter.getFinishedSpans().find((s) => s.name === 'consume')!;
    expect(consume.spanContext().traceId).toBe(traceId);
    expect(consume.parentSpanContext?.spanId).toBe(spanId);
    expect(linkFromHeaders(headers)?.context).toMatchObject({ traceId, spanId });
    expect(linkFromHeaders({ correlationId: 'x' })).toBeNull();
  });

  it('a failing span records the exception, is marked ERROR, and the error is re-thrown', async () => {
    await expect(withSpan('fails', {}, async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    const span = exporter.getFinishedSpans().find((s) => s.name === 'fails')!;
    expect(span.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'boom' });
    expect(span.events.map((e) => e.name)).toContain('exception');
  });
});
