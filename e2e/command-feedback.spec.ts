import { expect, test, type APIRequestContext } from '@playwright/test';
import { apiAs, cell, freeObjectOfTenantA, openBuildingOf, signIn, trpcMutation, trpcQuery, USERS, waitForObjectStatus, type BookingRow } from './helpers';

/**
 * #19 points 3 and 4: a command shows its result from the mutation's answer (status + a role=status
 * notice), and an open dialog notices someone else's change and says who did it.
 */

/** A Reserved booking of a free program on a Free object of tenant A, made by the PIN manager. */
async function reservedBooking(pin: APIRequestContext, devManager: APIRequestContext, skip: Set<string>): Promise<BookingRow> {
  const me = await trpcQuery<{ tenantId: string | null }>(devManager, 'auth.me', undefined);
  const object = await freeObjectOfTenantA(devManager, skip);
  skip.add(object.id);
  const deals = await trpcQuery<{ items: { id: string }[] }>(pin, 'deal.list', { status: ['Application', 'Booking'], tenantId: me.tenantId, pageSize: 10 });
  const programs = await trpcQuery<{ id: string; isPaid: boolean }[]>(pin, 'booking.programs', { tenantId: me.tenantId });
  const created = await trpcMutation<BookingRow>(pin, 'booking.create', { dealId: deals.items[0].id, programId: programs.find((p) => !p.isPaid)!.id, propertyObjectId: object.id });
  await waitForObjectStatus(devManager, object.id, 'Reserved', 60_000);
  return created;
}

test('confirm: the new status and a success notice come from the answer; a stale dialog says who changed the booking', async ({ page, baseURL }) => {
  test.setTimeout(180_000);
  await signIn(page, USERS.devManager);
  const pin = await apiAs(baseURL!, USERS.pinManager);
  const skip = new Set<string>();
  try {
    const first = await reservedBooking(pin, page.request, skip);
    await openBuildingOf(page, first.propertyObjectId);
    await cell(page, first.propertyObjectId).click();
    const drawer = page.getByTestId('object-drawer');
    await expect(drawer.getByTestId('booking-status')).toHaveText('Резерв');
    await drawer.locator('button[data-action="confirm"]').click();
    await page.locator('dialog[open]').getByTestId('dialog-confirm').click();
    const done = drawer.getByTestId('command-done');
    await expect(done).toHaveAttribute('role', 'status');
    await expect(done).toContainText('Бронь подтверждена');
    await expect(drawer.getByTestId('booking-status')).toHaveText('Подтверждена');
    await expect(drawer.locator('button[data-action="confirm"]')).toHaveCount(0);

    // someone else confirms while this manager's dialog is open
    const second = await reservedBooking(pin, page.request, skip);
    await openBuildingOf(page, second.propertyObjectId);
    await cell(page, second.propertyObjectId).click();
    await drawer.locator('button[data-action="confirm"]').click();
    const dialog = page.locator('dialog[open]');
    await expect(dialog).toBeVisible();
    await trpcMutation(pin, 'booking.confirm', { bookingId: second.id });
    const notice = dialog.getByTestId('concurrent-change');
    await expect(notice).toBeVisible({ timeout: 60_000 });
    await expect(notice).toContainText('Подтверждена');
    await expect(notice).toContainText('Менеджер ПИН');
    await expect(notice.locator('time')).toHaveCount(1);
    // the confirm button stays off until the user has read what changed
    await expect(dialog.getByTestId('dialog-confirm')).toBeDisabled();
    await notice.locator('button[data-action="reread"]').click();
    await expect(notice).toHaveCount(0);
    // read, the change took the action away: the dialog says so and confirm stays off
    await expect(dialog.getByTestId('action-unavailable')).toContainText('бронь теперь в статусе «Подтверждена»');
    await expect(dialog.getByTestId('dialog-confirm')).toBeDisabled();
    // the server refuses the stale version anyway, naming what the booking is now
    const stale = await page.request.post('/api/trpc/booking.confirm', { data: { json: { bookingId: second.id, expectedVersion: 1 } } });
    expect(stale.status()).toBe(409);
    expect((await stale.json()).error.json.data.domainCode).toBe('CRM_BOOKING_VERSION_CONFLICT');
    expect((await trpcQuery<{ version: number }>(page.request, 'booking.byId', { bookingId: second.id })).version).toBe(2);
  } finally {
    await pin.dispose();
  }
});
