import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, request as playwrightRequest, type APIRequestContext, type Page, type TestInfo } from '@playwright/test';

export const PASSWORD = 'demo-password-1';
export const USERS = {
  agent: 'agent@pin.local',
  devManager: 'dev-manager@pin.local',
  devManagerB: 'dev-manager-b@pin.local',
  pinManager: 'pin-manager@pin.local',
  ops: 'ops@pin.local',
  viewer: 'viewer@pin.local',
  investor: 'investor@pin.local',
} as const;

const SCREENSHOT_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'screenshots');

/** Attaches a screenshot to the report and keeps a copy in e2e/screenshots/<name>.png. */
export async function snap(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const body = await page.screenshot({ fullPage: false });
  fs.writeFileSync(path.join(SCREENSHOT_DIR, `${name}.png`), body);
  await testInfo.attach(name, { body, contentType: 'image/png' });
}

/**
 * The path of one of the README's screenshots (docs/screenshots/<file>): written there only when asked
 * (`npm test -- --e2e --screenshots`), else to e2e/screenshots/docs/, so that a test run leaves the
 * checkout as it was.
 */
export function docsScreenshot(file: string): string {
  const dir = process.env.E2E_DOCS_SCREENSHOTS === '1'
    ? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'screenshots')
    : path.join(SCREENSHOT_DIR, 'docs');
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, file);
}

/**
 * Signs the page's user out by dropping the session cookie, with the page first on about:blank: a console
 * page left open would see its next request answered 401 and go to /login by itself, and that navigation
 * races (aborts, or is aborted by) the signIn that follows.
 */
export async function dropSession(page: Page): Promise<void> {
  await page.goto('about:blank');
  await page.context().clearCookies();
}

export async function signIn(page: Page, email: string): Promise<void> {
  await page.goto('/login');
  await page.locator('input[name=email]').fill(email);
  await page.locator('input[name=password]').fill(PASSWORD);
  await page.locator('form.login-form button[type=submit]').click();
  await page.waitForURL(/\/chessboard/);
  await expect(page.getByTestId('user-name')).toBeVisible();
}

/** tRPC over HTTP with the page's session cookie (superjson wire format). */
export async function trpcQuery<T>(request: APIRequestContext, pathName: string, input: unknown): Promise<T> {
  const res = await request.get(`/api/trpc/${pathName}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`);
  const body = await res.json();
  if (!res.ok()) throw new Error(`${pathName} failed: ${res.status()} ${JSON.stringify(body.error?.json ?? body)}`);
  return body.result.data.json as T;
}

export async function trpcMutation<T>(request: APIRequestContext, pathName: string, input: unknown): Promise<T> {
  const res = await request.post(`/api/trpc/${pathName}`, { data: { json: input } });
  const body = await res.json();
  if (!res.ok()) throw new Error(`${pathName} failed: ${res.status()} ${JSON.stringify(body.error?.json ?? body)}`);
  return body.result.data.json as T;
}

export interface BookingRow {
  id: string;
  status: string;
  paymentStatus: string;
  propertyObjectId: string;
  dealId: string;
  programId: string;
  version: number;
  bookingExpiresAt: string | null;
}

export interface ObjectInfo {
  object: { id: string; projectId: string; buildingId: string; number: string; status: string; tenantId: string };
}

/** Opens the chessboard on the building of an object (by URL: project + building). */
export async function openBuildingOf(page: Page, objectId: string): Promise<ObjectInfo['object']> {
  const { object } = await trpcQuery<ObjectInfo>(page.request, 'chessboard.object', { propertyObjectId: objectId });
  await page.goto(`/chessboard?project=${object.projectId}&building=${object.buildingId}`);
  await expect(page.locator('[role=grid] [role=gridcell]').first()).toBeVisible();
  return object;
}

export const cell = (page: Page, objectId: string) => page.locator(`[data-cell-id="${objectId}"]`);

/** Waits until the chessboard consumer has applied the object's status (the saga is asynchronous). */
export async function waitForObjectStatus(request: APIRequestContext, objectId: string, status: string, timeoutMs = 30_000): Promise<void> {
  await expect.poll(async () => (await trpcQuery<ObjectInfo>(request, 'chessboard.object', { propertyObjectId: objectId })).object.status, { timeout: timeoutMs })
    .toBe(status);
}

/** An API session of another user (its own cookie jar), for preparing data. */
export async function apiAs(baseURL: string, email: string): Promise<APIRequestContext> {
  const ctx = await playwrightRequest.newContext({ baseURL, extraHTTPHeaders: { origin: baseURL } });
  await trpcMutation(ctx, 'auth.signIn', { email, password: PASSWORD });
  return ctx;
}

interface GridInfo { cells: { id: string; status: string; number: string }[] }

/** A Free object of tenant A's first building with no active booking (for creating a booking). */
export async function freeObjectOfTenantA(api: APIRequestContext, skip: Set<string> = new Set()): Promise<{ id: string; number: string; buildingId: string; projectId: string; tenantId: string }> {
  const projects = await trpcQuery<{ id: string; tenantId: string; name: string }[]>(api, 'chessboard.projects', undefined);
  const tenantA = await trpcQuery<{ tenantId: string | null }>(api, 'auth.me', undefined);
  for (const project of projects.filter((p) => !tenantA.tenantId || p.tenantId === tenantA.tenantId)) {
    const buildings = await trpcQuery<{ id: string }[]>(api, 'chessboard.buildings', { projectId: project.id });
    for (const b of buildings) {
      const grid = await trpcQuery<GridInfo>(api, 'chessboard.grid', { buildingId: b.id });
      for (const c of grid.cells.filter((x) => x.status === 'Free' && !skip.has(x.id)).reverse()) {
        const active = await trpcQuery<{ items: BookingRow[] }>(api, 'booking.list', { propertyObjectId: c.id, status: ['Reserved', 'AwaitingPayment', 'Booked'] });
        if (active.items.length === 0) return { id: c.id, number: c.number, buildingId: b.id, projectId: project.id, tenantId: project.tenantId };
      }
    }
  }
  throw new Error('no free object left: reseed the database');
}

/**
 * A paid booking of tenant A awaiting payment confirmation with an uploaded receipt: one from the
 * demo seed if any is left, else one prepared through the API (PIN manager: create, contract, receipt).
 */
export async function paidBookingWithReceipt(baseURL: string, devManager: APIRequestContext): Promise<BookingRow> {
  const list = await trpcQuery<{ items: BookingRow[] }>(devManager, 'booking.list', { status: ['AwaitingPayment'], pageSize: 100 });
  for (const b of list.items.filter((x) => x.paymentStatus === 'ReceiptUploaded')) {
    const { object } = await trpcQuery<ObjectInfo>(devManager, 'chessboard.object', { propertyObjectId: b.propertyObjectId });
    if (object.status === 'Reserved') return b;
  }
  const pin = await apiAs(baseURL, USERS.pinManager);
  const me = await trpcQuery<{ tenantId: string | null }>(devManager, 'auth.me', undefined);
  const object = await freeObjectOfTenantA(devManager);
  const deals = await trpcQuery<{ items: { id: string }[] }>(pin, 'deal.list', { status: ['Application', 'Booking'], tenantId: me.tenantId, pageSize: 10 });
  const programs = await trpcQuery<{ id: string; isPaid: boolean }[]>(pin, 'booking.programs', { tenantId: me.tenantId });
  // a paid booking carries the buyer's requisites (#23: needed before upload-contract)
  const requisites = await trpcMutation<{ id: string; version: number }>(pin, 'profile.create', { tenantId: me.tenantId, fields: e2eRequisites() });
  const created = await trpcMutation<BookingRow>(pin, 'booking.create', {
    dealId: deals.items[0].id, programId: programs.find((p) => p.isPaid)!.id, propertyObjectId: object.id, requisites: { setId: requisites.id, version: requisites.version },
  });
  await trpcMutation(pin, 'booking.uploadContract', { bookingId: created.id, document: 'e2e-contract.pdf' });
  const withReceipt = await trpcMutation<BookingRow>(pin, 'booking.uploadReceipt', { bookingId: created.id, document: 'e2e-receipt.pdf' });
  await waitForObjectStatus(devManager, object.id, 'Reserved');
  await pin.dispose();
  return withReceipt;
}

/** A valid requisite set (Russian formats, INN with check digits) unique to this call. */
export function e2eRequisites() {
  const d = Array.from({ length: 10 }, () => Math.floor(Math.random() * 10));
  const check = (w: number[]) => (w.reduce((sum, x, i) => sum + x * d[i]!, 0) % 11) % 10;
  d.push(check([7, 2, 4, 10, 3, 5, 9, 4, 6, 8]));
  d.push(check([3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8]));
  const n = (len: number) => Array.from({ length: len }, () => Math.floor(Math.random() * 10)).join('');
  return {
    fullName: `Петрова Мария ${['Игоревна', 'Олеговна', 'Сергеевна'][Math.floor(Math.random() * 3)]}`,
    passportSeries: `4${n(3)}`,
    passportNumber: `5${n(5)}`,
    passportIssuedAt: '2016-04-12',
    passportIssuedBy: 'ГУ МВД России по г. Москве',
    registrationAddress: `г. Москва, ул. Тверская, д. ${1 + Math.floor(Math.random() * 30)}, кв. ${n(2)}`,
    phone: `+79${n(9)}`,
    email: `buyer-${n(6)}@example.ru`,
    inn: d.join(''),
  };
}
