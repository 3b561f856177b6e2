import { expect, test, type Page, type Route } from '@playwright/test';
import { signIn, trpcQuery, USERS } from './helpers';

// a loaded 2-core machine renders a 1,000-cell board slowly: generous per-test time
test.describe.configure({ timeout: 240_000 });

/** #19 point 1: density modes, filters that narrow or jump, view state in the URL, price per m², overdue filter. */

interface Cell { id: string; number: string; status: string; price: number; area: number; floor: number; section: number; reservedUntil: string | null; bookedUntil: string | null }
interface Grid { cells: Cell[]; building: { floors: number; sections: number } }
interface Project { id: string; name: string }
interface Building { id: string }

async function buildingsOf(page: Page) {
  const out: { projectId: string; buildingId: string; grid: Grid }[] = [];
  for (const p of await trpcQuery<Project[]>(page.request, 'chessboard.projects', undefined)) {
    for (const b of await trpcQuery<Building[]>(page.request, 'chessboard.buildings', { projectId: p.id })) {
      out.push({ projectId: p.id, buildingId: b.id, grid: await trpcQuery<Grid>(page.request, 'chessboard.grid', { buildingId: b.id }) });
    }
  }
  return out;
}

/**
 * The seed's largest building is 25 floors × 4 sections × 4 units; the "whole building" promise is
 * about 25 × 4 × 10. The real grid answer of a seeded building is taken from the server and its cells
 * replaced by 1,000 generated ones (same shape, superjson intact) — only the layout is under test.
 */
async function serveThousandUnitBuilding(route: Route) {
  const response = await route.fetch();
  const body = await response.json();
  const paths = new URL(route.request().url()).pathname.replace('/api/trpc/', '').split(',');
  const entries = Array.isArray(body) ? body : [body];
  const at = paths.indexOf('chessboard.grid');
  const data = entries[at].result.data;
  const template = data.json.cells[0];
  const cells = [];
  for (let section = 1; section <= 4; section++) {
    for (let floor = 1; floor <= 25; floor++) {
      for (let i = 1; i <= 10; i++) {
        const n = (section * 1000 + floor * 10 + i).toString(16).padStart(12, '0');
        cells.push({
          // apartments numbered through the building, 1…1000 (the longest number has four digits)
          ...template, id: `00000000-0000-4000-8000-${n}`, number: String((section - 1) * 250 + (floor - 1) * 10 + i),
          section, floor, status: i % 7 === 0 ? 'Sold' : 'Free', reservedUntil: null, bookedUntil: null,
        });
      }
    }
  }
  data.json.cells = cells;
  data.json.building = { ...data.json.building, floors: 25, sections: 4 };
  data.json.total = cells.length;
  data.json.counts = { Free: cells.filter((c) => c.status === 'Free').length, Reserved: 0, Booked: 0, Sold: cells.filter((c) => c.status === 'Sold').length, Hidden: 0 };
  if (data.meta?.values) for (const key of Object.keys(data.meta.values)) if (key.startsWith('cells.')) delete data.meta.values[key];
  await route.fulfill({ response, json: body });
}

test('whole building: 25 floors × 4 sections × 10 units fit 1366×768 without scrolling; number and glyph stay readable', async ({ page }, testInfo) => {
  await signIn(page, USERS.devManager);
  await page.setViewportSize({ width: 1366, height: 768 });
  await page.route(/\/api\/trpc\/[^?]*chessboard\.grid/, serveThousandUnitBuilding);
  await page.goto('/chessboard?density=whole');
  const grid = page.getByRole('grid');
  await expect(grid.getByRole('gridcell')).toHaveCount(1000);
  await expect(page.getByTestId('density-whole')).toHaveAttribute('aria-pressed', 'true');

  const fit = await page.evaluate(() => {
    const box = document.querySelector<HTMLElement>('.grid-scroll')!;
    const cells = [...document.querySelectorAll<HTMLElement>('[role=gridcell]')];
    const outside = cells.filter((c) => {
      const r = c.getBoundingClientRect();
      return r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight;
    }).length;
    const bad = cells.filter((c) => {
      const cell = c.getBoundingClientRect();
      const num = c.querySelector('.cell-number')!.getBoundingClientRect();
      const glyph = c.querySelector('.glyph')!.getBoundingClientRect();
      const inside = (r: DOMRect) => r.width > 0 && r.left >= cell.left && r.right <= cell.right + 0.5 && r.top >= cell.top && r.bottom <= cell.bottom + 0.5;
      const overlap = num.left < glyph.right && glyph.left < num.right && num.top < glyph.bottom && glyph.top < num.bottom;
      return !inside(num) || !inside(glyph) || overlap;
    });
    const unreadable = bad.length;
    // what failed, for the message: the first cells' number, glyph and cell boxes
    const r = (el: Element) => { const b = el.getBoundingClientRect(); return `${b.left.toFixed(1)},${b.top.toFixed(1)} ${b.width.toFixed(1)}×${b.height.toFixed(1)}`; };
    const detail = bad.slice(0, 3).map((c) => `${c.querySelector('.cell-number')!.textContent}: cell ${r(c)} number ${r(c.querySelector('.cell-number')!)} glyph ${r(c.querySelector('.glyph')!)}`);
    return {
      boxScroll: { w: box.scrollWidth - box.clientWidth, h: box.scrollHeight - box.clientHeight },
      page: { w: document.scrollingElement!.scrollWidth - innerWidth, h: document.scrollingElement!.scrollHeight - innerHeight },
      outside, unreadable, detail,
      numberFont: parseFloat(getComputedStyle(document.querySelector('.cell-number')!).fontSize),
    };
  });
  await page.screenshot({ path: 'docs/screenshots/grid-whole-building-1000-desktop.png' });
  await testInfo.attach('whole-building', { body: await page.screenshot(), contentType: 'image/png' });
  expect(fit).toEqual({ boxScroll: { w: 0, h: 0 }, page: { w: 0, h: 0 }, outside: 0, unreadable: 0, detail: [], numberFont: fit.numberFont });
  expect(fit.numberFont).toBeGreaterThanOrEqual(10);

  // the status marker's short text is its ::after (the cell has few elements): drawn beside the glyph in
  // the comfortable mode only — the marker box is as wide as the glyph here, and wider there
  const markerExtra = () => page.evaluate(() => {
    const glyph = document.querySelector<HTMLElement>('.cell .glyph')!;
    const text = document.createRange();
    text.selectNodeContents(glyph);
    return { extra: glyph.getBoundingClientRect().width - text.getBoundingClientRect().width, short: glyph.dataset.short };
  });
  expect((await markerExtra()).extra).toBeLessThan(1);

  // the comfortable mode of the same building needs scrolling (the mode is what makes it fit)
  await page.getByTestId('density-comfortable').click();
  await expect(page).not.toHaveURL(/density=/);
  const comfortable = await markerExtra();
  expect(comfortable.short).toBeTruthy();
  expect(comfortable.extra).toBeGreaterThan(10);
  expect(await page.evaluate(() => { const b = document.querySelector('.grid-scroll')!; return b.scrollHeight > b.clientHeight; })).toBe(true);
});

test('filters and view options live in the URL and survive a reload; Hide drops non-matching cells; Next match jumps to them', async ({ page }) => {
  await signIn(page, USERS.devManager);
  const [first] = await buildingsOf(page);
  await page.goto(`/chessboard?project=${first.projectId}&building=${first.buildingId}`);
  const grid = page.getByRole('grid');
  await expect(grid.getByRole('gridcell')).toHaveCount(first.grid.cells.length);

  await page.getByTestId('legend-Sold').click();
  await page.getByRole('textbox', { name: /Минимальная цена|Minimum price/ }).fill('8');
  await page.getByTestId('density-compact').click();
  await page.getByTestId('price-per-m2').check();
  await expect(page).toHaveURL(/status=Sold/);
  await expect(page).toHaveURL(/price=8-/);
  await expect(page).toHaveURL(/density=compact/);
  await expect(page).toHaveURL(/ppm=1/);

  await page.reload();
  await expect(page.getByTestId('legend-Sold')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByRole('textbox', { name: /Минимальная цена|Minimum price/ })).toHaveValue('8');
  await expect(page.getByTestId('density-compact')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('price-per-m2')).toBeChecked();
  await expect(page.locator('.grid-scroll')).toHaveAttribute('data-density', 'compact');

  // price per m² on the cells: the cell of a known object shows price / area
  const sample = first.grid.cells[0];
  const perM2 = Math.round(sample.price / sample.area);
  const expected = await page.evaluate((n) => new Intl.NumberFormat('ru-RU', { notation: 'compact', maximumFractionDigits: 2 }).format(n), perM2);
  await expect(page.locator(`[data-cell-id="${sample.id}"] .cell-price`)).toHaveText(`${expected} ₽/м²`);

  const matches = first.grid.cells.filter((c) => c.status === 'Sold' && c.price >= 8_000_000);
  expect(matches.length).toBeGreaterThan(1);
  // Fade: every cell stays, the matching ones are marked
  await expect(grid.getByRole('gridcell')).toHaveCount(first.grid.cells.length);
  await expect(grid.locator('[role=gridcell][data-match=true]')).toHaveCount(matches.length);

  // Next match: focus goes to a matching cell, then to the next one
  await page.getByTestId('jump-to-match').click();
  const firstJump = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.cellId);
  expect(matches.map((c) => c.id)).toContain(firstJump);
  await page.getByTestId('jump-to-match').click();
  const secondJump = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.cellId);
  expect(matches.map((c) => c.id)).toContain(secondJump);
  expect(secondJump).not.toBe(firstJump);
  await expect(page.locator(`[data-cell-id="${secondJump}"]`)).toBeInViewport();

  // Hide: only the matches are laid out, floors without a match are gone
  await page.getByTestId('show-narrow').click();
  await expect(page).toHaveURL(/show=narrow/);
  await expect(grid.getByRole('gridcell')).toHaveCount(matches.length);
  const floors = new Set(matches.map((c) => c.floor)).size;
  await expect(grid.locator('[role=row]')).toHaveCount(floors + 1);
  await page.reload();
  await expect(grid.getByRole('gridcell')).toHaveCount(matches.length);
});

test('the overdue-hold legend item counts the holds past their deadline and filters to them', async ({ page }) => {
  await signIn(page, USERS.pinManager);
  const overdueOf = (g: Grid) => g.cells.filter((c) => {
    const until = c.status === 'Reserved' ? c.reservedUntil : c.status === 'Booked' ? c.bookedUntil : null;
    return until !== null && new Date(until).getTime() < Date.now();
  });
  const withOverdue = (await buildingsOf(page)).map((b) => ({ ...b, overdue: overdueOf(b.grid) })).sort((a, b) => b.overdue.length - a.overdue.length)[0];
  // the demo seed has stuck holds (hold-expiration is paused in the e2e run)
  expect(withOverdue.overdue.length).toBeGreaterThan(0);
  await page.goto(`/chessboard?project=${withOverdue.projectId}&building=${withOverdue.buildingId}`);
  const legend = page.getByTestId('legend-overdue');
  await expect(legend.locator('.legend-count')).toHaveText(String(withOverdue.overdue.length));
  await legend.click();
  await expect(page).toHaveURL(/overdue=1/);
  await expect(legend).toHaveAttribute('aria-pressed', 'true');
  const matching = page.locator('[role=gridcell][data-match=true]');
  await expect(matching).toHaveCount(withOverdue.overdue.length);
  for (const c of withOverdue.overdue) await expect(page.locator(`[data-cell-id="${c.id}"]`)).toHaveAttribute('data-match', 'true');
  await expect(matching.locator('.countdown-overdue')).toHaveCount(withOverdue.overdue.length);
});

test('a board opened by its URL asks for its grid from the HTML (preload), and the page uses that one answer', async ({ page }) => {
  await signIn(page, USERS.devManager);
  const [first] = await buildingsOf(page);
  const gridRequests: string[] = [];
  page.on('request', (r) => { if (r.url().includes('chessboard.grid')) gridRequests.push(r.url()); });
  await page.goto(`/chessboard?project=${first.projectId}&building=${first.buildingId}`);
  await expect(page.getByRole('grid').getByRole('gridcell')).toHaveCount(first.grid.cells.length);
  const entries = await page.evaluate(() => (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
    .filter((e) => e.name.includes('chessboard.grid'))
    .map((e) => ({ initiator: e.initiatorType, path: new URL(e.name).pathname })));
  // one request, started by the <link rel=preload> in the HTML, not by the bundle after hydration
  expect(entries).toEqual([{ initiator: 'link', path: '/api/trpc/chessboard.grid' }]);
  expect(gridRequests).toHaveLength(1);
  const preload = await page.locator('link[rel=preload][as=fetch]').getAttribute('href');
  expect(preload).toBe(new URL(gridRequests[0]).pathname + new URL(gridRequests[0]).search);
});
