import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { apiAs, freeObjectOfTenantA, signIn, snap, trpcMutation, trpcQuery, USERS, type BookingRow } from './helpers';

/**
 * The bell names what a notice is about — the flat (кв. 3012), the deal and who acted — links to the
 * booking, and the notices of one booking read as one line: the newest one with "×N".
 */
test('a booking\'s notices: one line naming the flat, the deal and the actor, with a count (desktop and phone)', async ({ page, baseURL }, testInfo) => {
  test.slow(); // two screen sizes, each with its own round of commands and (for the bell) an axe pass
  const agent = await apiAs(baseURL!, USERS.agent);
  const manager = await apiAs(baseURL!, USERS.devManager);
  const managerMe = await trpcQuery<{ displayName: string }>(manager, 'auth.me', undefined);
  const object = await freeObjectOfTenantA(agent);
  const deals = await trpcQuery<{ items: { id: string; title: string }[] }>(agent, 'deal.list', { status: ['Application', 'Booking'], pageSize: 5 });
  const deal = deals.items[0]!;
  const programs = await trpcQuery<{ id: string; isPaid: boolean }[]>(agent, 'booking.programs', undefined);
  // the agent books; the developer manager confirms and extends: three notices of one booking
  const created = await trpcMutation<BookingRow>(agent, 'booking.create', { dealId: deal.id, programId: programs.find((p) => !p.isPaid)!.id, propertyObjectId: object.id });
  const confirmed = await trpcMutation<BookingRow>(manager, 'booking.confirm', { bookingId: created.id, expectedVersion: created.version });
  await trpcMutation<BookingRow>(manager, 'booking.extend', { bookingId: created.id, expectedVersion: confirmed.version });
  // the consumer has made all of them (what the line counts)
  const mine = async () => (await trpcQuery<{ items: { bookingId: string | null }[] }>(manager, 'notifications.list', { limit: 100 })).items.filter((n) => n.bookingId === created.id).length;
  await expect.poll(mine, { timeout: 30_000 }).toBe(3);

  await signIn(page, USERS.devManager);
  for (const size of [{ width: 1366, height: 768 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(size);
    await page.goto('/bookings');
    await page.getByTestId('notification-bell').click();
    const panel = page.getByTestId('notification-panel');
    const line = panel.locator(`[data-testid=notification-item][data-booking-id="${created.id}"]`);
    // one line for the booking, not three
    await expect(line).toHaveCount(1);
    await expect(line.getByTestId('notification-subject')).toHaveText(`кв. ${object.number} · ${deal.title}`);
    await expect(line).toContainText('Бронь продлена до');
    await expect(line.getByTestId('notification-actor')).toContainText(managerMe.displayName);
    await expect(line.getByTestId('notification-repeats')).toContainText('×3');
    await expect(line.getByRole('link')).toHaveAttribute('href', `/bookings/${created.id}`);
    const box = (await panel.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(size.width);
    const { violations } = await new AxeBuilder({ page }).include('[data-testid=notification-panel]').analyze();
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id), `axe at ${size.width}px`).toEqual([]);
    await snap(page, testInfo, `notifications-named-${size.width}`);
    await page.keyboard.press('Escape');
  }

  // reading the line reads its three notices
  await page.getByTestId('notification-bell').click();
  const line = page.getByTestId('notification-panel').locator(`[data-testid=notification-item][data-booking-id="${created.id}"]`);
  if ((await line.getAttribute('data-read')) === 'false') await line.getByTestId('notification-mark-read').click();
  await expect(line).toHaveAttribute('data-read', 'true');
  const unreadOfIt = async () => (await trpcQuery<{ items: { bookingId: string | null; read: boolean }[] }>(manager, 'notifications.list', { limit: 100, unreadOnly: true })).items.filter((n) => n.bookingId === created.id).length;
  await expect.poll(unreadOfIt).toBe(0);
  await agent.dispose();
  await manager.dispose();
});
