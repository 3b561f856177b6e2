import { describe, expect, it } from 'vitest';
import { packGrid, unpackGrid } from './grid-pack';
import type { RouterOutputs } from './trpc';

type Grid = RouterOutputs['chessboard']['grid'];

const grid: Grid = {
  building: { id: 'b1', name: 'Корпус 1', sections: 2, floors: 2, projectId: 'p1', projectName: 'ЖК', tenantId: 't1' },
  counts: { Free: 1, Reserved: 1, Booked: 1, Sold: 0, Hidden: 0 },
  total: 3,
  serverNow: new Date('2026-12-04T10:00:00.123Z'),
  cells: [
    { id: 'c1', number: '201', floor: 2, section: 1, rooms: 0, area: 24.5, price: 5_600_000, status: 'Free', reservedUntil: null, bookedUntil: null, holdDealId: null, statusChangedAt: new Date('2026-11-01T00:00:00Z'), version: 1 },
    { id: 'c2', number: '202', floor: 2, section: 2, rooms: 2, area: 54.31, price: 12_500_000.5, status: 'Reserved', reservedUntil: new Date('2026-12-04T11:00:00Z'), bookedUntil: null, holdDealId: 'd1', statusChangedAt: new Date('2026-12-04T09:00:00Z'), version: 7 },
    { id: 'c3', number: '101', floor: 1, section: 1, rooms: 4, area: 120, price: 30_000_000, status: 'Booked', reservedUntil: null, bookedUntil: new Date('2026-12-10T00:00:00Z'), holdDealId: 'd2', statusChangedAt: new Date('2026-12-03T09:00:00Z'), version: 3 },
  ],
};

describe('packGrid / unpackGrid', () => {
  it('gives back the grid it packed, dates as dates', () => {
    expect(unpackGrid(structuredClone(packGrid(grid)))).toEqual(grid);
  });

  it('packs by column, with no key repeated per cell', () => {
    const packed = packGrid(grid);
    expect(packed.cells.id).toEqual(['c1', 'c2', 'c3']);
    expect(packed.cells.status).toBe('012');
    expect(JSON.stringify(packed).match(/"number"/g)).toHaveLength(1);
  });
});
