import { expect, test } from '@playwright/test';
import { signIn, trpcQuery, USERS, openBuildingOf } from './helpers';

// a loaded 2-core machine renders a 1,000-cell board slowly: generous per-test time
test.describe.configure({ timeout: 240_000 });

/** #19 point 10: first-visit locale from Accept-Language, a favicon, one date and money format per locale. */

test('a first visit follows Accept-Language; the language cookie still wins', async ({ browser }, testInfo) => {
  const baseURL = testInfo.project.use.baseURL!;
  const en = await browser.newContext({ baseURL, locale: 'en-US' });
  const page = await en.newPage();
  await page.goto('/login');
  await expect(page.locator('html')).toHaveAttribute('lang', 'en');
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Sign in');
  await en.addCookies([{ name: 'NEXT_LOCALE', value: 'ru', url: baseURL }]);
  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('lang', 'ru');
  await en.close();

  const ru = await browser.newContext({ baseURL, locale: 'ru-RU', extraHTTPHeaders: { 'accept-language': 'de-DE,ru;q=0.8,en;q=0.5' } });
  const ruPage = await ru.newPage();
  await ruPage.goto('/login');
  await expect(ruPage.locator('html')).toHaveAttribute('lang', 'ru');
  await ru.close();
});

test('the console has a favicon', async ({ page }) => {
  await page.goto('/login');
  const href = await page.locator('link[rel=icon]').first().getAttribute('href');
  expect(href).toMatch(/icon/);
  const res = await page.request.get(href!);
  expect(res.status()).toBe(200);
  expect(res.headers()['content-type']).toContain('image/svg+xml');
});

test('English: one date format in lists, drawer and timeline; one money format in drawer and cells', async ({ page, context }, testInfo) => {
  await context.addCookies([{ name: 'NEXT_LOCALE', value: 'en', url: testInfo.project.use.baseURL! }]);
  await signIn(page, USERS.pinManager);
  const date = /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{2}:\d{2}(:\d{2})?$/;
  const hopTime = /^[A-Z][a-z]{2} \d{1,2}, \d{2}:\d{2}:\d{2}\.\d{3}$/;

  await page.goto('/bookings');
  await expect(page.locator('table tbody tr').first()).toBeVisible();
  const listDates = await page.locator('table time').allInnerTexts();
  expect(listDates.length).toBeGreaterThan(0);
  for (const d of listDates) expect(d).toMatch(date);

  const { items } = await trpcQuery<{ items: { id: string; propertyObjectId: string }[] }>(page.request, 'booking.list', { status: ['Booked'], pageSize: 1 });
  await page.goto(`/bookings/${items[0].id}`);
  await expect(page.locator('main time').first()).toBeVisible();
  const pageDates = await page.locator('main time').allInnerTexts();
  for (const d of pageDates) expect(d.trim()).toMatch(new RegExp(`${date.source}|${hopTime.source}`));

  await openBuildingOf(page, items[0].propertyObjectId);
  await page.locator(`[data-cell-id="${items[0].propertyObjectId}"]`).click();
  const drawer = page.getByTestId('object-drawer');
  const price = drawer.locator('dt:has-text("Price") + dd').first();
  await expect(price).toHaveText(/^\d{1,3}(,\d{3})+ ₽$/);
  for (const d of await drawer.locator('time').allInnerTexts()) expect(d).toMatch(date);
  await expect(page.locator(`[data-cell-id="${items[0].propertyObjectId}"] .cell-price`)).toHaveText(/^\d+(\.\d+)?[KM] ₽$/);
});
