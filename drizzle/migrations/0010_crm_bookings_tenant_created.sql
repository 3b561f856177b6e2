CREATE INDEX "ix_bookings_tenant_created" ON "crm"."bookings" USING btree ("tenant_id","created_at");
