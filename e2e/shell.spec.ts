import { expect, test } from '@playwright/test';
import { signIn, snap, USERS } from './helpers';

test.describe('console shell', () => {
  test('a page of the console redirects to the sign-in page without a session', async ({ page }) => {
    await page.goto('/bookings');
    await expect(page).toHaveURL(/\/login$/);
  });

  test('a wrong password shows a plain message and no session', async ({ page }) => {
    await page.goto('/login');
    await page.locator('input[name=email]').fill('nobody@pin.local');
    await page.locator('input[name=password]').fill('wrong-password');
    await page.locator('form.login-form button[type=submit]').click();
    await expect(page.locator('.login-form [role=alert]')).toHaveText(/Неверная эл. почта или пароль|The e-mail or password is incorrect/);
    await expect(page).toHaveURL(/\/login$/);
  });

  test('the shell shows navigation, the user and role, and signs out', async ({ page }, testInfo) => {
    await signIn(page, USERS.devManager);
    const nav = page.getByRole('navigation').first();
    // a developer manager's sections; no Ops link: the ops pages serve ops, PIN managers and viewers
    await expect(nav.getByRole('link')).toHaveText(['Шахматка', 'Брони', 'Отчёты', 'Вознаграждения']);
    await expect(nav.getByRole('link', { name: 'Эксплуатация' })).toHaveCount(0);
    await expect(page.getByTestId('user-role')).toHaveText('Менеджер застройщика');
    await nav.getByRole('link', { name: 'Брони' }).click();
    await expect(page).toHaveURL(/\/bookings/);
    await expect(page.getByTestId('bookings-table')).toBeVisible();
    await expect(page.getByTestId('bookings-table').locator('tbody tr').first().locator('td:nth-child(3) a')).toBeVisible();
    await snap(page, testInfo, 'bookings-list');
    await page.getByRole('button', { name: 'Выйти' }).click();
    await expect(page).toHaveURL(/\/login$/);
    await page.goto('/chessboard');
    await expect(page).toHaveURL(/\/login$/);
  });

  test('the ru/en switch changes the labels', async ({ page }) => {
    await signIn(page, USERS.devManager);
    const nav = page.getByRole('navigation').first();
    await expect(nav.getByRole('link', { name: 'Шахматка' })).toBeVisible();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Шахматка');
    await page.getByRole('button', { name: 'EN', exact: true }).click();
    await expect(nav.getByRole('link', { name: 'Chessboard' })).toBeVisible();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Chessboard');
    await expect(page.getByTestId('legend-Free')).toContainText('Free');
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await page.getByRole('button', { name: 'RU', exact: true }).click();
    await expect(nav.getByRole('link', { name: 'Шахматка' })).toBeVisible();
    await expect(page.getByTestId('legend-Free')).toContainText('Свободен');
  });
});
