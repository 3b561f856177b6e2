import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { cell, freeObjectOfTenantA, openBuildingOf, signIn, snap, trpcQuery, USERS } from './helpers';

// a loaded 2-core machine renders a 1,000-cell board slowly
test.describe.configure({ timeout: 240_000 });

/** axe-core on the page: 0 serious or critical violations (the board excluded: it is checked in a11y.spec). */
async function axe(page: Page, screen: string) {
  const { violations } = await new AxeBuilder({ page }).exclude('.grid-scroll').analyze();
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.nodes.length} (${v.nodes[0]?.target.join(' ')})`), screen).toEqual([]);
}

test('an investor sees only its deals, books a free flat on one of them, cannot confirm it, and follows the deal', async ({ page }, testInfo) => {
  await signIn(page, USERS.investor);
  await expect(page.getByTestId('user-role')).toHaveText('Инвестор');
  await page.getByRole('link', { name: 'Мои сделки' }).click();
  await expect(page).toHaveURL(/\/deals$/);
  const rows = page.getByTestId('my-deal-link');
  // the server's answer is the investor's deals only (its scope): the page shows exactly those
  const mine = await trpcQuery<{ items: { id: string; title: string; investorId: string | null }[]; total: number }>(page.request, 'deal.list', { pageSize: 100 });
  expect(mine.total).toBeGreaterThan(0);
  await expect(rows).toHaveCount(mine.items.length);
  await expect(rows.first()).toHaveText(/^Сделка №\d+$/);
  await axe(page, 'my deals');
  await snap(page, testInfo, 'investor-my-deals');

  // the chessboard of its deals' developers: a free flat, booked for one of its deals
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
  const dealTitle = (await dealSelect.locator('option:checked').innerText()).split(' · ')[0]!.trim();
  const programSelect = form.locator('select[name=programId]');
  const freeProgram = await programSelect.locator('option', { hasText: 'бесплатная' }).first().getAttribute('value');
  await programSelect.selectOption(freeProgram!);
  await form.locator('[data-action=create]').click();
  await page.getByTestId('dialog-confirm').click();
  await expect(drawer.getByTestId('booking-status')).toHaveText('Резерв', { timeout: 20_000 });
  // managers confirm; the investor may cancel its own reserve
  await expect(drawer.locator('[data-action=confirm]')).toHaveCount(0);
  await expect(drawer.locator('[data-action=confirmPayment]')).toHaveCount(0);
  await expect(drawer.locator('[data-action=cancel]')).toBeVisible();
  await axe(page, 'investor drawer');

  // its deal's page: the booking, and the deal chat's card made by the messenger consumer (asynchronous)
  const deal = mine.items.find((d) => d.title === dealTitle)!;
  await page.goto(`/deals/${deal.id}`);
  await expect(page.getByTestId('deal-bookings')).toContainText('Резерв');
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId('deal-chat').locator('[data-card=booking-created]').first()).toBeVisible({ timeout: 3_000 });
  }).toPass({ timeout: 45_000 });
  await axe(page, 'investor deal page');
});

test('an agent sees its rewards with the flat and the deal; the developer manager sees the totals per agent', async ({ page, browser }, testInfo) => {
  await signIn(page, USERS.agent);
  await page.getByRole('link', { name: 'Вознаграждения' }).click();
  await expect(page).toHaveURL(/\/rewards$/);
  const rows = page.getByTestId('reward-row');
  // the demo's paid booking of this agent: recorded by rewards' consumer when the seed replayed its booking-paid
  await expect(rows.first()).toBeVisible();
  await expect(rows.first()).toContainText('Начислено');
  await expect(rows.first()).toContainText('Сделка №');
  await expect(rows.first()).toContainText('1,5 % от');
  await expect(page.getByTestId('reward-sums')).toContainText('₽');
  await axe(page, 'agent rewards');
  await snap(page, testInfo, 'agent-rewards');

  const managerContext = await browser.newContext({ baseURL: testInfo.project.use.baseURL });
  const manager = await managerContext.newPage();
  try {
    await signIn(manager, USERS.devManager);
    await manager.goto('/rewards');
    const totals = manager.getByTestId('reward-total-row');
    await expect(totals.filter({ hasText: 'Агент Иванов' })).toHaveCount(1);
    await axe(manager, 'manager reward totals');
  } finally {
    await managerContext.close();
  }
});
