'use client';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore, type RefObject } from 'react';
import { useLocale, useTranslations } from 'next-intl';
import { currentNow, subscribeNow } from './clock';
import type { DurationLocale } from './duration-words';
import { fillIn } from './message-template';
import { useFormat } from './format';
import { floorMarkup, sectionWidth, timerText, type CellText } from './grid-markup';
import type { Density } from './grid-view';
import type { ObjectStatus } from './status';
import type { RouterOutputs } from './trpc';

export type Grid = RouterOutputs['chessboard']['grid'];
export type GridCell = Grid['cells'][number];

interface Layout {
  rows: { floor: number; slots: (GridCell | null)[] }[];
  sections: { section: number; start: number; width: number }[];
  totalCols: number;
  position: Map<string, { row: number; col: number }>;
}

/** The value made by `make` on the first call, the same one on every call after. */
function lazyOnce<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
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

type Texts = ReadonlyMap<string, CellText>;

interface RowProps {
  row: Layout['rows'][number];
  rowIndex: number;
  sections: Layout['sections'];
  /** every cell's text, made on the first call (a floor adopted from the server's HTML never calls it) */
  texts: () => Texts;
  /** what decides a re-render: the row's cells (id, version, status, price, deadlines), view and texts */
  signature: string;
  /** '1' per matching cell of the row, '0' per other */
  matches: string;
  selectedId: string | null;
  tabStop: string | null;
  textNow: number;
  timer: (until: number, now: number) => string;
  /** hydrating in the browser: the floor's cells are the server's elements, kept as they are */
  adopt: boolean;
}

/**
 * A floor: one element of React's; its cells are HTML text (grid-markup.ts). While hydrating, the
 * server's cells are adopted: no cell text is formatted and no cell element is compared (an empty
 * inner HTML is not checked against the server's, and React leaves the children alone). The floor is
 * the unit of re-rendering after that: a focus move, a selection or one object's live change writes
 * the one or two floors concerned; the other floors are not touched.
 */
const GridRow = memo(function GridRow({ row, rowIndex, sections, texts, matches, selectedId, tabStop, textNow, timer, adopt }: RowProps) {
  const html = adopt ? '' : floorMarkup({ floor: row.floor, slots: row.slots, sections, texts: texts(), matches, selectedId, tabStop, textNow, timer });
  return <div role="row" aria-rowindex={rowIndex + 2} className="grid-row" dangerouslySetInnerHTML={{ __html: html }} suppressHydrationWarning />;
  // the tab stop is not compared: a cell takes it on focus, between a click's mousedown and its click, and a
  // floor written then would take the pressed cell away and the click with it; the grid moves the stop's
  // tabindex itself, and a floor written for another reason writes the stop where it is
}, (a, b) => a.signature === b.signature && a.matches === b.matches && a.selectedId === b.selectedId && a.rowIndex === b.rowIndex);

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
  const tc = useTranslations('countdown');
  const locale = useLocale();
  const lang: DurationLocale = locale === 'en' ? 'en' : 'ru';
  const f = useFormat();
  // narrow: only matching cells are laid out, so floors and columns without a match disappear
  const layout = useMemo(
    () => (narrow ? buildLayout({ cells: grid.cells.filter((c) => cellMatches(c, filter)), building: { ...grid.building, floors: 0 } }) : buildLayout(grid)),
    [grid, narrow, filter],
  );
  const containerRef = useRef<HTMLDivElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  useWholeBuildingFit(scrollRef, density === 'whole', layout);
  useSelectedInView(scrollRef, selectedId);
  const [focusedId, setFocusedId] = useState<string | null>(null);
  const moveRequested = useRef(false);
  // the time the timers' first text is computed at: the first read's server time, the same on the
  // server and at hydration (a clock read would differ between the two and fail the hydration)
  const [textNow] = useState(() => grid.serverNow.getTime());

  // the roving tab stop: the selected cell, else the last focused one, else the first cell
  const tabStop = focusedId && layout.position.has(focusedId)
    ? focusedId
    : selectedId && layout.position.has(selectedId)
      ? selectedId
      : layout.rows.flatMap((r) => r.slots).find(Boolean)?.id ?? null;

  // the cell that has the focus: a floor written again replaces its cells' elements, and the focus
  // would fall to the page's body with the one it was on
  const focusedCell = useRef<string | null>(null);

  const compact = density === 'compact';
  const overdueShort = useCallback((time: string) => tc('overdueShort', { time }), [tc]);
  const timer = useCallback((until: number, now: number) => timerText(until, now, lang, overdueShort, compact), [lang, overdueShort, compact]);

  // every cell's text in one pass over the board, when the data, the language or the price mode
  // change: a message with a plural per room count, the numbers of floors, sections and areas are
  // formatted once per value; the cell sentence has plain {arguments} only, filled in per cell
  // made on first use: while hydrating, no floor asks (their cells are the server's)
  const texts = useMemo(() => lazyOnce((): Texts => {
    const status = { Free: ts('Free'), Reserved: ts('Reserved'), Booked: ts('Booked'), Sold: ts('Sold'), Hidden: ts('Hidden') };
    const statusShort = { Free: ts('short.Free'), Reserved: ts('short.Reserved'), Booked: ts('short.Booked'), Sold: ts('short.Sold'), Hidden: ts('short.Hidden') };
    const perValue = <K,>(format: (n: K) => string) => {
      const seen = new Map<K, string>();
      return (n: K) => {
        let text = seen.get(n);
        if (text === undefined) seen.set(n, (text = format(n)));
        return text;
      };
    };
    const integer = perValue(f.integer);
    const area = perValue(f.area);
    const roomsShort = perValue((n: number) => (n === 0 ? t('studioShort') : t('roomsShort', { n })));
    const rooms = perValue((n: number) => (n === 0 ? t('studio') : t('rooms', { n })));
    const m2 = t('m2');
    const ariaLabel = fillIn(t, 'cellAria', ['number', 'floor', 'section', 'rooms', 'area', 'price', 'status', 'until']);
    const out = new Map<string, CellText>();
    for (const cell of grid.cells) {
      const until = cell.status === 'Reserved' ? cell.reservedUntil : cell.status === 'Booked' ? cell.bookedUntil : null;
      const areaText = area(cell.area);
      out.set(cell.id, {
        // the deadline is in the timer's words, which are part of the cell's name (a clock time would
        // be in the server's time zone in the first HTML)
        aria: ariaLabel({
          number: cell.number, floor: integer(cell.floor), section: integer(cell.section), rooms: rooms(cell.rooms),
          area: areaText, price: f.money(cell.price), status: status[cell.status], until: '',
        }).trimEnd(),
        short: statusShort[cell.status],
        meta: `${roomsShort(cell.rooms)} · ${areaText} ${m2}`,
        // a compact cell has room for "22,41 млн ₽", not for "312,45 тыс. ₽/м²": there the price per m² is in thousands
        price: !pricePerM2
          ? `${f.compactMoney(cell.price)} ₽`
          : compact
            ? `${f.compactMoney(Math.round(cell.price / cell.area / 1000) * 1000)}/${m2}`
            : `${f.compactMoney(Math.round(cell.price / cell.area))} ₽/${m2}`,
        until: until ? until.getTime() : null,
      });
    }
    return out;
  }), [grid.cells, t, ts, f, pricePerM2, compact]);

  // per floor: what its rendering depends on, compared instead of its 40 cells' elements
  const textsKey = `${locale}|${density}|${pricePerM2 ? 1 : 0}|${layout.sections.map((s) => `${s.start}+${s.width}`).join(',')}|`;
  const rowKeys = useMemo(() => layout.rows.map((row) => textsKey + row.slots.map((c) => (c
    ? `${c.id}:${c.version}:${c.status}:${c.price}:${c.area}:${c.rooms}:${c.number}:${(c.reservedUntil ?? c.bookedUntil)?.getTime() ?? ''}`
    : '-')).join(',')), [layout, textsKey]);
  const rowMatches = useMemo(() => layout.rows.map((row) => {
    let s = '';
    for (const c of row.slots) if (c) s += cellMatches(c, filter) ? '1' : '0';
    return s;
  }), [layout, filter]);

  // the countdowns: one ticker for the board writes the timers' text straight into their elements
  // (React renders a timer's first text only), so a second's tick touches only the timers
  const tickRef = useRef<() => void>(() => {});
  useEffect(() => {
    const box = containerRef.current;
    if (!box) return;
    const timers = box.getElementsByClassName('cell-timer') as HTMLCollectionOf<HTMLElement>;
    const tick = () => {
      const now = currentNow();
      for (const el of timers) {
        const until = Number(el.dataset.until);
        const text = timer(until, now);
        if (el.textContent !== text) el.textContent = text;
        const overdue = until < now;
        if (el.classList.contains('countdown-overdue') !== overdue) el.classList.toggle('countdown-overdue', overdue);
        el.dataset.remainingMs = String(Math.round(until - now));
        if (el.dataset.titled !== el.dataset.until) {
          el.dataset.titled = el.dataset.until;
          el.title = `${f.dateTime(new Date(until))} · ${f.utc(new Date(until))}`;
        }
      }
    };
    tickRef.current = tick;
    tick();
    return subscribeNow(tick);
  }, [timer, f]);
  // after a render: the timers a floor wrote again get their text before the frame is painted; a key
  // move focuses its target; otherwise a focused cell whose floor was written again gets the focus back
  useLayoutEffect(() => {
    tickRef.current();
    const box = containerRef.current;
    const cell = (id: string) => box?.querySelector<HTMLElement>(`[data-cell-id="${CSS.escape(id)}"]`);
    box?.querySelectorAll<HTMLElement>('[role=gridcell][tabindex="0"]').forEach((el) => { if (el.dataset.cellId !== tabStop) el.tabIndex = -1; });
    if (tabStop) {
      const stop = cell(tabStop);
      if (stop) stop.tabIndex = 0;
    }
    if (moveRequested.current && tabStop) {
      moveRequested.current = false;
      const el = cell(tabStop);
      el?.focus();
      el?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      return;
    }
    const id = focusedCell.current;
    if (id && (!document.activeElement || document.activeElement === document.body)) cell(id)?.focus({ preventScroll: true });
  });

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
    focusedCell.current = id ?? null;
    if (id) setFocusedId(id);
  }, []);

  // the focus left the grid for good (not for another window, not with its cell's floor written again)
  const onBlur = useCallback((e: React.FocusEvent<HTMLDivElement>) => {
    const next = e.relatedTarget as Node | null;
    if (next && containerRef.current?.contains(next)) return;
    const left = e.target as Node;
    queueMicrotask(() => {
      if (left.isConnected && document.hasFocus() && document.activeElement !== left) focusedCell.current = null;
    });
  }, []);

  // true once the board handles keys and clicks (hydrated): the cells come in the server's HTML, and the
  // bench's "interactive" mark is this attribute (docs/decisions/0020-grid-rendered-in-the-browser.md)
  const hydrated = useSyncExternalStore(noSubscription, () => true, () => false);
  // the server writes every floor; the browser, while hydrating, keeps what the server wrote
  const adopt = !hydrated && typeof window !== 'undefined';
  const rowOf = (id: string | null) => (id ? layout.position.get(id)?.row ?? -1 : -1);
  const selectedRow = rowOf(selectedId);
  const tabStopRow = rowOf(tabStop);

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
        onBlur={onBlur}
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
          <GridRow
            key={row.floor}
            row={row}
            rowIndex={r}
            sections={layout.sections}
            texts={texts}
            signature={rowKeys[r]}
            matches={rowMatches[r]}
            selectedId={selectedRow === r ? selectedId : null}
            tabStop={tabStopRow === r ? tabStop : null}
            textNow={textNow}
            timer={timer}
            adopt={adopt}
          />
        ))}
      </div>
    </div>
  );
}

/**
 * The selected cell stays in sight: when the drawer opens beside the board, the board's box narrows
 * and a cell near its right edge would end up scrolled out of it; the box is scrolled to the cell
 * whenever its size changes while a cell is selected (and once when one is).
 */
function useSelectedInView(ref: RefObject<HTMLDivElement | null>, selectedId: string | null) {
  useEffect(() => {
    const box = ref.current;
    if (!box || !selectedId) return;
    const reveal = () => {
      const el = box.querySelector<HTMLElement>(`[data-cell-id="${CSS.escape(selectedId)}"]`);
      if (!el) return;
      const b = box.getBoundingClientRect();
      const c = el.getBoundingClientRect();
      // the floor numbers and the section heads stick to the box's left and top edges
      const left = b.left + (box.querySelector<HTMLElement>('.floor-head')?.offsetWidth ?? 0);
      const top = b.top + (box.querySelector<HTMLElement>('.grid-head')?.offsetHeight ?? 0);
      if (c.left >= left && c.right <= b.left + box.clientWidth && c.top >= top && c.bottom <= b.top + box.clientHeight) return;
      box.scrollBy({
        left: c.right > b.left + box.clientWidth ? c.right - (b.left + box.clientWidth) + 8 : c.left < left ? c.left - left - 8 : 0,
        top: c.bottom > b.top + box.clientHeight ? c.bottom - (b.top + box.clientHeight) + 8 : c.top < top ? c.top - top - 8 : 0,
      });
    };
    const observer = new ResizeObserver(reveal);
    observer.observe(box);
    return () => observer.disconnect();
  }, [ref, selectedId]);
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
      // a phone scrolls a whole building sideways anyway: there a cell keeps room for a four-digit number
      // (26 px cut "4251" to "425"); a desktop's 1366 px hold 40 units at 29 px
      const minW = box.clientWidth < 760 ? 32 : 26;
      const w = Math.min(104, Math.max(minW, Math.floor(availW / cols)));
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
