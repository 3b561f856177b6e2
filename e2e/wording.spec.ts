import { expect, test } from '@playwright/test';
import { cell, freeObjectOfTenantA, openBuildingOf, signIn, snap, trpcMutation, trpcQuery, USERS, type BookingRow } from './helpers';

/**
 * A manager reads the booking page and the drawer of a booked flat in the words of docs/glossary.md:
 * no engineering jargon, no raw ids, no topic names or inbox results; the booking is named by its flat.
 */
const JARGON = /холд|(?<![\w-])job(?![\w-])|консюмер|Kafka|outbox|топик|(?<![а-яё])саг[аиуе](?![а-яё])|таймлайн|applied:|reserve-expired|(?<![\w-])v\d|верси[яи] \d|(?<![\w-])PIN(?![\w-])|\b(?=[0-9a-f]*[a-f])[0-9a-f]{8}\b/i;

test('a developer manager reads a booking and its flat without jargon or raw ids', async ({ page }, testInfo) => {
  await signIn(page, USERS.devManager);
  const { items } = await trpcQuery<{ items: BookingRow[] }>(page.request, 'booking.list', { status: ['Booked'], pageSize: 1 });
  const booking = items[0];
  await page.goto(`/bookings/${booking.id}`);
  const main = page.locator('main');
  await expect(page.getByTestId('saga-state')).toBeVisible();
  const { object } = await trpcQuery<{ object: { number: string } }>(page.request, 'chessboard.object', { propertyObjectId: booking.propertyObjectId });
  await expect(page.locator('h1')).toHaveText(`Бронь квартиры ${object.number}`);
  expect((await main.innerText()).match(JARGON)).toBeNull();
  await snap(page, testInfo, 'wording-booking-page');

  await openBuildingOf(page, booking.propertyObjectId);
  await cell(page, booking.propertyObjectId).click();
  const drawer = page.getByTestId('object-drawer');
  await expect(drawer.getByTestId('booking-status')).toHaveText('Подтверждена');
  await expect(drawer.getByTestId('object-status')).toContainText('Забронирован');
  await expect(drawer.getByTestId('status-history')).toBeVisible();
  expect((await drawer.innerText()).match(JARGON)).toBeNull();
});

test('an agent on a phone reads its deals, a booking of its own and its notifications without jargon or raw ids', async ({ page }, testInfo) => {
  test.setTimeout(120_000);
  await signIn(page, USERS.agent);
  await page.setViewportSize({ width: 390, height: 844 });
  let { items } = await trpcQuery<{ items: BookingRow[] }>(page.request, 'booking.list', { pageSize: 1 });
  if (items.length === 0) {
    const object = await freeObjectOfTenantA(page.request);
    const deals = await trpcQuery<{ items: { id: string }[] }>(page.request, 'deal.list', { status: ['Application', 'Booking'], pageSize: 1 });
    const programs = await trpcQuery<{ id: string; isPaid: boolean }[]>(page.request, 'booking.programs', { tenantId: object.tenantId });
    items = [await trpcMutation<BookingRow>(page.request, 'booking.create', { dealId: deals.items[0].id, programId: programs.find((p) => !p.isPaid)!.id, propertyObjectId: object.id })];
  }
  const main = page.locator('main');

  await page.goto('/deals');
  await expect(page.getByTestId('my-deals-table')).toBeVisible();
  expect((await main.innerText()).match(JARGON)).toBeNull();

  await page.goto(`/bookings/${items[0].id}`);
  await expect(page.getByTestId('saga-state')).toBeVisible();
  const { object } = await trpcQuery<{ object: { number: string } }>(page.request, 'chessboard.object', { propertyObjectId: items[0].propertyObjectId });
  await expect(page.locator('h1')).toHaveText(`Бронь квартиры ${object.number}`);
  expect((await main.innerText()).match(JARGON)).toBeNull();
  await snap(page, testInfo, 'wording-agent-booking-phone');

  const bell = page.getByTestId('notification-bell');
  if (!(await bell.isVisible())) await page.getByTestId('menu-toggle').click();
  await bell.click();
  const panel = page.getByTestId('notification-panel');
  await expect(panel).toBeVisible();
  expect((await panel.innerText()).match(JARGON)).toBeNull();
});
