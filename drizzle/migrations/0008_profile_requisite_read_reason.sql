ALTER TABLE "profile"."requisite_reads" ADD COLUMN "reason" text;--> statement-breakpoint
CREATE INDEX "ix_requisite_reads_actor" ON "profile"."requisite_reads" USING btree ("actor_id","id");--> statement-breakpoint
CREATE INDEX "ix_requisite_reads_tenant" ON "profile"."requisite_reads" USING btree ("tenant_id","id");
