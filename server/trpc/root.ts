import { authRouter } from '../auth/router';
import { bookingRouter, dealRouter } from '../crm/router';
import { chessboardRouter } from '../chessboard/router';
import { catalogRouter } from '../catalog/router';
import { opsRouter } from '../ops/router';
import { profileRouter } from '../profile/router';
import { messengerRouter } from '../messenger/router';
import { notificationsRouter } from '../notifications/router';
import { createCallerFactory, router } from './init';

/** DESIGN.md: routers auth, booking, deal, chessboard, catalog, ops, profile. */
export const appRouter = router({
  auth: authRouter,
  booking: bookingRouter,
  deal: dealRouter,
  chessboard: chessboardRouter,
  catalog: catalogRouter,
  ops: opsRouter,
  profile: profileRouter,
  messenger: messengerRouter,
  notifications: notificationsRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
