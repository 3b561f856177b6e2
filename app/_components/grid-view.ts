import { OBJECT_STATUSES, type ObjectStatus } from './status';

/**
 * What the chessboard shows, kept in the URL (?density=&show=&ppm=&status=&rooms=&price=&area=&overdue=)
 * so a reload, a shared link or Back shows the same board. Unknown values fall back to the defaults.
 */
export const DENSITIES = ['comfortable', 'compact', 'whole'] as const;
export type Density = (typeof DENSITIES)[number];
/** fade: non-matching cells stay in place, faded; narrow: they are hidden and floors without matches go */
export const SHOW_MODES = ['fade', 'narrow'] as const;
export type ShowMode = (typeof SHOW_MODES)[number];

export interface GridView {
  density: Density;
  show: ShowMode;
  pricePerM2: boolean;
  statuses: Set<ObjectStatus>;
  rooms: Set<number>;
  overdue: boolean;
  price: { min: string; max: string };
  area: { min: string; max: string };
}

const list = (v: string | null) => (v ? v.split(',').filter(Boolean) : []);
const range = (v: string | null) => {
  const [min = '', max = ''] = (v ?? '').split('-');
  return { min, max };
};

export function readGridView(params: URLSearchParams): GridView {
  const density = params.get('density');
  const show = params.get('show');
  return {
    density: (DENSITIES as readonly string[]).includes(density ?? '') ? (density as Density) : 'comfortable',
    show: (SHOW_MODES as readonly string[]).includes(show ?? '') ? (show as ShowMode) : 'fade',
    pricePerM2: params.get('ppm') === '1',
    statuses: new Set(list(params.get('status')).filter((s): s is ObjectStatus => (OBJECT_STATUSES as readonly string[]).includes(s))),
    rooms: new Set(list(params.get('rooms')).map(Number).filter((n) => Number.isInteger(n) && n >= 0 && n <= 4)),
    overdue: params.get('overdue') === '1',
    price: range(params.get('price')),
    area: range(params.get('area')),
  };
}

/** The URL parameters of a view; defaults are left out so a plain board has a plain URL. */
export function gridViewParams(v: GridView): Record<string, string | null> {
  const r = (x: { min: string; max: string }) => (x.min || x.max ? `${x.min.trim()}-${x.max.trim()}` : null);
  return {
    density: v.density === 'comfortable' ? null : v.density,
    show: v.show === 'fade' ? null : v.show,
    ppm: v.pricePerM2 ? '1' : null,
    status: v.statuses.size ? [...v.statuses].join(',') : null,
    rooms: v.rooms.size ? [...v.rooms].sort().join(',') : null,
    overdue: v.overdue ? '1' : null,
    price: r(v.price),
    area: r(v.area),
  };
}
