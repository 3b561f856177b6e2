import { describe, expect, it } from 'vitest';
import { bookability, decideChange, decideDelete, type PropertyObjectView } from './property-object-view';

const T = 'tenant-a';
const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const view = (o: Partial<PropertyObjectView> = {}): PropertyObjectView => ({
  tenantId: T, projectId: 'p', status: 'Free', deleted: false, sourceVersion: 2, sourceChangedAt: at(10), deletedAt: null, ...o,
});
const change = (version: number, s: number, status: PropertyObjectView['status'] = 'Reserved') => ({ tenantId: T, projectId: 'p', status, version, at: at(s) });

describe('crm view of a property object (DESIGN decision 8)', () => {
  it('applies a newer version, ignores an older or equal one (three topics reorder)', () => {
    expect(decideChange(null, change(1, 1))).toMatchObject({ kind: 'write', view: { status: 'Reserved', sourceVersion: 1 } });
    expect(decideChange(view(), change(3, 11))).toMatchObject({ kind: 'write', view: { status: 'Reserved', sourceVersion: 3 } });
    expect(decideChange(view(), change(2, 11))).toEqual({ kind: 'no-op', reason: 'stale' });
    expect(decideChange(view(), change(1, 5))).toEqual({ kind: 'no-op', reason: 'stale' });
  });

  it('a deletion is a tombstone: earlier changes stay stale, a re-create (later, version 1 again) comes back', () => {
    const gone = decideDelete(view(), { tenantId: T, projectId: 'p', at: at(20) });
    expect(gone).toMatchObject({ kind: 'write', view: { deleted: true, deletedAt: at(20) } });
    const tomb = (gone as { view: PropertyObjectView }).view;
    expect(decideChange(tomb, change(5, 15))).toEqual({ kind: 'no-op', reason: 'deleted-later' });
    const back = decideChange(tomb, change(1, 30, 'Free'));
    expect(back).toMatchObject({ kind: 'write', view: { deleted: false, sourceVersion: 1, deletedAt: at(20) } });
    // after the re-create, a pre-deletion event with a high version is still stale
    expect(decideChange((back as { view: PropertyObjectView }).view, change(9, 12))).toEqual({ kind: 'no-op', reason: 'deleted-later' });
  });

  it('a deletion that overtook the upsert leaves a tombstone; an older deletion than the last change is stale', () => {
    const tomb = decideDelete(null, { tenantId: T, projectId: 'p', at: at(5) });
    expect(tomb).toMatchObject({ kind: 'write', view: { deleted: true, sourceVersion: 0 } });
    expect(decideChange((tomb as { view: PropertyObjectView }).view, change(1, 4, 'Free'))).toEqual({ kind: 'no-op', reason: 'deleted-later' });
    expect(decideDelete(view({ sourceChangedAt: at(30) }), { tenantId: T, projectId: 'p', at: at(20) })).toEqual({ kind: 'no-op', reason: 'stale' });
  });

  it('bookability: one not-found for unknown, foreign and deleted; Sold and Hidden refused; holds stay bookable', () => {
    expect(bookability(null, T)).toEqual({ kind: 'not-found' });
    expect(bookability(view({ tenantId: 'tenant-b' }), T)).toEqual({ kind: 'not-found' });
    expect(bookability(view({ deleted: true, deletedAt: at(1) }), T)).toEqual({ kind: 'not-found' });
    expect(bookability(view({ tenantId: 'tenant-b', status: 'Sold' }), T)).toEqual({ kind: 'not-found' });
    expect(bookability(view({ status: 'Sold' }), T)).toEqual({ kind: 'sold' });
    expect(bookability(view({ status: 'Hidden' }), T)).toEqual({ kind: 'hidden' });
    for (const status of ['Free', 'Reserved', 'Booked'] as const) expect(bookability(view({ status }), T)).toEqual({ kind: 'bookable' });
  });
});
