import { expect, test } from '@playwright/test';
import { cell, openBuildingOf, signIn, trpcQuery, USERS, type BookingRow } from './helpers';

test('a viewer sees no action buttons and a forged mutation is rejected', async ({ page }) => {
  await signIn(page, USERS.viewer);
  const { items } = await trpcQuery<{ items: BookingRow[] }>(page.request, 'booking.list', { status: ['Reserved'], pageSize: 50 });
  const booking = items.find((b) => b.paymentStatus === 'NotRequired') ?? items[0];
  expect(booking, 'the demo seed has a Reserved booking in tenant A').toBeTruthy();

  await openBuildingOf(page, booking.propertyObjectId);
  await cell(page, booking.propertyObjectId).click();
  const drawer = page.getByTestId('object-drawer');
  await expect(drawer.getByTestId('booking-status')).toBeVisible();
  await expect(drawer.getByTestId('status-history')).toBeVisible();
  await expect(page.locator('[data-action]')).toHaveCount(0);
  await expect(drawer.getByRole('form')).toHaveCount(0);

  // the same command, forged from the page: the server refuses it (role gate), nothing changes
  const forged = await page.evaluate(async (bookingId) => {
    const res = await fetch('/api/trpc/booking.confirm', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ json: { bookingId } }),
    });
    return { status: res.status, body: await res.json() };
  }, booking.id);
  expect(forged.status).toBe(403);
  expect(forged.body.error.json.data.code).toBe('FORBIDDEN');
  const after = await trpcQuery<BookingRow & { status: string }>(page.request, 'booking.byId', { bookingId: booking.id });
  expect(after.status).toBe(booking.status);
  expect(after.version).toBe(booking.version);

  await page.goto(`/bookings/${booking.id}`);
  await expect(page.getByTestId('saga-timeline')).toBeVisible();
  await expect(page.locator('[data-action]')).toHaveCount(0);
});
