import { authRouter } from '../auth/router';
import { bookingRouter, dealRouter } from '../crm/router';
import { chessboardRouter } from '../chessboard/router';
import { catalogRouter } from '../catalog/router';
import { holdReleaseRouter, opsRouter } from '../ops/router';
import { profileRouter } from '../profile/router';
import { messengerRouter } from '../messenger/router';
import { notificationsRouter } from '../notifications/router';
import { reportsRouter } from '../reports/router';
import { rewardsRouter } from '../rewards/router';
import { createCallerFactory, mergeRouters, router } from '../trpc/init';
// the job and consumer lists and the contexts' ports
import './registry';

/** DESIGN.md: routers auth, booking, deal, chessboard, catalog, ops, profile. */
export const appRouter = router({
  auth: authRouter,
  booking: bookingRouter,
  deal: dealRouter,
  // the drawer's hold release is ops' repair across crm and chessboard, under the name the console calls
  chessboard: mergeRouters(chessboardRouter, holdReleaseRouter),
  catalog: catalogRouter,
  ops: opsRouter,
  profile: profileRouter,
  messenger: messengerRouter,
  notifications: notificationsRouter,
  reports: reportsRouter,
  rewards: rewardsRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
