import { randomUUID } from 'node:crypto';
import { expect, test } from '@playwright/test';
import { Kafka, logLevel } from 'kafkajs';
import { signIn, snap, USERS } from './helpers';

/**
 * #19: Hangfire-style bulk decisions on the DLQ. Two poison messages (not JSON) go through the real
 * broker to a crm topic; every consumer of it sends them to its DLQ; ops select them and discard them
 * with one reason, and the page says how many were decided.
 */
test('ops select several DLQ messages and discard them with one reason', async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  const kafka = new Kafka({ clientId: 'e2e-dlq', brokers: process.env.KAFKA_BROKERS!.split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  const key = randomUUID();
  await producer.connect();
  try {
    await producer.send({
      topic: `${process.env.KAFKA_TOPIC_PREFIX ?? ''}pin.crm.booking-created.v1`,
      messages: [{ key, value: '{not json 1' }, { key, value: '{not json 2' }],
    });
  } finally {
    await producer.disconnect();
  }

  await signIn(page, USERS.ops);
  await page.goto('/ops/messaging');
  const ours = page.getByTestId('dlq-table').locator('tbody tr', { hasText: key.slice(0, 8) });
  // every consumer of the topic dead-letters both (chessboard at least); the page reads the DLQs from Kafka
  // (the list refetches every 5 s; the server reads new DLQ records from Kafka when asked)
  await expect(ours.nth(1)).toBeVisible({ timeout: 90_000 });
  const n = await ours.count();
  for (let i = 0; i < n; i++) await ours.nth(i).getByRole('checkbox').check();
  const bulk = page.getByTestId('dlq-bulk');
  await expect(bulk).toContainText(`${n}`);
  await bulk.locator('button[data-action="discard-selected"]').click();
  const dialog = page.locator('dialog[open]');
  await expect(dialog).toContainText(`${n}`);
  await expect(dialog.getByTestId('dialog-confirm')).toBeDisabled();
  await dialog.locator('textarea[name=reason]').fill('e2e: garbage from a test producer');
  await snap(page, testInfo, 'ops-dlq-bulk-dialog');
  await dialog.getByTestId('dialog-confirm').click();
  await expect(page.getByTestId('dlq-bulk-result')).toContainText(`Отброшено ${n}`);
  await expect(ours).toHaveCount(0);
  // decided, not lost: with decided ones shown, they are there with the reason
  await page.getByLabel('показать разобранные').check();
  await expect(ours.first()).toContainText('e2e: garbage from a test producer');
});
