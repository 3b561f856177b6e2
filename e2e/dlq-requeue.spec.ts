import { randomUUID } from 'node:crypto';
import { expect, test } from '@playwright/test';
import { Kafka, logLevel } from 'kafkajs';
import { signIn, snap, USERS } from './helpers';

/**
 * "Вернуть" on one group's DLQ row re-delivers to that group only: the message fails there again and
 * comes back as the same row with two attempts, while the rows of the other groups stay as they were.
 * A bulk decision takes its rows off the table with the action's answer, not at the next read.
 */
test('requeue re-delivers to one group, counts attempts; bulk discard clears the rows at once', async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  const kafka = new Kafka({ clientId: 'e2e-dlq-requeue', brokers: process.env.KAFKA_BROKERS!.split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  const key = randomUUID();
  await producer.connect();
  try {
    await producer.send({ topic: `${process.env.KAFKA_TOPIC_PREFIX ?? ''}pin.crm.booking-created.v1`, messages: [{ key, value: '{not json' }] });
  } finally {
    await producer.disconnect();
  }

  await signIn(page, USERS.ops);
  await page.goto('/ops/messaging');
  const ours = page.getByTestId('dlq-table').locator('tbody tr', { hasText: key.slice(0, 8) });
  const chat = ours.filter({ hasText: 'messenger.deal-chat' });
  await expect(chat).toHaveCount(1, { timeout: 90_000 });
  // every group of the topic has dead-lettered it once the counts settle
  await expect(async () => {
    const before = await ours.count();
    await page.waitForTimeout(6_000);
    expect(await ours.count()).toBe(before);
  }).toPass({ timeout: 60_000 });
  const groups = await ours.count();
  expect(groups).toBeGreaterThan(1);
  await expect(chat.getByTestId('dlq-attempts')).toContainText('1 попытка');
  await expect(chat.getByTestId('dlq-attempts')).toContainText('только по «Вернуть»');

  await chat.locator('button[data-action="requeue"]').click();
  const dialog = page.locator('dialog[open]');
  await dialog.locator('textarea[name=reason]').fill('e2e: consumer fixed');
  await dialog.getByTestId('dialog-confirm').click();
  await expect(dialog).toHaveCount(0);
  // the deal-chat group refuses the copy again: the same row, second attempt; no new rows for the other groups
  await expect(chat.getByTestId('dlq-attempts')).toContainText('2 попытки', { timeout: 60_000 });
  await expect(ours).toHaveCount(groups);
  await snap(page, testInfo, 'ops-dlq-attempts');

  for (let i = 0; i < groups; i++) await ours.nth(i).getByRole('checkbox').check();
  await page.getByTestId('dlq-bulk').locator('button[data-action="discard-selected"]').click();
  await dialog.locator('textarea[name=reason]').fill('e2e: garbage from a test producer');
  await dialog.getByTestId('dialog-confirm').click();
  await expect(page.getByTestId('dlq-bulk-result')).toContainText(`Отброшено ${groups}`);
  // the same render as the result: no row of the discarded ones is left with live buttons
  expect(await ours.count()).toBe(0);
});
