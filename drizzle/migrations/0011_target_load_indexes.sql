CREATE INDEX "ix_property_objects_held" ON "chessboard"."property_objects" USING btree ("updated_at","id","tenant_id","project_id","building_id","number","status","reserved_until","booked_until","hold_deal_id","hold_booking_id") WHERE status IN ('Reserved', 'Booked');
--> statement-breakpoint
CREATE INDEX "ix_bookings_created_at" ON "crm"."bookings" USING btree ("created_at" DESC NULLS LAST,"id" DESC);
