import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Actor } from '../../server/auth/actor';
import { getGrid } from '../../server/chessboard/queries';
import { createDatabase } from '../../server/platform/db';
import type { BenchCase } from '../lib/context';
import { rawClient } from '../lib/db';
import { sampled, type Metric } from '../lib/report';
import { median } from '../lib/stats';

/**
 * The chessboard of a 1,000-unit building (4 sections × 25 floors × 10; Free/Reserved/Booked/Sold/
 * Hidden mix with live timers): (1) the data query, server/chessboard/queries.ts getGrid, on a
 * drizzle database like the web app's, compared with the same two statements through postgres.js;
 * (2) the page in Chromium (Debian's /usr/bin/chromium through Playwright, signed in as pin_manager):
 * from navigation start until all 1,000 cells are in the DOM (they come in the server's HTML), painted,
 * and the board hydrated, read from the page's own clock (performance.now() is relative to the
 * navigation's time origin).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** What one page load measured (page clock, ms from navigation start; Chromium's counters). */
interface LoadFigures {
  ready: number; interactive: number; painted: number; htmlKiB: number; scriptKiB: number; scripts: number; firstByte: number; lastByte: number; domContentLoaded: number;
  gridElements: number; gridRequests: number; nodes: number; scriptMs: number; styleMs: number; layoutMs: number; taskMs: number;
}

export const chessboardGridCase: BenchCase = {
  name: 'chessboard-grid',
  title: 'chessboard grid of a 1,000-unit building',
  async run(ctx) {
    const { url, fixture } = await ctx.stack.database();
    const queries = ctx.quick ? 30 : 200;
    const loads = ctx.quick ? 3 : 15;

    // (1) data query
    const database = createDatabase(url, { max: 5, applicationName: 'pin-bench-grid' });
    const sql = rawClient(url, 5);
    const queryMs: number[] = [];
    const rawMs: number[] = [];
    let cells = 0;
    try {
      const [pin] = await sql<{ id: string }[]>`SELECT id FROM auth.users WHERE email = 'pin-manager@pin.local'`;
      const actor: Actor = { userId: pin.id, role: 'pin_manager', tenantId: null };
      const raw = async () => {
        const [building] = await sql`SELECT b.id, b.name, b.sections, b.floors, b.project_id, p.name AS project_name, b.tenant_id
          FROM chessboard.buildings b JOIN chessboard.projects p ON p.id = b.project_id WHERE b.id = ${fixture.gridBuildingId}`;
        const rows = await sql`SELECT id, number, floor, section, rooms, area, price, status, reserved_until, booked_until, hold_deal_id,
            status_changed_at, version
          FROM chessboard.property_objects WHERE building_id = ${building.id} ORDER BY floor DESC, section, number`;
        return rows.length;
      };
      for (let i = 0; i < 10; i++) { await getGrid(database.db, actor, fixture.gridBuildingId); await raw(); } // warm-up
      for (let i = 0; i < queries; i++) {
        let t0 = performance.now();
        const grid = await getGrid(database.db, actor, fixture.gridBuildingId);
        queryMs.push(performance.now() - t0);
        cells = grid.total;
        t0 = performance.now();
        await raw();
        rawMs.push(performance.now() - t0);
      }
      if (cells !== 1000) throw new Error(`grid returned ${cells} cells, expected 1000`);
    } finally {
      await database.close();
      await sql.end({ timeout: 5 });
    }

    // (2) page ready in Chromium
    await ctx.stack.stopWorker();
    const base = await ctx.stack.startWeb();
    const cookie = await ctx.stack.signIn();
    const [name, value] = cookie.split('=');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    // one record per measured load; each metric below is one field of them
    const measured: LoadFigures[] = [];
    try {
      const context = await browser.newContext({ viewport: { width: 1600, height: 1000 }, locale: 'ru-RU', timezoneId: 'Europe/Moscow' });
      await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Lax' }]);
      const target = `${base}/chessboard?project=${fixture.gridProjectId}&building=${fixture.gridBuildingId}`;
      const load = async (cpuProfileFile?: string): Promise<LoadFigures> => {
        const page = await context.newPage();
        // Chromium's own counters for the load (cumulative for this page's renderer): where the main
        // thread's time went (script, style recalculation, layout) and how many DOM nodes the page has
        const cdp = await context.newCDPSession(page);
        await cdp.send('Performance.enable');
        if (cpuProfileFile) {
          await cdp.send('Profiler.enable');
          await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
          await cdp.send('Profiler.start');
        }
        try {
          await page.goto(target, { waitUntil: 'commit' });
          // one poll per frame records when each condition first held: the cells are in the DOM (parsed from
          // the server's HTML) and shown — a page streamed in a Suspense boundary parses them into a hidden
          // segment first and shows them when React reveals it, up to 300 ms later — and the grid is hydrated (takes keys and clicks; see
          // docs/decisions/0020-grid-rendered-in-the-browser.md)
          // painted: the first frame after the one the cells entered — a frame's rAF callbacks run before
          // its style, layout and paint, so the next frame's callback comes after the cells were painted
          const handle = await page.waitForFunction(() => {
            const w = window as unknown as { __ready?: number; __interactive?: number; __painted?: number; __frame?: number; __readyFrame?: number };
            w.__frame = (w.__frame ?? 0) + 1;
            if (w.__ready !== undefined && w.__painted === undefined && w.__frame > w.__readyFrame!) w.__painted = performance.now();
            if (w.__ready === undefined && document.querySelectorAll('[data-cell-id]').length >= 1000 && document.querySelector('.chess-grid')!.checkVisibility()) {
              w.__ready = performance.now();
              w.__readyFrame = w.__frame;
            }
            w.__interactive ??= document.querySelector('[role=grid][data-hydrated]') ? performance.now() : undefined;
            return w.__painted !== undefined && w.__interactive !== undefined ? { ready: w.__ready, interactive: w.__interactive, painted: w.__painted } : false;
          }, undefined, { polling: 'raf', timeout: 30_000 });
          const { ready, interactive, painted } = (await handle.jsonValue()) as { ready: number; interactive: number; painted: number };
          const nav = await page.evaluate(() => {
            const n = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
            // requests for the grid while loading: none, the server's read is in the HTML
            const grid = (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
              .filter((e) => e.name.includes('/api/trpc/') && e.name.includes('chessboard.grid'));
            const scripts = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter((e) => e.initiatorType === 'script');
            return {
              htmlKiB: n.decodedBodySize / 1024, scriptKiB: scripts.reduce((sum, e) => sum + e.decodedBodySize, 0) / 1024, scripts: scripts.length,
              firstByte: n.responseStart, lastByte: n.responseEnd, domContentLoaded: n.domContentLoadedEventEnd,
              gridElements: document.querySelectorAll('.chess-grid *').length,
              gridRequests: grid.length,
            };
          });
          if (cpuProfileFile) {
            const { profile } = await cdp.send('Profiler.stop');
            fs.writeFileSync(cpuProfileFile, JSON.stringify(profile));
          }
          const { metrics } = await cdp.send('Performance.getMetrics');
          const m = (name: string) => metrics.find((x) => x.name === name)?.value ?? NaN;
          const chrome = {
            nodes: m('Nodes'), scriptMs: m('ScriptDuration') * 1000, styleMs: m('RecalcStyleDuration') * 1000,
            layoutMs: m('LayoutDuration') * 1000, taskMs: m('TaskDuration') * 1000,
          };
          return { ready, interactive, painted, ...nav, ...chrome };
        } finally {
          await page.close();
        }
      };
      for (let i = 0; i < 2; i++) await load(); // warm-up: server route compiled into memory, browser cache primed
      for (let i = 0; i < loads; i++) measured.push(await load());
      // BENCH_BROWSER_CPU_PROF=<dir>: one more load under Chromium's sampling profiler (not in the figures)
      if (process.env.BENCH_BROWSER_CPU_PROF) {
        fs.mkdirSync(process.env.BENCH_BROWSER_CPU_PROF, { recursive: true });
        const file = path.join(process.env.BENCH_BROWSER_CPU_PROF, `chessboard-grid-${Date.now()}.cpuprofile`);
        await load(file);
        ctx.log(`browser CPU profile: ${file}`);
      }
      // BENCH_BROWSER_TRACE=<dir>: one more load under Chromium's performance trace (devtools.timeline:
      // parse, script, style, layout, paint with their times; not in the figures) — what happens when
      if (process.env.BENCH_BROWSER_TRACE) {
        fs.mkdirSync(process.env.BENCH_BROWSER_TRACE, { recursive: true });
        const file = path.join(process.env.BENCH_BROWSER_TRACE, `chessboard-grid-${Date.now()}.trace.json`);
        const page = await context.newPage();
        try {
          await browser.startTracing(page, { path: file, categories: ['devtools.timeline', 'blink.user_timing', 'loading', 'disabled-by-default-devtools.timeline'] });
          await page.goto(target, { waitUntil: 'commit' });
          await page.waitForFunction(() => document.querySelector('[role=grid][data-hydrated]') && document.querySelectorAll('[data-cell-id]').length >= 1000 && document.querySelector('.chess-grid')!.checkVisibility(),
            undefined, { polling: 'raf', timeout: 30_000 });
          await page.waitForTimeout(1000); // the frames after the cells are in: style, layout, paint
          await browser.stopTracing();
        } finally {
          await page.close();
        }
        ctx.log(`browser trace: ${file}`);
      }
      await context.close();
      // BENCH_SCREENSHOTS=<dir>: the board once ready, at the bench's desktop size and at a phone's
      if (process.env.BENCH_SCREENSHOTS) {
        fs.mkdirSync(process.env.BENCH_SCREENSHOTS, { recursive: true });
        for (const [label, viewport] of [['desktop', { width: 1600, height: 1000 }], ['phone', { width: 390, height: 844 }]] as const) {
          const shots = await browser.newContext({ viewport, locale: 'ru-RU', timezoneId: 'Europe/Moscow', isMobile: label === 'phone', hasTouch: label === 'phone' });
          await shots.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Lax' }]);
          const page = await shots.newPage();
          await page.goto(target);
          await page.waitForFunction(() => document.querySelectorAll('[data-cell-id]').length >= 1000 && document.querySelector('.chess-grid')!.checkVisibility(), undefined, { timeout: 30_000 });
          await page.waitForTimeout(1500); // a countdown tick
          await page.screenshot({ path: path.join(process.env.BENCH_SCREENSHOTS, `chessboard-grid-${label}.png`) });
          await shots.close();
        }
      }
    } finally {
      await browser.close();
    }
    const c = 'chessboard-grid';
    const of = (field: keyof LoadFigures) => measured.map((l) => l[field]);
    const pageMs = of('ready');
    const gridElementsPerCell = of('gridElements').map((n) => n / 1000);
    const metrics: Metric[] = [
      sampled({ case: c, metric: 'data query getGrid (1,000 cells)', unit: 'ms', ratio: median(queryMs) / median(rawMs), ratioLabel: 'of raw SQL',
        budget: 'median ≤ 20 ms', pass: median(queryMs) <= 20 }, queryMs),
      sampled({ case: c, metric: 'same statements via postgres.js', unit: 'ms' }, rawMs),
      sampled({ case: c, metric: 'page ready in Chromium (1,000 cells in DOM)', unit: 'ms', budget: '≤ 1 s', pass: median(pageMs) <= 1000,
        note: `navigation start → 1,000 [data-cell-id] elements, shown (not in a hidden streamed segment), page clock; ${loads} loads after 2 warm-up loads, signed in as pin_manager` }, pageMs),
      sampled({ case: c, metric: 'page painted (first frame after the cells)', unit: 'ms', budget: '≤ 600 ms', pass: median(of('painted')) <= 600,
        note: 'navigation start → the first animation frame after the one in which the 1,000 cells entered the DOM (that frame\'s style, layout and paint are done)' }, of('painted')),
      sampled({ case: c, metric: 'page: HTML (decoded, with the inline RSC payload)', unit: 'KiB' }, of('htmlKiB')),
      sampled({ case: c, metric: 'page: scripts (decoded)', unit: 'KiB', note: 'sum of decodedBodySize of the script resources' }, of('scriptKiB')),
      sampled({ case: c, metric: 'page: first byte of the HTML', unit: 'ms', note: 'navigation start → responseStart' }, of('firstByte')),
      sampled({ case: c, metric: 'page: last byte of the HTML', unit: 'ms', note: 'navigation start → responseEnd' }, of('lastByte')),
      sampled({ case: c, metric: 'page: DOMContentLoaded', unit: 'ms', note: 'navigation start → domContentLoadedEventEnd (the scripts ran)' }, of('domContentLoaded')),
      sampled({ case: c, metric: 'page interactive (grid hydrated)', unit: 'ms', budget: '≤ 1 s', pass: median(of('interactive')) <= 1000,
        note: 'navigation start → the grid element carries data-hydrated (keys and clicks are handled)' }, of('interactive')),
      sampled({ case: c, metric: 'page: grid requests while loading', unit: 'requests', note: 'tRPC requests with chessboard.grid up to ready and interactive (the grid is in the HTML: 0)' }, of('gridRequests')),
      sampled({ case: c, metric: 'page: DOM nodes', unit: 'nodes', note: 'Chromium Performance.getMetrics Nodes once ready and interactive' }, of('nodes')),
      sampled({ case: c, metric: 'page: grid elements per cell', unit: 'elements', note: 'elements inside .chess-grid / 1,000' }, gridElementsPerCell),
      sampled({ case: c, metric: 'page: main thread, script', unit: 'ms', note: 'Performance.getMetrics ScriptDuration up to ready and interactive' }, of('scriptMs')),
      sampled({ case: c, metric: 'page: main thread, style recalculation', unit: 'ms', note: 'RecalcStyleDuration' }, of('styleMs')),
      sampled({ case: c, metric: 'page: main thread, layout', unit: 'ms', note: 'LayoutDuration' }, of('layoutMs')),
      sampled({ case: c, metric: 'page: main thread, all tasks', unit: 'ms', note: 'TaskDuration' }, of('taskMs')),
    ];
    return metrics;
  },
};
