import { bookingExpirationJob } from '../crm/booking-expiration.job';
import { propertyObjectHoldExpirationJob } from '../chessboard/property-object-hold-expiration.job';
import { projectAggregatesRecalcJob } from '../chessboard/project-aggregates-recalc.job';
import { delistedRetentionJob } from '../catalog/delisted-retention.job';
import { createOutboxRelayJob } from '../platform/outbox/outbox-relay.job';
import { reconciliationJob } from '../ops/reconciliation.job';
import { notificationsDeadlineSoonJob } from '../notifications/deadline-soon.job';
import { notificationsRetentionJob } from '../notifications/retention.job';
import { reportsDailyRollupJob } from '../crm/reports-daily-rollup.job';
import type { JobDefinition } from '../platform/jobs/types';
import { OUTBOX_NAMES } from './outboxes';

/** Every worker job's fixed name (DESIGN.md), in the order the console lists them. */
export const JOB_NAMES = [
  'booking-expiration',
  'property-object-hold-expiration',
  'project-aggregates-recalc',
  'delisted-retention',
  'outbox-relay',
  'reconciliation',
  'notifications-deadline-soon',
  'notifications-retention',
  'reports-daily-rollup',
] as const;
export type JobName = (typeof JOB_NAMES)[number];

/** Every worker job by its fixed name. The relay is stateful, so each caller gets its own. */
export function createJobs(): Record<JobName, JobDefinition> {
  return {
    'booking-expiration': bookingExpirationJob,
    'property-object-hold-expiration': propertyObjectHoldExpirationJob,
    'project-aggregates-recalc': projectAggregatesRecalcJob,
    'delisted-retention': delistedRetentionJob,
    'outbox-relay': createOutboxRelayJob(OUTBOX_NAMES),
    reconciliation: reconciliationJob,
    'notifications-deadline-soon': notificationsDeadlineSoonJob,
    'notifications-retention': notificationsRetentionJob,
    'reports-daily-rollup': reportsDailyRollupJob,
  };
}
