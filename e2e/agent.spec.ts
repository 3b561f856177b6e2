import { expect, test } from '@playwright/test';
import { cell, freeObjectOfTenantA, openBuildingOf, signIn, snap, USERS } from './helpers';

test('an agent creates a booking on a Free cell and sees it Reserved', async ({ page }, testInfo) => {
  await signIn(page, USERS.agent);
  const object = await freeObjectOfTenantA(page.request);
  await openBuildingOf(page, object.id);
  const target = cell(page, object.id);
  await expect(target).toHaveAttribute('data-status', 'Free');
  await target.click();

  const drawer = page.getByTestId('object-drawer');
  const form = drawer.getByRole('form', { name: 'Новая бронь' });
  await expect(form).toBeVisible();
  const dealSelect = form.locator('select[name=dealId]');
  await expect(dealSelect.locator('option')).not.toHaveCount(1);
  await dealSelect.selectOption({ index: 1 });
  const programSelect = form.locator('select[name=programId]');
  await expect(programSelect.locator('option', { hasText: 'бесплатная' })).toHaveCount(1);
  const freeProgram = await programSelect.locator('option', { hasText: 'бесплатная' }).getAttribute('value');
  await programSelect.selectOption(freeProgram!);
  await form.locator('[data-action=create]').click();
  await expect(page.getByRole('dialog', { name: 'Создать бронь?' })).toBeVisible();
  await snap(page, testInfo, 'create-booking-dialog');
  await page.getByTestId('dialog-confirm').click();

  // crm answers at once; the chessboard consumer applies Reserved asynchronously and the grid updates live
  await expect(drawer.getByTestId('booking-status')).toHaveText('Резерв', { timeout: 20_000 });
  await expect(target).toHaveAttribute('data-status', 'Reserved', { timeout: 20_000 });
  await expect(target.locator('.countdown')).toBeVisible();
  // an agent confirms and cancels its own booking; it cannot confirm payments or extend
  await expect(drawer.locator('[data-action=confirm]')).toBeVisible();
  await expect(drawer.locator('[data-action=cancel]')).toBeVisible();
  await expect(drawer.locator('[data-action=extend]')).toHaveCount(0);
});
