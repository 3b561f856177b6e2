import { describe, expect, it } from 'vitest';
import { ValidationError } from '../platform/errors';
import {
  cardStatusForObject, decideDelist, decideStatusChange, decideUpsert, isNewerThanCard, isRemovable, retentionCutoff,
  validateRetentionSettings, type CardSourceState,
} from './card';

const t = (iso: string) => new Date(iso);
const published = (over: Partial<CardSourceState> = {}): CardSourceState => ({
  status: 'Published', sourceVersion: 3, sourceUpdatedAt: t('2025-01-10T10:00:00Z'), ...over,
});
// delisted by a delete at 2025-01-20 (sourceUpdatedAt = deletedAt), last applied version 3
const delisted = (over: Partial<CardSourceState> = {}): CardSourceState => ({
  status: 'Delisted', sourceVersion: 3, sourceUpdatedAt: t('2025-01-20T10:00:00Z'), ...over,
});

describe('card status for a property object', () => {
  it('a Hidden object is a Hidden card; every sale status is Published', () => {
    expect(cardStatusForObject('Hidden')).toBe('Hidden');
    for (const s of ['Free', 'Reserved', 'Booked', 'Sold'] as const) expect(cardStatusForObject(s)).toBe('Published');
  });
});

describe('source ordering', () => {
  it('a higher version is newer; an equal version is newer only with a later source time', () => {
    const card = published();
    expect(isNewerThanCard({ version: 4, at: t('2025-01-01T00:00:00Z') }, card)).toBe(true);
    expect(isNewerThanCard({ version: 2, at: t('2025-02-01T00:00:00Z') }, card)).toBe(false);
    expect(isNewerThanCard({ version: 3, at: t('2025-01-10T10:00:00Z') }, card)).toBe(false);
    expect(isNewerThanCard({ version: 3, at: t('2025-01-10T10:00:01Z') }, card)).toBe(true);
  });
});

describe('upsert', () => {
  it('creates an unknown card with the status the object implies', () => {
    expect(decideUpsert(null, { version: 1, at: t('2025-01-01T00:00:00Z') }, 'Published')).toEqual({ kind: 'insert', status: 'Published' });
    expect(decideUpsert(null, { version: 1, at: t('2025-01-01T00:00:00Z') }, 'Hidden')).toEqual({ kind: 'insert', status: 'Hidden' });
  });

  it('updates a live card with a newer event and ignores a stale one', () => {
    expect(decideUpsert(published(), { version: 4, at: t('2025-01-11T00:00:00Z') }, 'Hidden')).toEqual({ kind: 'update', status: 'Hidden', restored: false });
    expect(decideUpsert(published(), { version: 3, at: t('2025-01-10T10:00:00Z') }, 'Published')).toEqual({ kind: 'no-op', reason: 'stale' });
    expect(decideUpsert(published(), { version: 2, at: t('2025-01-11T00:00:00Z') }, 'Published')).toEqual({ kind: 'no-op', reason: 'stale' });
  });

  it('INV-7 DelistedFrozen: restores a Delisted card only by an upsert produced after the deletion', () => {
    // restoring upsert: newer version, after deletedAt → Delisted → Published (same id)
    expect(decideUpsert(delisted(), { version: 4, at: t('2025-01-21T00:00:00Z') }, 'Published')).toEqual({ kind: 'update', status: 'Published', restored: true });
    // a delayed pre-delete upsert with a newer version must not resurrect the card
    expect(decideUpsert(delisted(), { version: 4, at: t('2025-01-19T00:00:00Z') }, 'Published')).toEqual({ kind: 'no-op', reason: 'delisted-frozen' });
    // a replay of the last applied version
    expect(decideUpsert(delisted(), { version: 3, at: t('2025-01-10T10:00:00Z') }, 'Published')).toEqual({ kind: 'no-op', reason: 'delisted-frozen' });
  });
});

describe('status change', () => {
  it('moves the sale status of a live card and hides/unhides it', () => {
    expect(decideStatusChange(published(), { version: 4, at: t('2025-01-11T00:00:00Z') }, 'Reserved')).toEqual({ kind: 'update', status: 'Published', restored: false });
    expect(decideStatusChange(published(), { version: 4, at: t('2025-01-11T00:00:00Z') }, 'Hidden')).toEqual({ kind: 'update', status: 'Hidden', restored: false });
    expect(decideStatusChange(published({ status: 'Hidden' }), { version: 4, at: t('2025-01-11T00:00:00Z') }, 'Free')).toEqual({ kind: 'update', status: 'Published', restored: false });
  });

  it('is a no-op for an unknown card, a stale version, and a Delisted card (INV-7 DelistedFrozen)', () => {
    expect(decideStatusChange(null, { version: 9, at: t('2025-01-11T00:00:00Z') }, 'Free')).toEqual({ kind: 'no-op', reason: 'unknown-card' });
    expect(decideStatusChange(published(), { version: 2, at: t('2025-01-11T00:00:00Z') }, 'Free')).toEqual({ kind: 'no-op', reason: 'stale' });
    expect(decideStatusChange(delisted(), { version: 9, at: t('2025-02-11T00:00:00Z') }, 'Free')).toEqual({ kind: 'no-op', reason: 'delisted-frozen' });
  });
});

describe('delete', () => {
  it('delists a live (Published or Hidden) card', () => {
    expect(decideDelist(published(), t('2025-01-20T00:00:00Z'))).toEqual({ kind: 'update', status: 'Delisted', restored: false });
    expect(decideDelist(published({ status: 'Hidden' }), t('2025-01-20T00:00:00Z'))).toEqual({ kind: 'update', status: 'Delisted', restored: false });
  });

  it('ignores a delete older than the state the card shows (a restoring upsert overtook it)', () => {
    expect(decideDelist(published({ sourceUpdatedAt: t('2025-01-21T00:00:00Z') }), t('2025-01-20T00:00:00Z'))).toEqual({ kind: 'no-op', reason: 'stale' });
  });

  it('INV-7 DelistedFrozen: a second delete leaves a Delisted card (and its retention clock) alone; unknown card → no-op', () => {
    expect(decideDelist(delisted(), t('2025-03-01T00:00:00Z'))).toEqual({ kind: 'no-op', reason: 'delisted-frozen' });
    expect(decideDelist(null, t('2025-03-01T00:00:00Z'))).toEqual({ kind: 'no-op', reason: 'unknown-card' });
  });
});

describe('retention rules', () => {
  it('cutoff = now − RetentionPeriod', () => {
    expect(retentionCutoff(t('2025-03-31T00:30:00Z'), 30 * 24 * 3600_000)).toEqual(t('2025-03-01T00:30:00Z'));
  });

  it('removable iff Delisted and updated strictly before the cutoff', () => {
    const cutoff = t('2025-03-01T00:00:00Z');
    expect(isRemovable({ status: 'Delisted', updatedAt: t('2025-02-28T23:59:59Z') }, cutoff)).toBe(true);
    expect(isRemovable({ status: 'Delisted', updatedAt: cutoff }, cutoff)).toBe(false);
    expect(isRemovable({ status: 'Delisted', updatedAt: t('2025-03-01T00:00:01Z') }, cutoff)).toBe(false);
    expect(isRemovable({ status: 'Published', updatedAt: t('2020-01-01T00:00:00Z') }, cutoff)).toBe(false);
    expect(isRemovable({ status: 'Hidden', updatedAt: t('2020-01-01T00:00:00Z') }, cutoff)).toBe(false);
  });

  const ok = { retentionPeriodMs: 30 * 24 * 3600_000, batchSize: 2000, maxBatchesPerRun: 100, maxRunDurationMs: 20 * 60_000 };
  it('accepts the spec defaults and the bounds', () => {
    expect(validateRetentionSettings(ok)).toEqual(ok);
    expect(validateRetentionSettings({ ...ok, batchSize: 1, maxBatchesPerRun: 1 })).toBeTruthy();
    expect(validateRetentionSettings({ ...ok, batchSize: 10_000 })).toBeTruthy();
  });

  it.each([
    ['RetentionPeriod', { retentionPeriodMs: 0 }],
    ['RetentionPeriod', { retentionPeriodMs: -1 }],
    ['BatchSize', { batchSize: 0 }],
    ['BatchSize', { batchSize: 10_001 }],
    ['BatchSize', { batchSize: 1.5 }],
    ['MaxBatchesPerRun', { maxBatchesPerRun: 0 }],
    ['MaxRunDuration', { maxRunDurationMs: 0 }],
  ])('rejects a bad %s with a ValidationError naming it', (field, bad) => {
    let err: unknown;
    try {
      validateRetentionSettings({ ...ok, ...bad });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).details).toEqual({ field });
    expect((err as ValidationError).message).toMatch(new RegExp(`^${field}:`));
  });
});
