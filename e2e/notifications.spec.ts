import { expect, test } from '@playwright/test';
import { apiAs, freeObjectOfTenantA, signIn, snap, trpcMutation, trpcQuery, USERS, type BookingRow } from './helpers';

test('an agent creates a booking → the developer manager\'s bell shows it live; mark read, then all read', async ({ page, baseURL }, testInfo) => {
  await signIn(page, USERS.devManager);
  await page.goto('/bookings');
  const bell = page.getByTestId('notification-bell');
  await expect(bell).toBeVisible();
  const unread = async () => Number((await bell.getAttribute('aria-label'))?.match(/\d+/)?.[0] ?? 0);
  // the count the server has now, and the bell showing it (its first fetch done)
  const { unread: before } = await trpcQuery<{ unread: number }>(page.request, 'notifications.unreadCount', undefined);
  await expect.poll(unread, { timeout: 15_000 }).toBe(before);
  await page.evaluate(() => { (window as unknown as { __noReload: boolean }).__noReload = true; });

  // an agent (another session) books a free object while the manager's page is open
  const agent = await apiAs(baseURL!, USERS.agent);
  const object = await freeObjectOfTenantA(agent);
  const deals = await trpcQuery<{ items: { id: string }[] }>(agent, 'deal.list', { status: ['Application', 'Booking'], pageSize: 5 });
  const programs = await trpcQuery<{ id: string; isPaid: boolean }[]>(agent, 'booking.programs', undefined);
  const booking = await trpcMutation<BookingRow>(agent, 'booking.create', { dealId: deals.items[0]!.id, programId: programs.find((p) => !p.isPaid)!.id, propertyObjectId: object.id });

  // live: the count grows without a reload (SSE `notifications` after the consumer's insert)
  await expect.poll(unread, { timeout: 30_000 }).toBe(before + 1);
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
  await bell.click();
  const panel = page.getByTestId('notification-panel');
  await expect(panel).toBeVisible();
  const first = panel.getByTestId('notification-item').first();
  await expect(first).toHaveAttribute('data-read', 'false');
  await expect(first.getByRole('link')).toHaveAttribute('href', `/bookings/${booking.id}`);
  await expect(first).toContainText('Бронь создана');
  await snap(page, testInfo, 'notifications-bell-open');

  await first.getByTestId('notification-mark-read').click();
  await expect(first).toHaveAttribute('data-read', 'true');
  await expect.poll(unread).toBe(before);
  await page.getByTestId('notification-mark-all').click().catch(() => {}); // disabled when nothing is unread
  await expect.poll(unread).toBe(0);
  await page.keyboard.press('Escape');
  await expect(panel).toHaveCount(0);
  await expect(bell).toBeFocused();

  // the agent who created it was notified too (a notification of its own, unread)
  const agentList = await trpcQuery<{ items: { bookingId: string | null; read: boolean }[] }>(agent, 'notifications.list', { limit: 20 });
  expect(agentList.items.some((n) => n.bookingId === booking.id && !n.read)).toBe(true);
  await agent.dispose();
});

test('the bell fits a phone (390 px): the popover spans the screen', async ({ page }, testInfo) => {
  await signIn(page, USERS.devManager); // at desktop width (the user block folds behind the menu on a phone)
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/bookings');
  const bell = page.getByTestId('notification-bell');
  await expect(bell).toBeVisible();
  await bell.click();
  const panel = page.getByTestId('notification-panel');
  await expect(panel).toBeVisible();
  const box = (await panel.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await snap(page, testInfo, 'notifications-phone');
});
