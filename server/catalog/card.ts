import { ValidationError } from '../platform/errors';

/**
 * Pure rules of the storefront cards (property object cards and project cards): how a source event
 * from chessboard changes a card, and when a Delisted card may be physically removed. No I/O here;
 * card-projection.ts and the delisted-retention job apply these decisions.
 *
 * Card lifecycle: (none) → Published/Hidden ⇄ … → Delisted → [*] (DelistedRetentionJob), with the one
 * way back Delisted → Published/Hidden by a restoring upsert of the same id.
 */

export type CardStatus = 'Published' | 'Hidden' | 'Delisted';
export type ObjectSaleStatus = 'Free' | 'Reserved' | 'Booked' | 'Sold' | 'Hidden';

/** What the projection remembers about the source to order events (see schema: source_version, source_updated_at). */
export interface CardSourceState {
  status: CardStatus;
  sourceVersion: number;
  /** source time of the last applied event; for a Delisted card: the source's deletedAt */
  sourceUpdatedAt: Date | null;
}

/** Position of an event in its source's history: the aggregate version, then the source time. */
export interface SourcePosition {
  version: number;
  at: Date;
}

export type NoOpReason = 'stale' | 'delisted-frozen' | 'unknown-card';

export type CardDecision =
  | { kind: 'insert'; status: CardStatus }
  | { kind: 'update'; status: CardStatus; restored: boolean }
  | { kind: 'no-op'; reason: NoOpReason };

/** A Hidden property object shows as a Hidden card; every other sale status is Published. */
export function cardStatusForObject(objectStatus: ObjectSaleStatus): Exclude<CardStatus, 'Delisted'> {
  return objectStatus === 'Hidden' ? 'Hidden' : 'Published';
}

/** An event is newer than what the card reflects when its version is higher, or equal with a later source time. */
export function isNewerThanCard(event: SourcePosition, card: Pick<CardSourceState, 'sourceVersion' | 'sourceUpdatedAt'>): boolean {
  if (event.version !== card.sourceVersion) return event.version > card.sourceVersion;
  return card.sourceUpdatedAt === null || event.at.getTime() > card.sourceUpdatedAt.getTime();
}

/**
 * PropertyObjectUpserted / ProjectUpserted.
 * - unknown card → insert (a card deleted by the retention job comes back as a fresh card with the same id);
 * - live card → update if the event is newer, else stale no-op;
 * - INV-7 DelistedFrozen: a Delisted card ignores every event except a restoring upsert, i.e. one that
 *   is newer than the card AND was produced after the source deleted the object (a delayed pre-delete
 *   upsert must not resurrect it).
 */
export function decideUpsert(card: CardSourceState | null, event: SourcePosition, target: Exclude<CardStatus, 'Delisted'>): CardDecision {
  if (!card) return { kind: 'insert', status: target };
  if (card.status === 'Delisted') {
    const restoring = isNewerThanCard(event, card) && (card.sourceUpdatedAt === null || event.at.getTime() > card.sourceUpdatedAt.getTime());
    return restoring ? { kind: 'update', status: target, restored: true } : { kind: 'no-op', reason: 'delisted-frozen' };
  }
  if (!isNewerThanCard(event, card)) return { kind: 'no-op', reason: 'stale' };
  return { kind: 'update', status: target, restored: false };
}

/**
 * PropertyObjectStatusChanged keeps the card's sale status in step with the object. Unknown card → no-op
 * (the upsert that creates it carries the status); Delisted card → no-op (INV-7 DelistedFrozen).
 */
export function decideStatusChange(card: CardSourceState | null, event: SourcePosition, toStatus: ObjectSaleStatus): CardDecision {
  if (!card) return { kind: 'no-op', reason: 'unknown-card' };
  if (card.status === 'Delisted') return { kind: 'no-op', reason: 'delisted-frozen' };
  if (!isNewerThanCard(event, card)) return { kind: 'no-op', reason: 'stale' };
  return { kind: 'update', status: cardStatusForObject(toStatus), restored: false };
}

/**
 * PropertyObjectDeleted / ProjectDeleted → Delisted. The delete carries no version: it is stale when the
 * card already reflects a source state produced after the deletion (a restoring upsert overtook it).
 * A Delisted card stays as it is (INV-7 DelistedFrozen: its updated_at is the retention clock).
 */
export function decideDelist(card: CardSourceState | null, deletedAt: Date): CardDecision {
  if (!card) return { kind: 'no-op', reason: 'unknown-card' };
  if (card.status === 'Delisted') return { kind: 'no-op', reason: 'delisted-frozen' };
  if (card.sourceUpdatedAt && deletedAt.getTime() < card.sourceUpdatedAt.getTime()) return { kind: 'no-op', reason: 'stale' };
  return { kind: 'update', status: 'Delisted', restored: false };
}

// ---------------------------------------------------------------------------------------------
// Retention (Delisted → [*])

export interface RetentionSettings {
  /** RetentionPeriod: a card is removable once Delisted for longer than this */
  retentionPeriodMs: number;
  /** BatchSize: cards per batch (one transaction) per phase */
  batchSize: number;
  /** MaxBatchesPerRun */
  maxBatchesPerRun: number;
  /** MaxRunDuration */
  maxRunDurationMs: number;
}

/** Checks the job settings; a bad value names its field and nothing runs. */
export function validateRetentionSettings(s: RetentionSettings): RetentionSettings {
  const isInt = (n: number) => Number.isFinite(n) && Number.isInteger(n);
  if (!Number.isFinite(s.retentionPeriodMs) || s.retentionPeriodMs <= 0) {
    throw new ValidationError('RetentionPeriod', `must be > 0 (got ${s.retentionPeriodMs} ms)`);
  }
  if (!isInt(s.batchSize) || s.batchSize < 1 || s.batchSize > 10_000) {
    throw new ValidationError('BatchSize', `must be an integer in [1..10000] (got ${s.batchSize})`);
  }
  if (!isInt(s.maxBatchesPerRun) || s.maxBatchesPerRun < 1) {
    throw new ValidationError('MaxBatchesPerRun', `must be an integer >= 1 (got ${s.maxBatchesPerRun})`);
  }
  if (!Number.isFinite(s.maxRunDurationMs) || s.maxRunDurationMs <= 0) {
    throw new ValidationError('MaxRunDuration', `must be > 0 (got ${s.maxRunDurationMs} ms)`);
  }
  return s;
}

/** cutoff = now − RetentionPeriod; `now` is the server's time (PostgreSQL now()), never a client's. */
export function retentionCutoff(now: Date, retentionPeriodMs: number): Date {
  return new Date(now.getTime() - retentionPeriodMs);
}

/**
 * A card is removable iff Status = Delisted ∧ UpdatedAt < cutoff. UpdatedAt is a valid "delisted at"
 * because a Delisted card is frozen (INV-7 / INV-5). The job's SQL predicate is this rule.
 */
export function isRemovable(card: { status: CardStatus; updatedAt: Date }, cutoff: Date): boolean {
  return card.status === 'Delisted' && card.updatedAt.getTime() < cutoff.getTime();
}
