import { z } from 'zod';

/**
 * The dates a request may carry: what PostgreSQL's timestamptz takes as JavaScript sends it (a year
 * after 9999 is written "+010000-…", which PostgreSQL refuses). A date outside is a 400 naming its field
 * — never a query that fails in the database with "a value of the request cannot be stored".
 */
export const EARLIEST_DATE = new Date('1900-01-01T00:00:00.000Z');
export const LATEST_DATE = new Date('9999-12-31T23:59:59.999Z');
const RANGE = 'a date between 1900-01-01 and 9999-12-31';

export const storableDate = () => z.date(RANGE).min(EARLIEST_DATE, RANGE).max(LATEST_DATE, RANGE);
