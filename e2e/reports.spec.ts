import fs from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { docsScreenshot, signIn, trpcQuery, USERS } from './helpers';

test.describe.configure({ timeout: 180_000 });

/**
 * A developer manager's reports: the page opens from the console navigation, the period changes in
 * the URL and the figures follow (checked against reports.funnel for the same days; the sold share by floor
 * band and room count has the API's rows), the CSV downloads
 * with a BOM, the header and one line per booking of the period; axe finds nothing serious at a desktop
 * and a phone size (screenshots in docs/screenshots/reports-<size>.png).
 */

const SIZES = [
  { name: 'desktop', width: 1366, height: 768 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/**
 * The last `back + 1` calendar days up to today in the browser's time zone (the zone the page reads its
 * days in): the days as the date inputs take them and the instants the page asks the server for.
 */
async function browserDays(page: Page, back: number): Promise<{ fromDay: string; toDay: string; from: string; to: string }> {
  return page.evaluate((n) => {
    const day = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    const now = new Date();
    const first = new Date(now.getFullYear(), now.getMonth(), now.getDate() - n);
    const today = new Date(now.getFullYear(), now.getMonth(), now.getDate());
    const end = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1);
    return { fromDay: day(first), toDay: day(today), from: first.toISOString(), to: end.toISOString() };
  }, back);
}

async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

test('a developer manager opens the reports, changes the period and downloads the CSV', async ({ page }) => {
  await signIn(page, USERS.devManager);
  await page.getByRole('navigation').getByRole('link', { name: 'Отчёты' }).click();
  await page.waitForURL(/\/reports/);
  await expect(page.locator('main h1')).toHaveText('Отчёты');
  await expect(page.getByTestId('funnel-table')).toBeVisible();
  await expect(page.getByTestId('period-month')).toHaveAttribute('aria-pressed', 'true');

  await page.getByTestId('period-week').click();
  await expect(page).toHaveURL(/period=week/);
  await expect(page.getByTestId('period-week')).toHaveAttribute('aria-pressed', 'true');

  // the last 30 days (the seed's bookings are from the last ten), as calendar days in the browser's zone
  // (Europe/Moscow, playwright.config.ts) as the page reads them — not this process's zone, which differs
  // from it for three hours a day; the page's figure is the API's for the same instants
  const period = await browserDays(page, 29);
  await page.getByTestId('period-custom').click();
  await page.getByTestId('period-from').fill(period.fromDay);
  await page.getByTestId('period-to').fill(period.toDay);
  await expect(page).toHaveURL(new RegExp(`from=${period.fromDay}.*to=${period.toDay}`));
  const from = new Date(period.from);
  const to = new Date(period.to);
  type Share = { bookings: number; sold: number };
  const truth = await trpcQuery<{ created: number; sold: number; cancelled: number; floors: Array<Share & { band: string | null }>; rooms: Array<Share & { rooms: string | null }> }>(
    page.request, 'reports.funnel', { from: from.toISOString(), to: to.toISOString() });
  expect(truth.created).toBeGreaterThan(0);
  // the seed's objects have floors and room counts: the split by them is on the page, row for row as the API says
  expect(truth.floors.filter((x) => x.band !== null).length).toBeGreaterThan(0);
  expect(truth.rooms.filter((x) => x.rooms !== null).length).toBeGreaterThan(0);
  await expect(page.getByTestId('floors-table').locator('tbody tr')).toHaveCount(truth.floors.length);
  await expect(page.getByTestId('rooms-table').locator('tbody tr')).toHaveCount(truth.rooms.length);
  for (const x of truth.floors) await expect(page.getByTestId(`floors-row-${x.band ?? 'unknown'}`)).toBeVisible();
  for (const x of truth.rooms) await expect(page.getByTestId(`rooms-row-${x.rooms ?? 'unknown'}`)).toBeVisible();
  await expect(page.getByTestId('rooms-chart').locator('svg[role=img]')).toHaveAttribute('aria-label', /Доля продаж по числу комнат/);
  await expect(page.getByTestId('funnel-created')).toHaveText(String(truth.created));
  await expect(page.getByTestId('funnel-sold')).toHaveText(String(truth.sold));
  await expect(page.getByTestId('outcome-cancelled')).toHaveText(String(truth.cancelled));
  await expect(page.getByTestId('funnel-chart').locator('svg[role=img]')).toHaveAttribute('aria-label', /Создан/);

  // a reversed period asks nothing and says why
  const dayBefore = await page.evaluate((d) => { const x = new Date(d); x.setDate(x.getDate() - 1); return `${x.getFullYear()}-${String(x.getMonth() + 1).padStart(2, '0')}-${String(x.getDate()).padStart(2, '0')}`; }, period.from);
  await page.getByTestId('period-to').fill(dayBefore);
  await expect(page.getByTestId('period-error')).toBeVisible();
  await expect(page.getByTestId('reports-csv')).toHaveCount(0);
  await page.getByTestId('period-to').fill(period.toDay);

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('reports-csv').click()]);
  expect(download.suggestedFilename()).toMatch(/^bookings-\d{4}-\d{2}-\d{2}--\d{4}-\d{2}-\d{2}\.csv$/);
  const bytes = fs.readFileSync((await download.path())!);
  expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
  const lines = bytes.toString('utf8').slice(1).split('\r\n').filter((l) => l !== '');
  expect(lines[0]!.startsWith('booking_id,created_at,status')).toBe(true);
  expect(lines.length - 1).toBe(truth.created);
});

test('agents see no reports link and the page says it is not for them', async ({ page }) => {
  await signIn(page, USERS.agent);
  await expect(page.getByRole('navigation').getByRole('link', { name: 'Отчёты' })).toHaveCount(0);
  await page.goto('/reports');
  await expect(page.getByTestId('reports-no-access')).toBeVisible();
});

for (const size of SIZES) {
  test(`axe: /reports at ${size.width}×${size.height} has no serious or critical violation`, async ({ page }) => {
    await signIn(page, USERS.pinManager);
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.goto('/reports');
    const period = await browserDays(page, 29);
    await page.goto(`/reports?period=custom&from=${period.fromDay}&to=${period.toDay}`);
    await expect(page.getByTestId('funnel-table')).toBeVisible();
    await expect(page.getByTestId('projects-table')).toBeVisible();
    await expect(page.getByTestId('floors-table')).toBeVisible();
    await expect(page.getByTestId('rooms-table')).toBeVisible();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: docsScreenshot(`reports-${size.name}.png`), fullPage: true });
  });
}
