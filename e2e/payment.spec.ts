import { expect, test } from '@playwright/test';
import { cell, openBuildingOf, paidBookingWithReceipt, signIn, snap, USERS } from './helpers';

test('a developer manager confirms the payment of a paid booking: the cell turns Booked live, extend grows the countdown, the booking page shows the saga', async ({ page, baseURL }, testInfo) => {
  await signIn(page, USERS.devManager);
  const booking = await paidBookingWithReceipt(baseURL!, page.request);
  await openBuildingOf(page, booking.propertyObjectId);
  const target = cell(page, booking.propertyObjectId);
  await expect(target).toHaveAttribute('data-status', 'Reserved');
  await expect(page.getByTestId('live-state')).toHaveClass(/live-live/);
  await snap(page, testInfo, 'chessboard');

  // a marker that a reload would wipe: the update must arrive live
  await page.evaluate(() => { (window as unknown as { __noReload: boolean }).__noReload = true; });
  await target.click();
  const drawer = page.getByTestId('object-drawer');
  await expect(drawer.getByTestId('booking-status')).toHaveText('Ожидает оплаты');
  await expect(drawer.getByTestId('status-history')).toBeVisible();
  await snap(page, testInfo, 'drawer');

  await drawer.locator('[data-action=confirmPayment]').click();
  await expect(page.getByRole('dialog', { name: 'Подтвердить оплату?' })).toBeVisible();
  await page.getByTestId('dialog-confirm').click();
  await expect(target).toHaveAttribute('data-status', 'Booked', { timeout: 20_000 });
  await expect(target.locator('.countdown')).toBeVisible();
  await expect(drawer.getByTestId('booking-status')).toHaveText('Подтверждена');
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
  await snap(page, testInfo, 'chessboard-booked');

  const remaining = async () => Number(await target.locator('.countdown').getAttribute('data-remaining-ms'));
  const before = await remaining();
  await drawer.locator('[data-action=extend]').click();
  await page.getByTestId('dialog-confirm').click();
  // the program's booking duration is added (hours): the countdown jumps up by far more than a tick
  await expect.poll(remaining, { timeout: 20_000 }).toBeGreaterThan(before + 3600_000);
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);

  await drawer.getByTestId('booking-link').click();
  await expect(page).toHaveURL(new RegExp(`/bookings/${booking.id}`));
  // the payment's confirmation step publishes booking-paid and booking-confirmed in one transaction (their
  // order on the page is the outbox's, equal timestamps included); the chessboard applies booking-confirmed
  const confirmed = page.locator('.saga-step[data-command=confirmPayment] .chain[data-event$="booking-confirmed"]');
  await expect(confirmed.locator('[data-kind=crm_outbox_written][data-state=done]')).toBeVisible({ timeout: 20_000 });
  await expect(confirmed.locator('[data-kind=crm_published][data-state=done]')).toBeVisible({ timeout: 20_000 });
  await expect(confirmed.locator('[data-kind=chessboard_applied][data-state=done]')).toBeVisible({ timeout: 20_000 });
  await snap(page, testInfo, 'booking-timeline');

  // Temporal-style niceties: times relative to the command, a compact view, the JSON to the clipboard;
  // the choice is kept for the next booking page
  const timeline = page.getByTestId('saga-timeline');
  await timeline.getByTestId('saga-relative').click();
  await expect(timeline.getByTestId('saga-relative')).toHaveAttribute('aria-pressed', 'true');
  await expect(confirmed.locator('[data-kind=chessboard_applied] time[data-relative]')).toHaveText(/^T\+/);
  await timeline.getByTestId('saga-compact').click();
  await expect(timeline.locator('.hops')).toHaveCount(0);
  await expect(timeline.locator('.strip').first()).toBeVisible();
  await page.reload();
  await expect(page.getByTestId('saga-compact')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('saga-timeline').locator('.hops')).toHaveCount(0);
  await page.getByTestId('saga-compact').click();
  await expect(page.getByTestId('saga-timeline').locator('.hops').first()).toBeVisible();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.getByTestId('copy-json').click();
  await expect(page.getByTestId('copy-json')).toHaveText('Скопировано');
  const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText())) as { steps: { command: { action: string } | null }[] };
  expect(copied.steps.map((s) => s.command?.action)).toContain('confirmPayment');
});
