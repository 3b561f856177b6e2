import { expect, test } from '@playwright/test';
import { apiAs, freeObjectOfTenantA, signIn, snap, trpcMutation, trpcQuery, USERS, waitForObjectStatus, type BookingRow, type ObjectInfo } from './helpers';

/**
 * Issue 15: a manual release of a hold whose crm booking still runs warns in plain words and asks
 * what happens to the booking; "release the chessboard only" is a divergence the booking page shows
 * and reconciliation repairs (re-hold), after which the finding is gone and the booking page agrees.
 */
test('manual release with an active crm booking warns and asks; the divergence shows on the booking page and a reconciliation re-hold repairs it', async ({ page, browser, baseURL }, testInfo) => {
  // three screens, two users and the saga twice through Kafka: longer than one screen's default minute
  test.setTimeout(240_000);
  // an agent (another session) reserves a free object; the chessboard holds it through Kafka
  const agent = await apiAs(baseURL!, USERS.agent);
  const object = await freeObjectOfTenantA(agent);
  const deals = await trpcQuery<{ items: { id: string }[] }>(agent, 'deal.list', { status: ['Application', 'Booking'], pageSize: 5 });
  const programs = await trpcQuery<{ id: string; isPaid: boolean }[]>(agent, 'booking.programs', undefined);
  const booking = await trpcMutation<BookingRow>(agent, 'booking.create', { dealId: deals.items[0].id, programId: programs.find((p) => !p.isPaid)!.id, propertyObjectId: object.id });
  await waitForObjectStatus(agent, object.id, 'Reserved');

  await signIn(page, USERS.ops);
  await page.goto(`/chessboard?project=${object.projectId}&building=${object.buildingId}&object=${object.id}`);
  const drawer = page.getByTestId('object-drawer');
  await expect(drawer.getByTestId('object-status')).toContainText(/Забронирован|Резерв|Reserved/);
  await drawer.locator('button[data-action="releaseHold"]').click();
  const dialog = page.locator('dialog[open]');
  // the warning names the booking and its deadline, in words
  const warning = dialog.getByTestId('release-active-booking-warning');
  await expect(warning).toBeVisible();
  await expect(warning).toContainText(booking.id.slice(0, 8));
  await expect(warning).toContainText(/до|until/);
  // a typed reason AND an explicit choice are required before the button enables
  const confirm = dialog.getByTestId('dialog-confirm');
  await expect(confirm).toBeDisabled();
  await dialog.locator('textarea[name=reason]').fill('developer asked to show the flat free for a day');
  await expect(confirm).toBeDisabled();
  await expect(dialog.locator('input[type=radio][name=crmBooking]')).toHaveCount(2);
  await snap(page, testInfo, 'integrity-release-warning');
  await dialog.locator('input[type=radio][value=keep_booking]').check();
  await expect(confirm).toBeEnabled();
  await confirm.click();
  await expect(page.locator('dialog[open]')).toHaveCount(0);
  await waitForObjectStatus(page.request, object.id, 'Free');
  // the drawer, still on the flat, does not show a plain "free" beside the running booking: it warns and
  // says where to repair it
  const diverged = drawer.getByTestId('drawer-divergence');
  await expect(diverged).toBeVisible({ timeout: 15_000 });
  await expect(diverged).toContainText(/свободен, а бронь действует/);
  await expect(diverged.locator('a[href="/ops/reconciliation"]')).toBeVisible();
  await expect(diverged.locator(`a[href="/bookings/${booking.id}"]`)).toBeVisible();
  await snap(page, testInfo, 'integrity-drawer-diverged');
  const opsName = await page.getByTestId('user-name').innerText();

  // the booking page shows the divergence instead of "all hops done" and offers no Confirm — to a
  // developer manager, who could confirm it otherwise
  const managerContext = await browser.newContext({ baseURL });
  const manager = await managerContext.newPage();
  await signIn(manager, USERS.devManager);
  await manager.goto(`/bookings/${booking.id}`);
  await expect(manager.getByTestId('booking-divergence')).toBeVisible();
  await expect(manager.getByTestId('saga-state')).toContainText(/расходятся|disagree/);
  await expect(manager.locator('button[data-action="confirm"]')).toHaveCount(0);
  // the timeline names the release by its source and the person, not as a safety net
  await expect(manager.getByTestId('release-step')).toHaveText(`Освобождено вручную (${opsName})`);
  await snap(manager, testInfo, 'integrity-booking-diverged');

  // reconciliation lists it at once as a chosen divergence; "hold again" repairs it
  await page.goto('/ops/reconciliation');
  const row = page.locator(`[data-testid="reconciliation-table"] tr[data-object-id="${object.id}"]`);
  await expect(row).toBeVisible();
  await expect(row).toContainText(/Снято вручную|Released by hand/);
  await expect(row.locator('button[data-action="republish"]')).toHaveCount(0);
  await snap(page, testInfo, 'integrity-reconciliation-divergence');
  await row.locator('button[data-action="rehold"]').click();
  await page.locator('dialog[open] textarea[name=reason]').fill('crm is right, hold it again');
  await page.locator('dialog[open]').getByTestId('dialog-confirm').click();
  await expect(page.locator('.notice-success')).toBeVisible();
  await expect(row).toHaveCount(0);
  const { object: after } = await trpcQuery<ObjectInfo>(page.request, 'chessboard.object', { propertyObjectId: object.id });
  expect(after.status).toBe('Reserved');

  // the booking page agrees again: no divergence, Confirm is offered
  await manager.goto(`/bookings/${booking.id}`);
  await expect(manager.locator('button[data-action="confirm"]')).toBeVisible();
  await expect(manager.getByTestId('booking-divergence')).toHaveCount(0);
  await managerContext.close();
  await agent.dispose();
});
