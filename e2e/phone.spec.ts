import { expect, test, type Page } from '@playwright/test';
import { openBuildingOf, signIn, trpcQuery, USERS } from './helpers';

// a loaded 2-core machine renders a 1,000-cell board slowly: generous per-test time
test.describe.configure({ timeout: 240_000 });

/** #19 point 2: the console works on a phone down to 360 px. */

const pageWidthOverflow = (page: Page) => page.evaluate(() => document.scrollingElement!.scrollWidth - innerWidth);

for (const width of [390, 360]) {
  test(`phone ${width} px: the page is no wider than the screen, the menu reaches user, language and sign-out, the grid scrolls in its own box, the drawer is a full-screen sheet`, async ({ page }) => {
    await signIn(page, USERS.devManager);
    await page.setViewportSize({ width, height: 844 });
    await page.goto('/chessboard');
    const grid = page.getByRole('grid');
    await expect(grid.getByRole('gridcell').first()).toBeVisible();
    expect(await pageWidthOverflow(page)).toBeLessThanOrEqual(0);

    // the grid is wider than the phone: it scrolls inside its box, not the page
    const box = await page.locator('.grid-scroll').evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth, right: el.getBoundingClientRect().right }));
    expect(box.scroll).toBeGreaterThan(box.client);
    expect(box.right).toBeLessThanOrEqual(width);
    await page.locator('.grid-scroll').evaluate((el) => { el.scrollLeft = el.scrollWidth; });
    expect(await pageWidthOverflow(page)).toBeLessThanOrEqual(0);

    // user, language and sign-out sit behind the menu button, inside the screen once opened
    await expect(page.getByTestId('user-name')).toBeHidden();
    const toggle = page.getByTestId('menu-toggle');
    await expect(toggle).toBeInViewport();
    await toggle.click();
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    for (const target of [page.getByTestId('user-name'), page.getByRole('button', { name: 'Выйти' }), page.getByRole('group', { name: /Язык|Language/ })]) {
      await expect(target).toBeVisible();
      const r = (await target.boundingBox())!;
      expect(r.x).toBeGreaterThanOrEqual(0);
      expect(r.x + r.width).toBeLessThanOrEqual(width);
    }
    await page.getByRole('navigation').getByRole('link', { name: /Брони|Bookings/ }).click();
    await page.waitForURL(/\/bookings/);
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(await pageWidthOverflow(page)).toBeLessThanOrEqual(0);

    // the drawer covers the whole screen and its close button is on it
    const { items } = await trpcQuery<{ items: { propertyObjectId: string }[] }>(page.request, 'booking.list', { status: ['Booked'], pageSize: 1 });
    expect(items.length).toBe(1);
    await openBuildingOf(page, items[0].propertyObjectId);
    await page.locator(`[data-cell-id="${items[0].propertyObjectId}"]`).click();
    const drawer = page.getByTestId('object-drawer');
    await expect(drawer).toBeVisible();
    const d = (await drawer.boundingBox())!;
    expect(d).toEqual({ x: 0, y: 0, width, height: 844 });
    await expect(drawer.getByRole('button', { name: /Закрыть|Close/ })).toBeInViewport();
    expect(await pageWidthOverflow(page)).toBeLessThanOrEqual(0);
  });
}

test('phone 390 px: bookings, booking page and ops pages are no wider than the screen', async ({ page }) => {
  await signIn(page, USERS.pinManager);
  await page.setViewportSize({ width: 390, height: 844 });
  const { items } = await trpcQuery<{ items: { id: string }[] }>(page.request, 'booking.list', { pageSize: 1 });
  for (const path of ['/bookings', `/bookings/${items[0].id}`, '/ops', '/ops/holds', '/ops/jobs', '/ops/messaging', '/ops/catalog', '/ops/reconciliation']) {
    await page.goto(path);
    await expect(page.locator('main h1').first()).toBeVisible();
    await expect(page.locator('main').getByText(/^Загрузка/)).toHaveCount(0);
    // on failure: elements that reach past the screen's right edge (an absolutely positioned one escapes a scrolling box that is not its containing block)
    const overflow = await pageWidthOverflow(page);
    const culprits = overflow > 0 ? await page.evaluate(() => [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > innerWidth + 1)
      .map((el) => `${el.tagName.toLowerCase()}.${(el.getAttribute('class') ?? '').replace(/ /g, '.')} right=${Math.round(el.getBoundingClientRect().right)}`)
      .slice(0, 8)) : [];
    expect(overflow, `${path}: ${culprits.join(' | ')}`).toBeLessThanOrEqual(0);
  }
});
