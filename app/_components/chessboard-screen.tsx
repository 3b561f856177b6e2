'use client';
import { useQuery } from '@tanstack/react-query';
import { useTranslations } from 'next-intl';
import dynamic from 'next/dynamic';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { ChessboardGrid, cellMatches, isOverdue, type GridCell, type GridFilter } from './chessboard-grid';
import { currentNow, setServerNow, useNow, useNowWhile } from './clock';
import { ErrorNotice } from './error-notice';
import { unpackGrid, type PackedGrid } from './grid-pack';
import { DENSITIES, gridViewParams, readGridView, SHOW_MODES, type GridView } from './grid-view';
import { useLiveEvents } from './live';
import { OBJECT_STATUSES, STATUS_GLYPH } from './status';
import { useTRPC, type RouterOutputs } from './trpc';
import { useUrlFilters } from './use-url-filters';

// the drawer (booking, deal picker, catalog actions, dialogs) is loaded when a cell is opened, not with the board
const ObjectDrawer = dynamic(() => import('./object-drawer').then((m) => m.ObjectDrawer), { ssr: false });

const ROOM_OPTIONS = [0, 1, 2, 3, 4] as const;

const parseNum = (v: string): number | null => {
  const n = Number(v.replace(/\s/g, '').replace(',', '.'));
  return v.trim() === '' || !Number.isFinite(n) ? null : n;
};

/**
 * What the server read for the page's first HTML (app/(console)/chessboard/page.tsx): the lists and
 * the grid of the board in the URL. They seed the queries, so the board is in the HTML and hydration
 * asks the server for nothing.
 */
export interface InitialBoard {
  projects: RouterOutputs['chessboard']['projects'];
  projectId: string | null;
  buildings: RouterOutputs['chessboard']['buildings'] | null;
  buildingId: string | null;
  /** packed by column (grid-pack.ts): the HTML carries the cells as markup already */
  grid: PackedGrid | null;
}

export function ChessboardScreen({ initial }: { initial?: InitialBoard | null }) {
  const t = useTranslations('chessboard');
  const ts = useTranslations('status');
  const trpc = useTRPC();
  const { params, setParams } = useUrlFilters({ shallow: true });
  // the server's answers count as just received (the server's clock may not agree with this one)
  const [receivedAt] = useState(() => Date.now());
  const [initialGrid] = useState(() => (initial?.grid ? unpackGrid(initial.grid) : null));
  const seed = <T,>(data: T | null | undefined) => (data ? { initialData: data, initialDataUpdatedAt: receivedAt } : {});

  const projects = useQuery({ ...trpc.chessboard.projects.queryOptions(), ...seed(initial?.projects) });
  const projectId = params.get('project') ?? projects.data?.[0]?.id ?? null;
  const buildings = useQuery({
    ...trpc.chessboard.buildings.queryOptions({ projectId: projectId ?? '' }, { enabled: !!projectId }),
    ...seed(initial && initial.projectId === projectId ? initial.buildings : null),
  });
  const buildingId = params.get('building') ?? buildings.data?.[0]?.id ?? null;
  const grid = useQuery({
    ...trpc.chessboard.grid.queryOptions({ buildingId: buildingId ?? '' }, { enabled: !!buildingId }),
    ...seed(initial && initial.buildingId === buildingId ? initialGrid : null),
  });
  const objectId = params.get('object');
  const live = useLiveEvents(buildingId);

  useEffect(() => {
    // received at dataUpdatedAt (when the answer arrived), not when this effect runs after the cells
    // rendered: the render time is not clock skew
    if (grid.data) setServerNow(grid.data.serverNow, grid.dataUpdatedAt);
  }, [grid.data, grid.dataUpdatedAt]);

  // filters, density and display options live in the URL (a reload or a shared link shows the same board)
  // the view changes at once (a checkbox must not wait for the URL); a new URL (ours or Back) is adopted
  const paramString = params.toString();
  const urlView = useMemo(() => readGridView(new URLSearchParams(paramString)), [paramString]);
  const [viewState, setViewState] = useState(() => ({ key: paramString, view: urlView }));
  const view = viewState.key === paramString ? viewState.view : urlView;
  if (viewState.key !== paramString) setViewState({ key: paramString, view: urlView });
  const setView = (patch: Partial<GridView>) => {
    const next = { ...view, ...patch };
    setViewState({ key: paramString, view: next });
    setParams(gridViewParams(next));
  };
  const { statuses, rooms, overdue } = view;
  // the range inputs keep their own text while typing; the URL follows each change
  const [price, setPriceText] = useState(view.price);
  const [area, setAreaText] = useState(view.area);
  const setPrice = (next: { min: string; max: string }) => { setPriceText(next); setView({ price: next }); };
  const setArea = (next: { min: string; max: string }) => { setAreaText(next); setView({ area: next }); };
  // overdue holds depend on the time: the clock ticks here only while that filter is on
  const now = useNowWhile(overdue);
  const filter = useMemo<GridFilter>(() => ({
    statuses, rooms,
    priceMin: parseNum(price.min) === null ? null : parseNum(price.min)! * 1_000_000,
    priceMax: parseNum(price.max) === null ? null : parseNum(price.max)! * 1_000_000,
    areaMin: parseNum(area.min), areaMax: parseNum(area.max),
    overdueAt: overdue ? now || currentNow() : null,
  }), [statuses, rooms, price, area, overdue, now]);
  const activeFilters = statuses.size + rooms.size + (overdue ? 1 : 0) + (price.min || price.max ? 1 : 0) + (area.min || area.max ? 1 : 0);
  const [panelOpen, setPanelOpen] = useState(false);
  const filtered = filter.statuses.size > 0 || filter.rooms.size > 0 || overdue || price.min || price.max || area.min || area.max;
  const matching = useMemo(() => (grid.data ? grid.data.cells.filter((c) => cellMatches(c, filter)).length : 0), [grid.data, filter]);

  /** Focuses the next matching cell after the focused one (in reading order) and scrolls it into view. */
  // from the focused cell, else from the last match jumped to (pressing the button takes the focus)
  const lastMatch = useRef<string | null>(null);
  const jumpToMatch = useCallback(() => {
    const cells = [...document.querySelectorAll<HTMLElement>('.chess-grid [data-cell-id][data-match="true"]')];
    if (cells.length === 0) return;
    const focused = cells.indexOf(document.activeElement as HTMLElement);
    const at = focused >= 0 ? focused : cells.findIndex((c) => c.dataset.cellId === lastMatch.current);
    const next = cells[at >= 0 ? (at + 1) % cells.length : 0];
    lastMatch.current = next.dataset.cellId ?? null;
    next.focus();
    next.scrollIntoView({ block: 'center', inline: 'center' });
  }, []);

  const toggle = <T,>(set: Set<T>, value: T) => {
    const next = new Set(set);
    if (next.has(value)) next.delete(value);
    else next.add(value);
    return next;
  };

  const lastOpened = useRef<string | null>(null);
  const openObject = useCallback((id: string) => {
    lastOpened.current = id;
    setParams({ object: id });
  }, [setParams]);
  const closeDrawer = useCallback(() => {
    setParams({ object: null });
    // return focus to the cell the drawer was opened from
    const id = lastOpened.current ?? objectId;
    requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-cell-id="${id}"]`)?.focus());
  }, [setParams, objectId]);

  // the drawer's code is fetched once the board is idle, so the first click does not wait for it
  useEffect(() => {
    const load = () => void import('./object-drawer');
    if (typeof window.requestIdleCallback !== 'function') {
      const timer = setTimeout(load, 1000);
      return () => clearTimeout(timer);
    }
    const id = window.requestIdleCallback(load, { timeout: 3000 });
    return () => window.cancelIdleCallback(id);
  }, []);

  const building = buildings.data?.find((b) => b.id === buildingId);
  const project = projects.data?.find((p) => p.id === projectId);

  return (
    <div className={`chessboard-page${objectId ? ' with-drawer' : ''}`}>
      <div className="toolbar">
        <h1 className="page-title">{t('title')}</h1>
        <label className="field-inline">
          <span>{t('project')}</span>
          <select
            value={projectId ?? ''}
            onChange={(e) => setParams({ project: e.target.value, building: null, object: null })}
            disabled={!projects.data?.length}
            data-testid="project-select"
          >
            {projects.data?.map((p) => (
              <option key={p.id} value={p.id}>{p.name}</option>
            ))}
          </select>
        </label>
        <label className="field-inline">
          <span>{t('building')}</span>
          <select
            value={buildingId ?? ''}
            onChange={(e) => setParams({ building: e.target.value, object: null })}
            disabled={!buildings.data?.length}
            data-testid="building-select"
          >
            {buildings.data?.map((b) => (
              <option key={b.id} value={b.id}>{b.name}</option>
            ))}
          </select>
        </label>
        <span className={`live live-${live}`} role="status" data-testid="live-state" title={t(`live.${live}Hint`)}>
          <span aria-hidden="true">●</span> {t(`live.${live}`)}
        </span>
        {/* on a phone the view options and the filters fold behind this button, so the board is in the first screen */}
        <button
          type="button"
          className="btn btn-small filters-toggle"
          aria-expanded={panelOpen}
          aria-controls="board-view-options board-filters"
          onClick={() => setPanelOpen((open) => !open)}
          data-testid="filters-toggle"
        >
          {t('filters')}{activeFilters > 0 ? ` · ${activeFilters}` : ''}
        </button>
        <div className="view-options" role="group" aria-label={t('viewOptions')} id="board-view-options" data-open={panelOpen ? 'true' : undefined}>
          <div className="chips" role="group" aria-label={t('density.label')}>
            <span className="filter-label" aria-hidden="true">{t('density.label')}</span>
            {DENSITIES.map((d) => (
              <button key={d} type="button" className="chip" aria-pressed={view.density === d} onClick={() => setView({ density: d })} data-testid={`density-${d}`}>
                {t(`density.${d}`)}
              </button>
            ))}
          </div>
          <div className="chips" role="group" aria-label={t('show.label')}>
            <span className="filter-label" aria-hidden="true">{t('show.label')}</span>
            {SHOW_MODES.map((m) => (
              <button key={m} type="button" className="chip" aria-pressed={view.show === m} onClick={() => setView({ show: m })} data-testid={`show-${m}`}>
                {t(`show.${m}`)}
              </button>
            ))}
          </div>
          <label className="check-inline">
            <input type="checkbox" checked={view.pricePerM2} onChange={(e) => setView({ pricePerM2: e.target.checked })} data-testid="price-per-m2" />
            <span>{t('pricePerM2')}</span>
          </label>
        </div>
      </div>

      <ErrorNotice error={projects.error ?? buildings.error ?? grid.error} />
      {projects.data && projects.data.length === 0 ? <p className="empty-state">{t('noProjects')}</p> : null}

      <div className="filters" role="group" aria-label={t('filters')} id="board-filters" data-open={panelOpen ? 'true' : undefined}>
        <div className="legend" role="group" aria-label={t('legend')}>
          {OBJECT_STATUSES.map((s) => (
            <button
              key={s}
              type="button"
              className={`legend-item status-${s}`}
              aria-pressed={statuses.has(s)}
              onClick={() => setView({ statuses: toggle(statuses, s) })}
              data-testid={`legend-${s}`}
            >
              <span className="legend-swatch" aria-hidden="true">{STATUS_GLYPH[s]}</span>
              <span>{ts(s)}</span>
              <span className="legend-count">{grid.data ? grid.data.counts[s] : '–'}</span>
            </button>
          ))}
          <OverdueLegend cells={grid.data?.cells ?? null} pressed={overdue} onToggle={() => setView({ overdue: !overdue })} />
        </div>
        <div className="filter-row">
          <div className="chips" role="group" aria-label={t('roomsFilter')}>
            <span className="filter-label">{t('roomsFilter')}</span>
            {ROOM_OPTIONS.map((n) => (
              <button key={n} type="button" className="chip" aria-pressed={rooms.has(n)} onClick={() => setView({ rooms: toggle(rooms, n) })}>
                {n === 0 ? t('studioShort') : n === 4 ? '4+' : n}
              </button>
            ))}
          </div>
          <fieldset className="range">
            <legend className="filter-label">{t('priceFilter')}</legend>
            <input inputMode="decimal" aria-label={t('priceMin')} placeholder={t('from')} value={price.min} onChange={(e) => setPrice({ ...price, min: e.target.value })} />
            <span aria-hidden="true">–</span>
            <input inputMode="decimal" aria-label={t('priceMax')} placeholder={t('to')} value={price.max} onChange={(e) => setPrice({ ...price, max: e.target.value })} />
          </fieldset>
          <fieldset className="range">
            <legend className="filter-label">{t('areaFilter')}</legend>
            <input inputMode="decimal" aria-label={t('areaMin')} placeholder={t('from')} value={area.min} onChange={(e) => setArea({ ...area, min: e.target.value })} />
            <span aria-hidden="true">–</span>
            <input inputMode="decimal" aria-label={t('areaMax')} placeholder={t('to')} value={area.max} onChange={(e) => setArea({ ...area, max: e.target.value })} />
          </fieldset>
          <span className="muted small match-count" aria-live="polite">
            {grid.data ? (filtered ? t('matching', { n: matching, total: grid.data.total }) : t('total', { total: grid.data.total })) : ''}
          </span>
          {filtered ? (
            <>
              <button type="button" className="btn btn-small" onClick={jumpToMatch} disabled={matching === 0} data-testid="jump-to-match">
                {t('jumpToMatch')}
              </button>
              <button
                type="button"
                className="btn btn-small"
                onClick={() => {
                  setPriceText({ min: '', max: '' });
                  setAreaText({ min: '', max: '' });
                  setView({ statuses: new Set(), rooms: new Set(), overdue: false, price: { min: '', max: '' }, area: { min: '', max: '' } });
                }}
              >
                {t('resetFilters')}
              </button>
            </>
          ) : null}
        </div>
      </div>

      <div className="board-area" id="board">
        {grid.isPending && buildingId ? <div className="grid-skeleton" aria-busy="true">{t('loading')}</div> : null}
        {!buildingId && buildings.data && buildings.data.length === 0 ? <p className="empty-state">{t('noBuildings')}</p> : null}
        {grid.data && grid.data.cells.length === 0 ? <p className="empty-state">{t('noObjects')}</p> : null}
        {grid.data && grid.data.cells.length > 0 ? (
          <ChessboardGrid
            grid={grid.data}
            filter={filter}
            density={view.density}
            narrow={view.show === 'narrow' && !!filtered}
            pricePerM2={view.pricePerM2}
            selectedId={objectId}
            onOpen={openObject}
            label={t('gridLabel', { project: project?.name ?? '', building: building?.name ?? grid.data.building.name })}
          />
        ) : null}
      </div>
      {objectId ? <ObjectDrawer key={objectId} objectId={objectId} onClose={closeDrawer} /> : null}
    </div>
  );
}

/** The "overdue hold" legend item: how many holds are past their deadline now; pressing it filters to them. */
function OverdueLegend({ cells, pressed, onToggle }: { cells: GridCell[] | null; pressed: boolean; onToggle: () => void }) {
  const t = useTranslations('chessboard');
  const now = useNow();
  const count = cells && now ? cells.filter((c) => isOverdue(c, now)).length : null;
  return (
    <button type="button" className="legend-item legend-overdue" title={t('overdueHint')} aria-pressed={pressed} onClick={onToggle} data-testid="legend-overdue">
      <span className="legend-swatch" aria-hidden="true">⚠</span>
      <span>{t('overdue')}</span>
      <span className="legend-count">{count ?? '–'}</span>
    </button>
  );
}
