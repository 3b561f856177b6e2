import { userNames } from '../auth/sign-in';
import { objectLabels } from '../chessboard/queries';
import { dealTitles } from '../crm/queries';
import { roleProcedure, router } from '../trpc/init';
import { myAccruals, myAccrualsInput, totalsByAgent } from './queries';

/**
 * rewards router: the agent's own accruals ("Вознаграждения"), with the flat (chessboard's label) and
 * the deal (crm's title), each read by its owner in the agent's scope; the developer manager's totals
 * per agent (names from auth, in the manager's tenant).
 */
export const rewardsRouter = router({
  mine: roleProcedure('agent').input(myAccrualsInput).query(async ({ ctx, input }) => {
    const { db } = ctx.database;
    const list = await myAccruals(db, ctx.actor, input);
    const [labels, titles] = await Promise.all([
      objectLabels(db, ctx.actor, [...new Set(list.items.map((i) => i.propertyObjectId))]),
      dealTitles(db, ctx.actor, [...new Set(list.items.map((i) => i.dealId))]),
    ]);
    const label = new Map(labels.map((l) => [l.id, l]));
    return {
      ...list,
      items: list.items.map((i) => {
        const l = label.get(i.propertyObjectId);
        return { ...i, dealTitle: titles[i.dealId] ?? null, object: l ? { number: l.number, projectName: l.projectName, buildingName: l.buildingName } : null };
      }),
    };
  }),
  totals: roleProcedure('developer_manager', 'pin_manager').query(async ({ ctx }) => {
    const rows = await totalsByAgent(ctx.database.db, ctx.actor);
    const names = await userNames(ctx.database.db, ctx.actor, rows.flatMap((r) => (r.agentId ? [r.agentId] : [])));
    return rows.map((r) => ({ ...r, agentName: r.agentId ? names[r.agentId] ?? null : null }));
  }),
});
