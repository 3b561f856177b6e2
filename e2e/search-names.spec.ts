import { expect, test } from '@playwright/test';
import { apiAs, cell, e2eRequisites, freeObjectOfTenantA, openBuildingOf, signIn, snap, trpcMutation, trpcQuery, USERS, type BookingRow } from './helpers';

/**
 * Search by the names people use: the bookings search finds a booking by its deal's title or number,
 * the buyer's surname (matched in profile, never shown) and the agent's name; the deal picker names the
 * client, does not repeat the agent's own name, and says which flat a deal already holds.
 */
const letters = () => Array.from({ length: 6 }, () => 'абвгдежзиклмнопрстуфхцчшэюя'[Math.floor(Math.random() * 27)]).join('');

test('bookings search by deal title, deal number, buyer surname and agent name (desktop and phone); the picker names client and held flat', async ({ page, baseURL }, testInfo) => {
  test.slow(); // two screen sizes, each with its own round of commands and (for the bell) an axe pass
  const agent = await apiAs(baseURL!, USERS.agent);
  const me = await trpcQuery<{ id: string; tenantId: string; displayName: string }>(agent, 'auth.me', undefined);
  const deals = await trpcQuery<{ items: { id: string; title: string; agentId: string | null }[] }>(agent, 'deal.list', { status: ['Application', 'Booking'], pageSize: 100 });
  const deal = deals.items.find((d) => d.agentId === me.id)!;
  expect(deal, 'a deal of the agent (the demo seed has them)').toBeDefined();
  const programs = await trpcQuery<{ id: string; isPaid: boolean }[]>(agent, 'booking.programs', undefined);
  const surname = `Тест${letters()}ова`.replace(/^(.)(.*)$/, (_, a: string, b: string) => a + b.toLowerCase());
  const fields = { ...e2eRequisites(), fullName: `${surname} Мария Игоревна` };
  const set = await trpcMutation<{ id: string; version: number }>(agent, 'profile.create', { tenantId: me.tenantId, fields });
  const object = await freeObjectOfTenantA(agent);
  const booking = await trpcMutation<BookingRow>(agent, 'booking.create', {
    dealId: deal.id, programId: programs.find((p) => !p.isPaid)!.id, propertyObjectId: object.id, requisites: { setId: set.id, version: set.version },
  });
  const dealNumber = deal.title.match(/\d+/)![0];
  const agentSurname = me.displayName.split(/\s+/).at(-1)!;

  await signIn(page, USERS.devManager);
  const row = page.getByTestId('bookings-table').locator(`a[href="/bookings/${booking.id}"]`);
  const search = async (q: string) => {
    await page.getByTestId('bookings-search').fill(q);
    await page.getByTestId('bookings-search').press('Enter');
    // the URL holds the new search, and the list has answered it (kept rows of the previous one are not an answer)
    await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe(q);
    await expect(page.locator('.table-wrap[aria-busy=false]')).toHaveCount(1);
  };
  for (const size of [{ width: 1366, height: 768 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(size);
    await page.goto('/bookings');
    for (const q of [deal.title, dealNumber, `кв. ${object.number}`, surname, surname.toUpperCase(), agentSurname]) {
      await search(q);
      await expect(row, `found by "${q}" at ${size.width}px`).toBeVisible();
    }
    // the buyer is matched in profile; the list never shows the name typed in full, nor the rest of it
    await search(surname);
    await expect(page.getByTestId('bookings-table')).not.toContainText('Мария Игоревна');
    await snap(page, testInfo, `bookings-search-surname-${size.width}`);
  }
  // a surname nobody has finds nothing (the search is not a wildcard)
  await search(`Нет${letters()}ов`);
  await expect(page.getByTestId('bookings-table').locator('tbody tr')).toHaveCount(0);

  // the agent's deal picker: the client on the deal, the held flat, and not the agent's own name on every line
  const agentPage = await page.context().browser()!.newContext({ baseURL: testInfo.project.use.baseURL });
  const ap = await agentPage.newPage();
  await signIn(ap, USERS.agent);
  const another = await freeObjectOfTenantA(ap.request, new Set([object.id]));
  await openBuildingOf(ap, another.id);
  await cell(ap, another.id).click();
  const form = ap.getByTestId('object-drawer').getByRole('form', { name: 'Новая бронь' });
  const options = form.locator('select[name=dealId] option');
  const option = options.filter({ hasText: new RegExp(`^${deal.title} · `) });
  await expect(option).toHaveCount(1);
  await expect(option).toContainText(`есть бронь: кв. ${object.number}`);
  await expect(option).toContainText(`${surname[0]}•`);
  await expect(option).not.toContainText(surname);
  const agents = new Set(deals.items.map((d) => d.agentId).filter(Boolean));
  if (agents.size === 1) await expect(options.filter({ hasText: me.displayName })).toHaveCount(0);
  await snap(ap, testInfo, 'deal-picker-client-held');
  await agentPage.close();
  await agent.dispose();
});
