import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { apiAs, cell, e2eRequisites, freeObjectOfTenantA, openBuildingOf, signIn, snap, trpcMutation, trpcQuery, USERS, waitForObjectStatus, dropSession } from './helpers';

/**
 * #23: the agent fills the buyer's requisites while creating a booking; the booking page shows them
 * masked (passport •••• last 4); a developer manager reveals them (audited); the viewer never sees them.
 */
test('an agent creates a booking with requisites; a manager reveals them; the viewer sees none', async ({ page }, testInfo) => {
  // five sign-ins and the reveal log's walk in both locales: more than the default minute on a loaded machine
  test.setTimeout(180_000);
  const fields = e2eRequisites();
  await signIn(page, USERS.agent);
  const object = await freeObjectOfTenantA(page.request);
  await openBuildingOf(page, object.id);
  await cell(page, object.id).click();

  const drawer = page.getByTestId('object-drawer');
  const form = drawer.getByRole('form', { name: 'Новая бронь' });
  await expect(form).toBeVisible();
  const dealSelect = form.locator('select[name=dealId]');
  await expect(dealSelect.locator('option')).not.toHaveCount(1);
  await dealSelect.selectOption({ index: 1 });
  const programSelect = form.locator('select[name=programId]');
  const freeProgram = await programSelect.locator('option', { hasText: 'бесплатная' }).getAttribute('value');
  await programSelect.selectOption(freeProgram!);

  const picker = form.getByTestId('requisites-picker');
  await picker.locator('[data-action=new-requisites]').click();
  for (const [name, value] of Object.entries(fields)) await picker.locator(`input[name=${name}]`).fill(value);
  await picker.locator('[data-action=save-requisites]').click();
  const setSelect = picker.locator('select[name=requisiteSetId]');
  await expect(setSelect).not.toHaveValue('');
  await expect(setSelect.locator('option:checked')).toContainText(`•••• ${fields.passportNumber.slice(-4)}`);
  await snap(page, testInfo, 'requisites-create-booking');

  await form.locator('[data-action=create]').click();
  await page.getByTestId('dialog-confirm').click();
  await expect(drawer.getByTestId('booking-status')).toHaveText('Резерв', { timeout: 20_000 });
  const href = await drawer.getByTestId('booking-link').getAttribute('href');
  expect(href).toMatch(/\/bookings\/[0-9a-f-]{36}$/);

  // the developer manager: masked first, the full set on Show
  await dropSession(page);
  await signIn(page, USERS.devManager);
  await page.goto(href!);
  const card = page.getByTestId('booking-requisites');
  await expect(card.getByTestId('requisites-masked')).toContainText(`•••• ${fields.passportNumber.slice(-4)}`);
  await expect(card).not.toContainText(fields.passportNumber);
  await expect(card).not.toContainText(fields.fullName);
  await snap(page, testInfo, 'requisites-masked');
  // a reveal asks why: Show stays off until a reason is given
  await expect(card.locator('[data-action=show-requisites]')).toBeDisabled();
  const reason = `договор ${Date.now()}`;
  await card.locator('input[name=revealReason]').fill(reason);
  await card.locator('[data-action=show-requisites]').click();
  const revealed = card.getByTestId('requisites-revealed');
  await expect(revealed).toContainText(fields.fullName);
  await expect(revealed).toContainText(fields.passportNumber);
  await expect(revealed).toContainText(fields.inn);
  await snap(page, testInfo, 'requisites-revealed');
  await card.locator('[data-action=hide-requisites]').click();
  await expect(card.getByTestId('requisites-revealed')).toHaveCount(0);

  // a PIN manager sees who viewed them, when and why (the reveal log), and filters by the set and by the person
  await dropSession(page);
  await signIn(page, USERS.pinManager);
  await page.goto('/ops/reveals');
  await expect(page.locator('main h2')).toHaveText('Кто смотрел реквизиты покупателей');
  const row = page.getByTestId('reveals-table').locator('tbody tr', { hasText: reason });
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('reveal-reason')).toHaveText(reason);
  await expect(page.locator('main')).not.toContainText(fields.fullName);
  await expect(page.locator('main')).not.toContainText(fields.passportNumber);
  await row.getByTestId('reveal-set').getByRole('button').click();
  await expect(page).toHaveURL(/[?&]set=[0-9a-f-]{36}/);
  await expect(page.getByTestId('reveals-table').locator('tbody tr')).toHaveCount(1);
  await page.getByTestId('reveals-table').locator('tbody tr').first().getByTestId('reveal-user').getByRole('button').click();
  await expect(page).toHaveURL(/[?&]user=/);
  await expect(page.getByTestId('reveals-user-filter')).toBeVisible();
  await expect(page.getByTestId('reveals-table').locator('tbody tr', { hasText: reason })).toHaveCount(1);
  await snap(page, testInfo, 'ops-reveals');
  const { violations } = await new AxeBuilder({ page }).analyze();
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  // the same screen in English
  await page.context().addCookies([{ name: 'NEXT_LOCALE', value: 'en', url: page.url() }]);
  await page.reload();
  await expect(page.locator('main h2')).toHaveText("Who viewed buyers' requisites");
  await expect(page.getByTestId('reveals-table').locator('tbody tr', { hasText: reason })).toHaveCount(1);
  await page.context().addCookies([{ name: 'NEXT_LOCALE', value: 'ru', url: page.url() }]);

  // the viewer has no reveal log (the tab is not shown; the page says so)
  await dropSession(page);
  await signIn(page, USERS.viewer);
  await page.goto('/ops/reveals');
  await expect(page.getByTestId('reveals-no-access')).toBeVisible();
  await expect(page.locator('.ops-tabs a[href="/ops/reveals"]')).toHaveCount(0);

  // the viewer: no requisites at all
  await dropSession(page);
  await signIn(page, USERS.viewer);
  await page.goto(href!);
  await expect(page.getByTestId('booking-status')).toBeVisible();
  await expect(page.getByTestId('booking-requisites')).toHaveCount(0);
  await expect(page.locator('body')).not.toContainText(fields.fullName);
});

/**
 * A paid booking made without the buyer's requisites (the demo seed's, or one an agent made in a
 * hurry) gets them in the upload-contract dialog: crm draws the contract up for them and refuses
 * the contract without them (CRM_BOOKING_REQUISITES_REQUIRED).
 */
test('a manager uploads the contract of a paid booking without requisites: the dialog asks for them', async ({ page, baseURL }, testInfo) => {
  const fields = e2eRequisites();
  await signIn(page, USERS.devManager);
  const pin = await apiAs(baseURL!, USERS.pinManager);
  const me = await trpcQuery<{ tenantId: string }>(page.request, 'auth.me', undefined);
  const object = await freeObjectOfTenantA(page.request);
  const deals = await trpcQuery<{ items: { id: string }[] }>(pin, 'deal.list', { status: ['Application', 'Booking'], tenantId: me.tenantId, pageSize: 10 });
  const programs = await trpcQuery<{ id: string; isPaid: boolean }[]>(pin, 'booking.programs', { tenantId: me.tenantId });
  const booking = await trpcMutation<{ id: string }>(pin, 'booking.create', { dealId: deals.items.at(-1)!.id, programId: programs.find((p) => p.isPaid)!.id, propertyObjectId: object.id });
  await pin.dispose();
  await waitForObjectStatus(page.request, object.id, 'Reserved');

  await page.goto(`/bookings/${booking.id}`);
  await expect(page.getByTestId('requisites-none')).toBeVisible();
  await page.locator('[data-action=uploadContract]').click();
  const dialog = page.locator('dialog[open]');
  const picker = dialog.getByTestId('requisites-picker');
  await expect(picker).toBeVisible();
  // a paid contract needs a set: the empty choice asks for one, it does not offer "no requisites (free program)"
  await expect(picker.locator('select[name=requisiteSetId] option[value=""]')).toHaveText('Выберите или добавьте набор');
  await picker.locator('[data-action=new-requisites]').click();
  for (const [name, value] of Object.entries(fields)) await picker.locator(`input[name=${name}]`).fill(value);
  await picker.locator('[data-action=save-requisites]').click();
  await expect(picker.locator('select[name=requisiteSetId]')).not.toHaveValue('');
  await snap(page, testInfo, 'upload-contract-requisites');
  await dialog.getByTestId('dialog-confirm').click();

  await expect(page.getByTestId('booking-status')).toHaveText('Ожидает оплаты', { timeout: 20_000 });
  await expect(page.getByTestId('booking-requisites').getByTestId('requisites-masked')).toContainText(`•••• ${fields.passportNumber.slice(-4)}`);
});
