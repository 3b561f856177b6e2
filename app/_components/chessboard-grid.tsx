'use client';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore, type RefObject } from 'react';
import { useTranslations } from 'next-intl';
import { Countdown } from './countdown';
import { fillIn } from './message-template';
import { useFormat, type Format } from './format';
import type { Density } from './grid-view';
import { STATUS_GLYPH, type ObjectStatus } from './status';
import type { RouterOutputs } from './trpc';

export type Grid = RouterOutputs['chessboard']['grid'];
export type GridCell = Grid['cells'][number];

interface Layout {
  rows: { floor: number; slots: (GridCell | null)[] }[];
  sections: { section: number; start: number; width: number }[];
  totalCols: number;
  position: Map<string, { row: number; col: number }>;
}

const byNumber = new Intl.Collator(undefined, { numeric: true });
const noSubscription = () => () => {};

/**
 * Floors are rows (top floor first), sections are column groups; inside a section the units of a
 * floor are ordered by number. A section is as wide as its widest floor; missing units leave gaps.
 */
export function buildLayout(grid: Pick<Grid, 'cells' | 'building'>): Layout {
  const floors = new Set<number>();
  const sections = new Set<number>();
  for (let f = 1; f <= grid.building.floors; f++) floors.add(f);
  for (let s = 1; s <= grid.building.sections; s++) sections.add(s);
  const bySlot = new Map<string, GridCell[]>();
  for (const cell of grid.cells) {
    floors.add(cell.floor);
    sections.add(cell.section);
    const key = `${cell.floor}:${cell.section}`;
    const list = bySlot.get(key);
    if (list) list.push(cell);
    else bySlot.set(key, [cell]);
  }
  for (const list of bySlot.values()) list.sort((a, b) => byNumber.compare(a.number, b.number));
  const floorList = [...floors].sort((a, b) => b - a);
  const sectionList = [...sections].sort((a, b) => a - b);
  let start = 0;
  const sectionMeta = sectionList.map((section) => {
    let width = 1;
    for (const floor of floorList) width = Math.max(width, bySlot.get(`${floor}:${section}`)?.length ?? 0);
    const meta = { section, start, width };
    start += width;
    return meta;
  });
  const position = new Map<string, { row: number; col: number }>();
  const rows = floorList.map((floor, row) => {
    const slots: (GridCell | null)[] = new Array(start).fill(null);
    for (const s of sectionMeta) {
      (bySlot.get(`${floor}:${s.section}`) ?? []).forEach((cell, i) => {
        slots[s.start + i] = cell;
        position.set(cell.id, { row, col: s.start + i });
      });
    }
    return { floor, slots };
  });
  return { rows, sections: sectionMeta, totalCols: start, position };
}

/** WAI-ARIA grid navigation: the target cell id for a key, or null if the key is not a move. */
export function moveFocus(layout: Layout, fromId: string, key: string, ctrl: boolean): string | null {
  const at = layout.position.get(fromId);
  if (!at) return null;
  const row = layout.rows[at.row].slots;
  const firstIn = (slots: (GridCell | null)[]) => slots.find(Boolean)?.id ?? null;
  const lastIn = (slots: (GridCell | null)[]) => [...slots].reverse().find(Boolean)?.id ?? null;
  const nearestIn = (slots: (GridCell | null)[], col: number) => {
    for (let d = 0; d < slots.length; d++) {
      if (slots[col - d]) return slots[col - d]!.id;
      if (slots[col + d]) return slots[col + d]!.id;
    }
    return null;
  };
  const vertical = (step: number, count = 1) => {
    let target: string | null = null;
    let moved = 0;
    for (let r = at.row + step; r >= 0 && r < layout.rows.length && moved < count; r += step) {
      const id = nearestIn(layout.rows[r].slots, at.col);
      if (id) {
        target = id;
        moved++;
      }
    }
    return target;
  };
  switch (key) {
    case 'ArrowRight':
      return row.slice(at.col + 1).find(Boolean)?.id ?? null;
    case 'ArrowLeft':
      return [...row.slice(0, at.col)].reverse().find(Boolean)?.id ?? null;
    case 'ArrowUp':
      return vertical(-1);
    case 'ArrowDown':
      return vertical(1);
    case 'PageUp':
      return vertical(-1, 5);
    case 'PageDown':
      return vertical(1, 5);
    case 'Home':
      if (!ctrl) return firstIn(row);
      for (const r of layout.rows) if (firstIn(r.slots)) return firstIn(r.slots);
      return null;
    case 'End':
      if (!ctrl) return lastIn(row);
      for (const r of [...layout.rows].reverse()) if (lastIn(r.slots)) return lastIn(r.slots);
      return null;
    default:
      return null;
  }
}

export interface CellStrings {
  status: Record<ObjectStatus, string>;
  statusShort: Record<ObjectStatus, string>;
  studio: string;
  roomsShort: (n: number) => string;
  area: (n: number) => string;
  m2: string;
  aria: (cell: GridCell) => string;
}

const Cell = memo(function Cell({
  cell, colIndex, focused, dimmed, selected, strings, f, pricePerM2,
}: { cell: GridCell; colIndex: number; focused: boolean; dimmed: boolean; selected: boolean; strings: CellStrings; f: Format; pricePerM2: boolean }) {
  const until = cell.status === 'Reserved' ? cell.reservedUntil : cell.status === 'Booked' ? cell.bookedUntil : null;
  // the accessible name is the sr-only sentence; the visible bits are aria-hidden so the name and the
  // content never disagree (axe label-content-name-mismatch flagged every cell with an aria-label).
  // Few elements per cell, each one text node (a board has 1,000 cells; the browser's style and
  // layout of its elements was most of the page's load): the cell is a CSS grid of number, status
  // marker (the short status text is the marker's ::after), rooms · area, price and the timer.
  return (
    <div
      role="gridcell"
      aria-colindex={colIndex}
      tabIndex={focused ? 0 : -1}
      data-cell-id={cell.id}
      data-status={cell.status}
      data-number={cell.number}
      data-match={dimmed ? undefined : 'true'}
      aria-selected={selected}
      className={`cell status-${cell.status}${dimmed ? ' cell-dimmed' : ''}${selected ? ' cell-selected' : ''}`}
    >
      <span className="sr-only">{strings.aria(cell)}</span>
      <span className="cell-number" aria-hidden="true">{cell.number}</span>
      <span className="glyph" aria-hidden="true" data-short={strings.statusShort[cell.status]}>{STATUS_GLYPH[cell.status]}</span>
      <span className="cell-meta" aria-hidden="true">
        {`${cell.rooms === 0 ? strings.studio : strings.roomsShort(cell.rooms)} · ${strings.area(cell.area)} ${strings.m2}`}
      </span>
      <span className="cell-price" aria-hidden="true" data-price-per-m2={pricePerM2 ? 'true' : undefined}>
        {pricePerM2 ? `${f.compactMoney(Math.round(cell.price / cell.area))} ₽/${strings.m2}` : `${f.compactMoney(cell.price)} ₽`}
      </span>
      {until ? <Countdown until={until} compact /> : null}
    </div>
  );
});

/** A hold whose deadline has passed while the object is still held (the safety-net job will release it). */
export function isOverdue(cell: GridCell, now: number): boolean {
  const until = cell.status === 'Reserved' ? cell.reservedUntil : cell.status === 'Booked' ? cell.bookedUntil : null;
  return !!until && until.getTime() < now;
}

export interface GridFilter {
  statuses: Set<ObjectStatus>;
  rooms: Set<number>;
  priceMin: number | null;
  priceMax: number | null;
  areaMin: number | null;
  areaMax: number | null;
  /** when set: only holds overdue at this time match */
  overdueAt: number | null;
}

export function cellMatches(cell: GridCell, filter: GridFilter): boolean {
  if (filter.statuses.size && !filter.statuses.has(cell.status)) return false;
  if (filter.rooms.size && !filter.rooms.has(Math.min(cell.rooms, 4))) return false;
  if (filter.priceMin !== null && cell.price < filter.priceMin) return false;
  if (filter.priceMax !== null && cell.price > filter.priceMax) return false;
  if (filter.areaMin !== null && cell.area < filter.areaMin) return false;
  if (filter.areaMax !== null && cell.area > filter.areaMax) return false;
  if (filter.overdueAt !== null && !isOverdue(cell, filter.overdueAt)) return false;
  return true;
}

export function ChessboardGrid({
  grid, filter, selectedId, onOpen, label, density = 'comfortable', narrow = false, pricePerM2 = false,
}: {
  grid: Grid; filter: GridFilter; selectedId: string | null; onOpen: (id: string) => void; label: string;
  density?: Density; narrow?: boolean; pricePerM2?: boolean;
}) {
  const t = useTranslations('chessboard');
  const ts = useTranslations('status');
  const f = useFormat();
  // narrow: only matching cells are laid out, so floors and columns without a match disappear
  const layout = useMemo(
    () => (narrow ? buildLayout({ cells: grid.cells.filter((c) => cellMatches(c, filter)), building: { ...grid.building, floors: 0 } }) : buildLayout(grid)),
    [grid, narrow, filter],
  );
  const containerRef = useRef<HTMLDivElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  useWholeBuildingFit(scrollRef, density === 'whole', layout);
  const [focusedId, setFocusedId] = useState<string | null>(null);
  const moveRequested = useRef(false);

  // the roving tab stop: the selected cell, else the last focused one, else the first cell
  const tabStop = focusedId && layout.position.has(focusedId)
    ? focusedId
    : selectedId && layout.position.has(selectedId)
      ? selectedId
      : layout.rows.flatMap((r) => r.slots).find(Boolean)?.id ?? null;

  useEffect(() => {
    if (!moveRequested.current || !tabStop) return;
    moveRequested.current = false;
    const el = containerRef.current?.querySelector<HTMLElement>(`[data-cell-id="${tabStop}"]`);
    el?.focus();
    el?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [tabStop]);

  const strings = useMemo<CellStrings>(() => {
    const status = { Free: ts('Free'), Reserved: ts('Reserved'), Booked: ts('Booked'), Sold: ts('Sold'), Hidden: ts('Hidden') };
    // what repeats across a board is formatted once per value, not once per cell (1,000 cells): a
    // message with a plural per room count, floor and section numbers, areas (each cell shows its area
    // twice, in its text and in its accessible name)
    const perValue = (format: (n: number) => string) => {
      const seen = new Map<number, string>();
      return (n: number) => {
        let text = seen.get(n);
        if (text === undefined) seen.set(n, (text = format(n)));
        return text;
      };
    };
    const integer = perValue(f.integer);
    const area = perValue(f.area);
    // cellAria and until have only plain {arguments}: formatted once with markers, then filled per cell
    const ariaLabel = fillIn(t, 'cellAria', ['number', 'floor', 'section', 'rooms', 'area', 'price', 'status', 'until']);
    const untilLabel = fillIn(t, 'until', ['time']);
    const roomsShort = perValue((n) => t('roomsShort', { n }));
    const rooms = perValue((n) => (n === 0 ? t('studio') : t('rooms', { n })));
    return {
      status,
      statusShort: { Free: ts('short.Free'), Reserved: ts('short.Reserved'), Booked: ts('short.Booked'), Sold: ts('short.Sold'), Hidden: ts('short.Hidden') },
      studio: t('studioShort'),
      roomsShort,
      area,
      m2: t('m2'),
      aria: (cell) => {
        const until = cell.status === 'Reserved' ? cell.reservedUntil : cell.status === 'Booked' ? cell.bookedUntil : null;
        return ariaLabel({
          number: cell.number,
          floor: integer(cell.floor),
          section: integer(cell.section),
          rooms: rooms(cell.rooms),
          area: area(cell.area),
          price: f.money(cell.price),
          status: status[cell.status],
          until: until ? untilLabel({ time: f.dateTime(until) }) : '',
        });
      },
    };
  }, [t, ts, f]);

  const onKeyDown = useCallback((e: React.KeyboardEvent<HTMLDivElement>) => {
    const target = (e.target as HTMLElement).closest<HTMLElement>('[data-cell-id]');
    if (!target) return;
    const id = target.dataset.cellId!;
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      onOpen(id);
      return;
    }
    const next = moveFocus(layout, id, e.key, e.ctrlKey || e.metaKey);
    if (next === null && !['ArrowRight', 'ArrowLeft', 'ArrowUp', 'ArrowDown', 'Home', 'End', 'PageUp', 'PageDown'].includes(e.key)) return;
    e.preventDefault();
    if (next && next !== id) {
      moveRequested.current = true;
      setFocusedId(next);
    }
  }, [layout, onOpen]);

  const onClick = useCallback((e: React.MouseEvent<HTMLDivElement>) => {
    const target = (e.target as HTMLElement).closest<HTMLElement>('[data-cell-id]');
    if (!target) return;
    setFocusedId(target.dataset.cellId!);
    onOpen(target.dataset.cellId!);
  }, [onOpen]);

  const onFocus = useCallback((e: React.FocusEvent<HTMLDivElement>) => {
    const id = (e.target as HTMLElement).dataset?.cellId;
    if (id) setFocusedId(id);
  }, []);

  const sectionWidth = (w: number) => `calc(${w} * var(--cell-w) + ${w - 1} * var(--cell-gap))`;
  // true once the board handles keys and clicks: at once while the browser renders the grid (now
  // always), after hydration if the grid ever comes in the server's HTML — the bench's "interactive"
  // mark, which shows such a trade (README, chessboard-grid); cells are memoised, a re-render is cheap
  const hydrated = useSyncExternalStore(noSubscription, () => true, () => false);

  return (
    <div className="grid-scroll" ref={scrollRef} data-density={density} tabIndex={-1} id="chessboard-grid">
      <div
        ref={containerRef}
        role="grid"
        aria-label={label}
        aria-rowcount={layout.rows.length + 1}
        aria-colcount={layout.totalCols + 1}
        className="chess-grid"
        data-hydrated={hydrated ? 'true' : undefined}
        onKeyDown={onKeyDown}
        onClick={onClick}
        onFocus={onFocus}
      >
        <div role="row" aria-rowindex={1} className="grid-row grid-head">
          <div role="columnheader" className="floor-head" aria-colindex={1}>{t('floor')}</div>
          {layout.sections.map((s) => (
            <div
              key={s.section}
              role="columnheader"
              aria-colindex={s.start + 2}
              aria-colspan={s.width}
              className="section-head"
              style={{ width: sectionWidth(s.width) }}
            >
              {t('section', { n: s.section })}
            </div>
          ))}
        </div>
        {layout.rows.map((row, r) => (
          <div role="row" key={row.floor} aria-rowindex={r + 2} className="grid-row">
            <div role="rowheader" className="floor-head" aria-colindex={1}>{row.floor}</div>
            {layout.sections.map((s) => (
              <div role="presentation" key={s.section} className="section-group" style={{ width: sectionWidth(s.width) }}>
                {row.slots.slice(s.start, s.start + s.width).map((cell, i) =>
                  cell ? (
                    <Cell
                      key={cell.id}
                      cell={cell}
                      colIndex={s.start + i + 2}
                      focused={cell.id === tabStop}
                      selected={cell.id === selectedId}
                      dimmed={!cellMatches(cell, filter)}
                      strings={strings}
                      f={f}
                      pricePerM2={pricePerM2}
                    />
                  ) : (
                    <div key={`empty-${i}`} className="cell cell-empty" aria-hidden="true" />
                  ),
                )}
              </div>
            ))}
          </div>
        ))}
      </div>
    </div>
  );
}

const SECTION_GAP = 6; // px between sections in the whole-building mode (globals.css [data-density=whole])
const CELL_GAP = 2;
const FLOOR_HEAD = 34;

/**
 * "Whole building": cell width and height are computed from the space left in the window, so every
 * floor and section shows at once without scrolling (1366×768 holds 25 floors × 40 units). Below a
 * readable minimum (number + glyph) the box scrolls instead of shrinking further.
 */
function useWholeBuildingFit(ref: RefObject<HTMLDivElement | null>, active: boolean, layout: Layout) {
  useLayoutEffect(() => {
    const box = ref.current;
    if (!box) return;
    if (!active) {
      box.style.removeProperty('--cell-w');
      box.style.removeProperty('--cell-h');
      box.style.removeProperty('max-height');
      return;
    }
    const fit = () => {
      const top = box.getBoundingClientRect().top + window.scrollY;
      const availH = Math.max(160, window.innerHeight - top - 14);
      const head = box.querySelector<HTMLElement>('.grid-head')?.offsetHeight ?? 20;
      const cols = Math.max(1, layout.totalCols);
      const sections = Math.max(1, layout.sections.length);
      const rows = Math.max(1, layout.rows.length);
      const availW = box.clientWidth - 6 - FLOOR_HEAD - SECTION_GAP * sections - (cols - sections) * CELL_GAP;
      const w = Math.min(104, Math.max(26, Math.floor(availW / cols)));
      const h = Math.min(76, Math.max(18, Math.floor((availH - 2 - head - 4 - rows * CELL_GAP) / rows)));
      box.style.setProperty('--cell-w', `${w}px`);
      box.style.setProperty('--cell-h', `${h}px`);
      box.style.setProperty('max-height', `${availH}px`);
    };
    fit();
    const observer = new ResizeObserver(fit);
    observer.observe(box);
    window.addEventListener('resize', fit);
    return () => {
      observer.disconnect();
      window.removeEventListener('resize', fit);
    };
  }, [ref, active, layout]);
}
