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
  // every option names the deal as people do (title · client · status · last change), and the list is searchable
  // the agent's name arrives with a second query (auth.userNames), so the label is awaited, not read once
  await expect(dealSelect.locator('option').nth(1)).toHaveText(/^Сделка №\d+ · (.+ · )?(Заявка|Бронь) · .+/);
  const firstOption = (await dealSelect.locator('option').nth(1).innerText()).trim();
  const title = firstOption.split(' · ')[0];
  await form.getByRole('searchbox').fill(title.replace('Сделка ', ''));
  await expect(dealSelect.locator('option')).toHaveCount(2); // the placeholder and the one deal
  await expect(form.getByText(/Найдена 1 сделка/)).toBeVisible();
  await dealSelect.selectOption({ index: 1 });
  await expect(dealSelect.locator('option:checked')).toContainText(title);
  const programSelect = form.locator('select[name=programId]');
  await expect(programSelect.locator('option', { hasText: 'бесплатная' })).toHaveCount(1);
  const freeProgram = await programSelect.locator('option', { hasText: 'бесплатная' }).getAttribute('value');
  await programSelect.selectOption(freeProgram!);
  await form.locator('[data-action=create]').click();
  await expect(page.getByRole('dialog', { name: 'Создать бронь?' })).toBeVisible();
  await snap(page, testInfo, 'create-booking-dialog');
  // once the dialog has closed, the filled-in form must not come back (it flashed while the drawer refetched)
  await page.evaluate(() => {
    const w = window as unknown as { __formAfterCreate?: boolean };
    w.__formAfterCreate = false;
    new MutationObserver(() => {
      if (!document.querySelector('dialog[open]') && document.querySelector('form.create-booking')) w.__formAfterCreate = true;
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  await page.getByTestId('dialog-confirm').click();
  await expect(drawer.getByTestId('create-done').or(drawer.getByTestId('booking-status'))).toBeVisible();
  await expect(page.getByTestId('toast')).toContainText('создана');

  // crm answers at once; the chessboard consumer applies Reserved asynchronously and the grid updates live
  await expect(drawer.getByTestId('booking-status')).toHaveText('Резерв', { timeout: 20_000 });
  await expect(target).toHaveAttribute('data-status', 'Reserved', { timeout: 20_000 });
  await expect(target.locator('.countdown')).toBeVisible();
  expect(await page.evaluate(() => (window as unknown as { __formAfterCreate?: boolean }).__formAfterCreate)).toBe(false);
  // an agent confirms and cancels its own booking; it cannot confirm payments or extend
  await expect(drawer.locator('[data-action=confirm]')).toBeVisible();
  await expect(drawer.locator('[data-action=cancel]')).toBeVisible();
  await expect(drawer.locator('[data-action=extend]')).toHaveCount(0);
  // the object's history says what happened in words, not the topic the consumer read it from (#19 point 5)
  const history = drawer.getByTestId('status-history');
  await expect(history.locator('li').first()).toContainText('Свободен → Резерв');
  await expect(history.locator('li').first()).toContainText('Бронь создана');
  await expect(history).not.toContainText('pin.crm');
});
