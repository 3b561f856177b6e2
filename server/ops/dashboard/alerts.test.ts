import { describe, expect, it } from 'vitest';
import { evaluateAlerts, growingDaysInARow, THRESHOLDS, type AlertInput } from './alerts';
import { thin } from './metric-samples';

const now = new Date('2026-06-01T12:00:00Z');
const healthy: AlertInput = {
  now,
  holdsPastGrace: 0,
  lostReleasesLastHour: 0,
  holdMismatchesLastHour: 0,
  outboxes: [{ outbox: 'crm', pending: 3, failing: 0 }, { outbox: 'chessboard', pending: 0, failing: 0 }],
  consumers: [{ group: 'chessboard.crm-property-object-status', lag: 0, estimatedLagMs: null }],
  dlq: [{ group: 'chessboard.crm-property-object-status', size: 0 }],
  kafkaError: null,
  retentionLastSucceededAt: new Date(now.getTime() - 20 * 3600_000),
  jobsRecordedSince: new Date(now.getTime() - 30 * 24 * 3600_000),
  delistedDaily: [10, 10, 9],
  jobs: [{ name: 'booking-expiration', lastStatus: 'succeeded', paused: false }],
  reconciliationMismatches: 0,
};
const codes = (i: Partial<AlertInput>) => evaluateAlerts({ ...healthy, ...i }).map((a) => `${a.code}${a.subject ? `:${a.subject}` : ''}`);

describe('alert rules (specs\' Alerts)', () => {
  it('a healthy system raises nothing', () => {
    expect(codes({})).toEqual([]);
  });

  it('outbox backlog > 1000 (not = 1000); failing rows', () => {
    expect(codes({ outboxes: [{ outbox: 'crm', pending: THRESHOLDS.outboxBacklog, failing: 0 }] })).toEqual([]);
    expect(codes({ outboxes: [{ outbox: 'crm', pending: 1001, failing: 2 }] })).toEqual(['OUTBOX_BACKLOG:crm', 'OUTBOX_FAILING:crm']);
  });

  it('consumer lag > 5 min, only while messages are waiting', () => {
    const g = 'catalog.card-projection';
    expect(codes({ consumers: [{ group: g, lag: 4, estimatedLagMs: 5 * 60_000 }] })).toEqual([]);
    expect(codes({ consumers: [{ group: g, lag: 4, estimatedLagMs: 5 * 60_000 + 1 }] })).toEqual([`CONSUMER_LAG:${g}`]);
    expect(codes({ consumers: [{ group: g, lag: 0, estimatedLagMs: 60 * 60_000 }] })).toEqual([]);
  });

  it('retention not run for > 26 h, or never', () => {
    expect(codes({ retentionLastSucceededAt: new Date(now.getTime() - 26 * 3600_000) })).toEqual([]);
    expect(codes({ retentionLastSucceededAt: new Date(now.getTime() - 26 * 3600_000 - 1) })).toEqual(['RETENTION_NOT_RUN:delisted-retention']);
    expect(evaluateAlerts({ ...healthy, retentionLastSucceededAt: null })[0]).toMatchObject({ code: 'RETENTION_NOT_RUN', values: { hours: -1 } });
  });

  it('a fresh installation is not warned of a nightly window it has not had yet', () => {
    const installedAgo = (ms: number) => ({ retentionLastSucceededAt: null, jobsRecordedSince: new Date(now.getTime() - ms) });
    expect(codes({ retentionLastSucceededAt: null, jobsRecordedSince: null })).toEqual([]);
    expect(codes(installedAgo(3600_000))).toEqual([]);
    expect(codes(installedAgo(26 * 3600_000))).toEqual([]);
    expect(codes(installedAgo(26 * 3600_000 + 1))).toEqual(['RETENTION_NOT_RUN:delisted-retention']);
  });

  it('Delisted backlog growing N days in a row', () => {
    expect(growingDaysInARow([1, 2, 3, 4], 3)).toBe(true);
    expect(growingDaysInARow([1, 2, 2, 4], 3)).toBe(false);
    expect(growingDaysInARow([2, 3, 4], 3)).toBe(false);
    expect(codes({ delistedDaily: [5, 1, 2, 3, 4] })).toEqual(['DELISTED_BACKLOG_GROWING']);
  });

  it('stuck holds, lost releases, mismatches, DLQ, failed/paused jobs, reconciliation; critical first', () => {
    const all = evaluateAlerts({
      ...healthy, holdsPastGrace: 2, lostReleasesLastHour: 1, holdMismatchesLastHour: 1, dlq: [{ group: 'g', size: 3 }],
      jobs: [{ name: 'outbox-relay', lastStatus: 'failed', paused: true }], reconciliationMismatches: 4, kafkaError: 'ECONNREFUSED',
    });
    expect(all.map((a) => a.code)).toEqual([
      'HOLDS_PAST_GRACE', 'KAFKA_UNAVAILABLE', 'LOST_RELEASES', 'HOLD_MISMATCHES', 'DLQ_NOT_EMPTY', 'JOB_FAILED', 'RECONCILIATION_MISMATCHES', 'JOB_PAUSED',
    ]);
    expect(all[0]).toMatchObject({ severity: 'critical', tile: 'holds', values: { count: 2 } });
  });
});

describe('sparkline thinning', () => {
  it('keeps at most N points, the last of each time bucket, in order', () => {
    const series = Array.from({ length: 100 }, (_, i) => ({ at: new Date(i * 1000), value: i }));
    const out = thin(series, 10);
    expect(out.length).toBeLessThanOrEqual(10);
    expect(out.at(-1)).toEqual(series.at(-1));
    expect(out.map((p) => p.value)).toEqual([...out.map((p) => p.value)].sort((a, b) => a - b));
    expect(thin(series.slice(0, 5), 10)).toHaveLength(5);
  });
});
