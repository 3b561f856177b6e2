-- the bookings search and the deal picker find a deal by words of its title ("Сделка №1019", "1019"):
-- ILIKE '%…%' on a trigram index instead of reading every deal of the tenant
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "ix_deals_title_trgm" ON "crm"."deals" USING gin ("title" gin_trgm_ops);
