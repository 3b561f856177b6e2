-- reports.funnel reads the step durations (the medians) from the rollup's `all` rows only: one per tenant
-- and day among ~65. Without this index a tenant's year visits all ~23,000 of its rows to keep 365.
CREATE INDEX "ix_booking_daily_rollup_all" ON "crm"."booking_daily_rollup" USING btree ("tenant_id","day") WHERE dim = 'all';
