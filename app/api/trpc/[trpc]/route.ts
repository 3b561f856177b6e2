import { handleTrpcRequest } from '@/server/trpc/http-handler';

// server/main/web-server.ts answers /api/trpc/<procedure> itself (server/trpc/node-http.ts); this route is
// what `next start` / `next dev` and the route tests call — the same handler
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export { handleTrpcRequest as GET, handleTrpcRequest as POST };
