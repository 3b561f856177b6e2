import { getServices } from '@/server/main/web-services';
import { bookingsCsvResponse } from '@/server/reports/bookings-csv-http';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** The bookings of a period as a CSV file (server/reports/bookings-csv-http.ts: auth, input, streaming). */
export async function GET(req: Request): Promise<Response> {
  const { database, logger } = getServices();
  return bookingsCsvResponse(database, logger, req);
}
