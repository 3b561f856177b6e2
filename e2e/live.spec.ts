import { expect, test } from '@playwright/test';
import { apiAs, cell, freeObjectOfTenantA, openBuildingOf, signIn, trpcMutation, trpcQuery, USERS, waitForObjectStatus, type BookingRow, type ObjectInfo } from './helpers';

test('a status change committed by the chessboard appears in an open grid within 1 s, without reload', async ({ page, baseURL }) => {
  await signIn(page, USERS.devManager);
  // an agent (another session) reserves a free object and then confirms it, while the grid is open
  const agent = await apiAs(baseURL!, USERS.agent);
  const object = await freeObjectOfTenantA(agent);
  const deals = await trpcQuery<{ items: { id: string }[] }>(agent, 'deal.list', { status: ['Application', 'Booking'], pageSize: 5 });
  const programs = await trpcQuery<{ id: string; isPaid: boolean }[]>(agent, 'booking.programs', undefined);
  const booking = await trpcMutation<BookingRow>(agent, 'booking.create', { dealId: deals.items[0].id, programId: programs.find((p) => !p.isPaid)!.id, propertyObjectId: object.id });
  await waitForObjectStatus(agent, object.id, 'Reserved');

  await openBuildingOf(page, object.id);
  const target = cell(page, object.id);
  await expect(target).toHaveAttribute('data-status', 'Reserved');
  await expect(page.getByTestId('live-state')).toHaveClass(/live-live/);
  // record (in the page) the moment the cell turns Booked
  await page.evaluate((id) => {
    const w = window as unknown as { __bookedAt?: number; __noReload: boolean };
    w.__noReload = true;
    const observer = new MutationObserver(() => {
      const el = document.querySelector(`[data-cell-id="${id}"]`);
      if (el?.getAttribute('data-status') === 'Booked' && !w.__bookedAt) w.__bookedAt = Date.now();
    });
    observer.observe(document.body, { subtree: true, attributes: true, attributeFilter: ['data-status'], childList: true });
  }, object.id);

  await trpcMutation(agent, 'booking.confirm', { bookingId: booking.id });
  // the chessboard commit: the first moment the object reads Booked through the API (polled every 50 ms)
  let committedAt = 0;
  await expect.poll(async () => {
    const { object: o } = await trpcQuery<ObjectInfo>(agent, 'chessboard.object', { propertyObjectId: object.id });
    if (o.status === 'Booked' && !committedAt) committedAt = Date.now();
    return o.status;
  }, { timeout: 30_000, intervals: [50] }).toBe('Booked');

  await expect(target).toHaveAttribute('data-status', 'Booked', { timeout: 5_000 });
  const shownAt = await page.evaluate(() => (window as unknown as { __bookedAt?: number }).__bookedAt ?? 0);
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
  expect(shownAt - committedAt).toBeLessThan(1000);
  await agent.dispose();
});
