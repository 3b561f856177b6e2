import type { CatalogEnv } from '../../catalog/env';
import type { ChessboardEnv } from '../../chessboard/env';
import type { PlatformEnv } from '../../platform/env';

/**
 * The settings the ops dashboard reads: platform's (Kafka, the job runs) and the ones of the contexts whose
 * backlog it shows by their own rule — the chessboard's hold grace, catalog's retention.
 */
export type DashboardEnv = PlatformEnv & ChessboardEnv & CatalogEnv;
