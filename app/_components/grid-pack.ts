import { OBJECT_STATUSES } from './status';
import type { RouterOutputs } from './trpc';

type Grid = RouterOutputs['chessboard']['grid'];
type Cell = Grid['cells'][number];

/**
 * The grid as the page's first HTML carries it for the browser's query: one array per column instead
 * of an object per cell. The RSC payload of 1,000 objects repeated every key and wrote each date as a
 * tagged string; columns of numbers are about a third of that, and the HTML also carries every cell
 * as markup already.
 */
export interface PackedGrid {
  building: Grid['building'];
  counts: Grid['counts'];
  total: number;
  serverNow: number;
  cells: {
    id: string[];
    number: string[];
    floor: number[];
    section: number[];
    rooms: number[];
    area: number[];
    price: number[];
    /** one digit per cell: its index in OBJECT_STATUSES */
    status: string;
    reservedUntil: (number | null)[];
    bookedUntil: (number | null)[];
    holdDealId: (string | null)[];
    statusChangedAt: number[];
    version: number[];
  };
}

const time = (d: Date | null) => (d ? d.getTime() : null);
const date = (ms: number | null) => (ms === null ? null : new Date(ms));

export function packGrid(grid: Grid): PackedGrid {
  const c = grid.cells;
  return {
    building: grid.building,
    counts: grid.counts,
    total: grid.total,
    serverNow: grid.serverNow.getTime(),
    cells: {
      id: c.map((x) => x.id),
      number: c.map((x) => x.number),
      floor: c.map((x) => x.floor),
      section: c.map((x) => x.section),
      rooms: c.map((x) => x.rooms),
      area: c.map((x) => x.area),
      price: c.map((x) => x.price),
      status: c.map((x) => OBJECT_STATUSES.indexOf(x.status)).join(''),
      reservedUntil: c.map((x) => time(x.reservedUntil)),
      bookedUntil: c.map((x) => time(x.bookedUntil)),
      holdDealId: c.map((x) => x.holdDealId),
      statusChangedAt: c.map((x) => x.statusChangedAt.getTime()),
      version: c.map((x) => x.version),
    },
  };
}

export function unpackGrid(packed: PackedGrid): Grid {
  const p = packed.cells;
  const cells: Cell[] = new Array(p.id.length);
  for (let i = 0; i < p.id.length; i++) {
    cells[i] = {
      id: p.id[i], number: p.number[i], floor: p.floor[i], section: p.section[i], rooms: p.rooms[i], area: p.area[i], price: p.price[i],
      status: OBJECT_STATUSES[Number(p.status[i])],
      reservedUntil: date(p.reservedUntil[i]), bookedUntil: date(p.bookedUntil[i]), holdDealId: p.holdDealId[i],
      statusChangedAt: new Date(p.statusChangedAt[i]), version: p.version[i],
    };
  }
  return { building: packed.building, counts: packed.counts, total: packed.total, serverNow: new Date(packed.serverNow), cells };
}
