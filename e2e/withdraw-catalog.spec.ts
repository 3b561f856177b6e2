import { expect, test, type Page } from '@playwright/test';
import postgres from 'postgres';
import { cell, freeObjectOfTenantA, openBuildingOf, signIn, snap, trpcQuery, USERS, type BookingRow, dropSession } from './helpers';

/**
 * Catalog actions of a developer manager (#19) feeding the ops Delisted backlog that delisted-retention
 * purges. Named to run after ops.spec.ts (one worker, files in name order): that spec counts the seed's
 * old Delisted cards before its own Run now, which this spec's Run now would purge first.
 */

/** Signs in as another user in the same page (the login page of a signed-in session redirects away). */
async function signInAs(page: Page, email: string) {
  await dropSession(page);
  await signIn(page, email);
}

const figure = async (page: Page, testId: string) => Number((await page.getByTestId(testId).innerText()).replace(/\s/g, ''));

async function cardStatus(sql: postgres.Sql, id: string): Promise<string | null> {
  const [row] = await sql<{ status: string }[]>`SELECT status FROM catalog.property_object_cards WHERE id = ${id}`;
  return row?.status ?? null;
}

test.describe.serial('catalog actions', () => {
  test('a developer manager withdraws an object → Delisted backlog → delisted-retention purges it once past the retention period', async ({ page }, testInfo) => {
    test.setTimeout(180_000);
    const sql = postgres(process.env.DATABASE_URL!, { max: 1 });
    try {
      await signInAs(page, USERS.ops);
      await page.goto('/ops/catalog');
      const allBefore = await figure(page, 'backlog-objects-all');

      await signInAs(page, USERS.devManager);
      const target = await freeObjectOfTenantA(page.request);
      expect(await cardStatus(sql, target.id)).toBe('Published');
      await openBuildingOf(page, target.id);
      await cell(page, target.id).click();
      const drawer = page.getByTestId('object-drawer');
      // a developer manager does not book: the drawer says who does
      await expect(drawer.getByTestId('who-books-note')).toBeVisible();
      await drawer.locator('button[data-action="withdrawObject"]').click();
      const dialog = page.locator('dialog[open]');
      await expect(dialog).toContainText(target.number);
      // the reason is required before the button enables
      await expect(dialog.getByTestId('dialog-confirm')).toBeDisabled();
      await dialog.locator('textarea[name=reason]').fill('e2e: withdrawn from sale by the developer');
      // it cannot be undone: the flat's number typed in, exactly, before the button enables
      await expect(dialog.getByTestId('dialog-confirm')).toBeDisabled();
      await dialog.locator('input[name=confirmText]').fill(`${target.number}9`);
      await expect(dialog.getByTestId('dialog-confirm')).toBeDisabled();
      await dialog.locator('input[name=confirmText]').fill(target.number);
      await snap(page, testInfo, 'catalog-withdraw-dialog');
      await dialog.getByTestId('dialog-confirm').click();
      await expect(page.getByTestId('object-drawer')).toHaveCount(0);
      // the drawer is gone with the flat; the page says what happened
      await expect(page.getByTestId('toast')).toContainText(`Квартира ${target.number} снята с продажи`);
      await expect(cell(page, target.id)).toHaveCount(0);

      // audited with who and why, in the command's transaction
      const [audit] = await sql<{ reason: string }[]>`SELECT reason FROM ops.audit_log WHERE action = 'chessboard.withdraw-property-object' AND target_id = ${target.id}`;
      expect(audit?.reason).toBe('e2e: withdrawn from sale by the developer');

      // the catalog delists the card from the event (outbox → Kafka → card projection)
      await expect.poll(() => cardStatus(sql, target.id), { timeout: 60_000 }).toBe('Delisted');
      await signInAs(page, USERS.ops);
      await page.goto('/ops/catalog');
      await expect.poll(async () => { await page.reload(); return figure(page, 'backlog-objects-all'); }, { timeout: 60_000 }).toBe(allBefore + 1);
      const pastBefore = await figure(page, 'backlog-objects-past');

      // the retention clock starts at the card's updated_at: move it past the configured 30 days, as if
      // the card had waited that long (the job reads PostgreSQL's now(); nothing else about the card changes)
      await sql`UPDATE catalog.property_object_cards SET updated_at = now() - interval '31 days' WHERE id = ${target.id}`;
      await page.reload();
      await expect(page.getByTestId('backlog-objects-past')).toHaveText(String(pastBefore + 1));
      await page.locator('button[data-action="run-now"][data-job="delisted-retention"]').first().click();
      await page.locator('dialog[open]').getByTestId('dialog-confirm').click();
      await expect(page.getByTestId('run-result-delisted-retention')).toContainText(/успешно|succeeded/, { timeout: 60_000 });
      await expect(page.getByTestId('backlog-objects-past')).toHaveText('0');
      expect(await cardStatus(sql, target.id)).toBeNull();
      await snap(page, testInfo, 'catalog-withdrawn-purged');
    } finally {
      await sql.end();
    }
  });

  test('hide and show from the storefront; the viewer has a read-only note; the agent has no Ops link', async ({ page }) => {
    // four sign-ins and two commands: longer than the default minute on a loaded machine
    test.setTimeout(180_000);
    await signInAs(page, USERS.devManager);
    const target = await freeObjectOfTenantA(page.request);
    await openBuildingOf(page, target.id);
    await cell(page, target.id).click();
    const drawer = page.getByTestId('object-drawer');
    await drawer.locator('button[data-action="hide"]').click();
    await page.locator('dialog[open] textarea[name=reason]').fill('e2e: photos pending');
    await page.locator('dialog[open]').getByTestId('dialog-confirm').click();
    await expect(drawer.getByTestId('catalog-action-done')).toHaveAttribute('role', 'status');
    await expect(drawer.getByTestId('object-status')).toContainText(/Скрыт|Hidden/);
    // credited to the person who hid it, not to ops
    const me = await page.getByTestId('user-name').innerText();
    await expect(drawer.getByTestId('status-set-by')).toHaveText(`Вручную · ${me}`);
    await drawer.locator('button[data-action="show"]').click();
    await page.locator('dialog[open] textarea[name=reason]').fill('e2e: photos done');
    await page.locator('dialog[open]').getByTestId('dialog-confirm').click();
    await expect(drawer.getByTestId('object-status')).toContainText(/Свобод|Free/);

    await signInAs(page, USERS.viewer);
    await openBuildingOf(page, target.id);
    await cell(page, target.id).click();
    await expect(page.getByTestId('object-drawer').getByTestId('read-only-note')).toBeVisible();
    await expect(page.getByTestId('catalog-actions')).toHaveCount(0);
    await expect(page.locator('.shell-nav a[href="/ops"]')).toHaveCount(1);

    await signInAs(page, USERS.agent);
    await expect(page.locator('.shell-nav a[href="/chessboard"]')).toHaveCount(1);
    await expect(page.locator('.shell-nav a[href="/ops"]')).toHaveCount(0);
    await page.goto('/ops');
    await expect(page.getByTestId('ops-no-access')).toBeVisible();
  });

  test('/bookings/<short id> redirects to the booking in the tenant scope; another tenant gets 404', async ({ page }) => {
    await signInAs(page, USERS.devManager);
    const { items } = await trpcQuery<{ items: BookingRow[] }>(page.request, 'booking.list', { pageSize: 5 });
    const booking = items[0];
    expect(booking, 'the demo seed has bookings in tenant A').toBeTruthy();
    const short = booking.id.slice(0, 8);
    await page.goto(`/bookings/${short}`);
    await page.waitForURL(new RegExp(`/bookings/${booking.id}$`));
    await expect(page.getByTestId('saga-timeline')).toBeVisible();

    await signInAs(page, USERS.devManagerB);
    const res = await page.goto(`/bookings/${short}`);
    expect(res?.status()).toBe(404);
  });
});
