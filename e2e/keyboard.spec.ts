import { expect, test, type Page } from '@playwright/test';
import { signIn, USERS } from './helpers';

const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    const row = el?.closest('[role=row]');
    return {
      role: el?.getAttribute('role') ?? null,
      id: el?.dataset.cellId ?? null,
      number: el?.dataset.number ?? null,
      col: Number(el?.getAttribute('aria-colindex')),
      row: Number(row?.getAttribute('aria-rowindex')),
    };
  });

test('the grid is one tab stop; arrows, Home/End move between cells; Enter opens the cell', async ({ page }) => {
  await signIn(page, USERS.devManager);
  const grid = page.getByRole('grid');
  await expect(grid.getByRole('gridcell').first()).toBeVisible();
  await expect(grid.locator('[role=gridcell][tabindex="0"]')).toHaveCount(1);

  // Tab from the last filter field lands on the grid's single tab stop
  await page.getByRole('textbox', { name: /Максимальная площадь|Maximum area/ }).focus();
  await page.keyboard.press('Tab');
  const start = await focused(page);
  expect(start.role).toBe('gridcell');

  await page.keyboard.press('ArrowRight');
  const right = await focused(page);
  expect(right.row).toBe(start.row);
  expect(right.col).toBeGreaterThan(start.col);
  await expect(grid.locator('[role=gridcell][tabindex="0"]')).toHaveAttribute('data-cell-id', right.id!);

  await page.keyboard.press('ArrowDown');
  const down = await focused(page);
  expect(down.row).toBe(right.row + 1);
  expect(down.col).toBe(right.col);

  await page.keyboard.press('ArrowLeft');
  const left = await focused(page);
  expect(left.row).toBe(down.row);
  expect(left.col).toBeLessThan(down.col);

  await page.keyboard.press('ArrowUp');
  expect((await focused(page)).row).toBe(left.row - 1);

  await page.keyboard.press('End');
  const end = await focused(page);
  await page.keyboard.press('Home');
  const home = await focused(page);
  expect(home.row).toBe(end.row);
  expect(home.col).toBeLessThan(end.col);
  expect(home.col).toBe(2); // the first unit column (column 1 is the floor header)

  await page.keyboard.press('Enter');
  const drawer = page.getByTestId('object-drawer');
  await expect(drawer.getByRole('heading', { level: 2 })).toContainText(home.number!);
  await page.keyboard.press('Escape');
  await expect(drawer).toHaveCount(0);
  await expect.poll(async () => (await focused(page)).id).toBe(home.id);

  // Tab leaves the grid: it is a single stop, not one per cell
  await page.keyboard.press('Tab');
  expect((await focused(page)).role).not.toBe('gridcell');
});
