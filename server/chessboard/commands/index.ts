/** The chessboard's write side: commands of (tx, input, ctx) — zod input in each file, the platform's CommandContext — for the router, the seed and imports. */
export { releaseHoldManually, releaseHoldManuallyOutput, statusChangeOutput, type ReleaseHoldManuallyInput } from './release-hold-manually';
export { reholdForCrmBooking, type CrmActiveBooking, type ReholdForCrmBookingInput } from './rehold-for-crm-booking';
export { setPropertyObjectHidden, type SetPropertyObjectHiddenInput } from './set-property-object-hidden';
export { upsertProject, type UpsertProjectInput } from './upsert-project';
export { upsertBuilding, type UpsertBuildingInput } from './upsert-building';
export { upsertPropertyObject, type UpsertPropertyObjectInput } from './upsert-property-object';
export { deletePropertyObject, type DeletePropertyObjectInput } from './delete-property-object';
export { deleteProject, type DeleteProjectInput } from './delete-project';
export { resolveHoldMismatch, type ResolveHoldMismatchInput } from './resolve-hold-mismatch';
export { publishPropertyObjectSnapshot, SNAPSHOT_BATCH_SIZE, type SnapshotOptions, type SnapshotSummary } from './publish-property-object-snapshot';
