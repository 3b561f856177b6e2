import { bookingExpirationJob } from '../crm/booking-expiration.job';
import { propertyObjectHoldExpirationJob } from '../chessboard/property-object-hold-expiration.job';
import { projectAggregatesRecalcJob } from '../chessboard/project-aggregates-recalc.job';
import { delistedRetentionJob } from '../catalog/delisted-retention.job';
import { createOutboxRelayJob } from '../platform/outbox/outbox-relay.job';
import { reconciliationJob } from '../ops/reconciliation.job';
import { notificationsDeadlineSoonJob } from '../notifications/deadline-soon.job';
import { notificationsRetentionJob } from '../notifications/retention.job';
import { reportsDailyRollupJob } from '../crm/reports-daily-rollup.job';
import type { JobDefinition, JobName } from '../platform/jobs/types';

/** Every worker job by its fixed name (DESIGN.md). The relay is stateful, so each caller gets its own. */
export function createJobs(): Record<JobName, JobDefinition> {
  return {
    'booking-expiration': bookingExpirationJob,
    'property-object-hold-expiration': propertyObjectHoldExpirationJob,
    'project-aggregates-recalc': projectAggregatesRecalcJob,
    'delisted-retention': delistedRetentionJob,
    'outbox-relay': createOutboxRelayJob(),
    reconciliation: reconciliationJob,
    'notifications-deadline-soon': notificationsDeadlineSoonJob,
    'notifications-retention': notificationsRetentionJob,
    'reports-daily-rollup': reportsDailyRollupJob,
  };
}
