import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { apiAs, freeObjectOfTenantA, signIn, snap, trpcMutation, trpcQuery, USERS, type BookingRow } from './helpers';

/**
 * The deal chat: a booking's actions live on its newest card only (an older card's date may be out of
 * date: acting on it misleads), the chat opens at its newest entry, and cards and the deal's bookings
 * name a booking by its flat ("кв. 3012"), never by a hex id.
 */

/** A booking created, confirmed and extended: three cards in its deal's chat, the last one current. */
async function extendedBooking(baseURL: string): Promise<{ booking: BookingRow; number: string; manager: APIRequestContext }> {
  // the agent books (a manager may not), the developer manager confirms and extends
  const agent = await apiAs(baseURL, USERS.agent);
  const manager = await apiAs(baseURL, USERS.devManager);
  const object = await freeObjectOfTenantA(agent);
  const deals = await trpcQuery<{ items: { id: string }[] }>(agent, 'deal.list', { status: ['Application', 'Booking'], pageSize: 50 });
  const programs = await trpcQuery<{ id: string; isPaid: boolean; maxExtensions: number }[]>(agent, 'booking.programs', undefined);
  const program = programs.find((p) => !p.isPaid && p.maxExtensions > 1) ?? programs.find((p) => !p.isPaid)!;
  const created = await trpcMutation<BookingRow>(agent, 'booking.create', { dealId: deals.items[0]!.id, programId: program.id, propertyObjectId: object.id });
  const confirmed = await trpcMutation<BookingRow>(manager, 'booking.confirm', { bookingId: created.id, expectedVersion: created.version });
  const extended = await trpcMutation<BookingRow>(manager, 'booking.extend', { bookingId: created.id, expectedVersion: confirmed.version });
  await agent.dispose();
  // a long chat: enough messages that it scrolls, the newest far below the first entry
  for (let i = 1; i <= 14; i++) await trpcMutation(manager, 'messenger.post', { dealId: created.dealId, text: `сообщение ${i}` });
  await trpcMutation(manager, 'messenger.post', { dealId: created.dealId, text: 'последнее сообщение' });
  return { booking: extended, number: object.number, manager };
}

async function cardsOf(page: Page, bookingId: string) {
  const link = page.locator(`a[href="/bookings/${bookingId}"]`);
  const cards = page.getByTestId('deal-chat').locator('[data-card]').filter({ has: link });
  // created, confirmed, extended: all three have arrived through the consumer
  await expect(page.getByTestId('deal-chat').locator('[data-card=booking-extended]').filter({ has: link }).first()).toBeVisible({ timeout: 30_000 });
  return cards;
}

test('actions on the newest card only; the chat opens at the newest entry; bookings named by flat (desktop and phone)', async ({ page, baseURL }, testInfo) => {
  test.slow(); // two screen sizes, each with its own round of commands and (for the bell) an axe pass
  const { booking, number, manager } = await extendedBooking(baseURL!);
  await signIn(page, USERS.devManager);
  for (const size of [{ width: 1366, height: 768 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(size);
    await page.goto(`/deals/${booking.dealId}`);
    const cards = await cardsOf(page, booking.id);
    await expect(cards).toHaveCount(3);
    // only the newest card of the booking (extended) offers Extend; the created and confirmed cards offer nothing
    await expect(cards.nth(0).locator('[data-action]')).toHaveCount(0);
    await expect(cards.nth(1).locator('[data-action]')).toHaveCount(0);
    await expect(cards.nth(2).locator('[data-action=extend]')).toBeVisible();
    await expect(cards.locator('[data-action]')).toHaveCount(1);

    // the card names the flat, not the id
    for (let i = 0; i < 3; i++) {
      await expect(cards.nth(i).locator(`a[href="/bookings/${booking.id}"]`)).toHaveText(`кв. ${number}`);
    }
    const listed = page.getByTestId('deal-bookings').locator(`[data-booking-id="${booking.id}"]`);
    await expect(listed.getByRole('link')).toHaveText(`кв. ${number}`);
    await expect(page.getByTestId('deal-bookings')).not.toContainText(booking.id.slice(0, 8));

    // opened at the newest entry: the last message is in the chat's view, the list scrolled to its end
    const chat = page.getByTestId('deal-chat');
    const last = chat.locator('[data-kind=message]').last();
    await expect(last).toContainText('последнее сообщение');
    await expect.poll(() => chat.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThanOrEqual(2);
    expect(await chat.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true);
    const [box, lastBox] = [await chat.boundingBox(), await last.boundingBox()];
    expect(lastBox!.y + lastBox!.height).toBeLessThanOrEqual(box!.y + box!.height + 1);
    await snap(page, testInfo, `deal-chat-newest-${size.width}`);
  }

  // the newest card acts on the booking's current state: Extend moves today's version, not the card's
  const before = await trpcQuery<BookingRow>(manager, 'booking.byId', { bookingId: booking.id });
  const cards = await cardsOf(page, booking.id);
  await cards.nth(2).locator('[data-action=extend]').click();
  await page.locator('dialog[open]').getByTestId('dialog-confirm').click();
  await expect.poll(async () => (await trpcQuery<BookingRow>(manager, 'booking.byId', { bookingId: booking.id })).version, { timeout: 15_000 }).toBeGreaterThan(before.version);
  // a fourth card arrives and takes the action over; the third shows none any more
  await expect(cards).toHaveCount(4, { timeout: 30_000 });
  await expect(cards.nth(2).locator('[data-action]')).toHaveCount(0);
  await expect(cards.locator('[data-action]')).toHaveCount(await cards.nth(3).locator('[data-action]').count());
  await manager.dispose();
});
