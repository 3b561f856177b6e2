import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { AppError } from '../platform/errors';
import { authedProcedure, publicProcedure, router } from '../trpc/init';
import { clearSessionCookie, deleteSession, sessionCookie } from './session';
import { loadUserProfile, signIn, userNames } from './sign-in';

const signInInput = z.object({
  email: z.string().trim().min(3).max(254),
  password: z.string().min(1).max(200),
});

/** Sign-in, sign-out and the current user. Sessions live in auth.sessions; the cookie holds only a random token. */
export const authRouter = router({
  /**
   * Never in a batch: one HTTP request is one sign-in attempt (the client sends it over a link of its
   * own), so a request cannot carry a pile of guesses past the per-request checks in front of the API.
   */
  signIn: publicProcedure.input(signInInput).mutation(async ({ ctx, input }) => {
    if (ctx.batched) throw new AppError('AUTH_SIGN_IN_BATCHED', 'BAD_REQUEST', 'Sign in with a request of its own, not in a batch');
    const { user, token, expiresAt } = await signIn(ctx.database.db, {
      email: input.email,
      password: input.password,
      ip: ctx.ip,
      ttlHours: ctx.env.SESSION_TTL_HOURS,
    });
    ctx.setCookie?.(sessionCookie(token, expiresAt, ctx.env.NODE_ENV === 'production'));
    ctx.logger.info({ event: 'auth.signed_in', userId: user.id, role: user.role }, 'signed in');
    return { user, expiresAt };
  }),

  /** Always succeeds: deletes the caller's session (if any) and clears the cookie. */
  signOut: publicProcedure.mutation(async ({ ctx }) => {
    if (ctx.sessionId) await deleteSession(ctx.database.db, ctx.sessionId);
    ctx.setCookie?.(clearSessionCookie(ctx.env.NODE_ENV === 'production'));
    return { ok: true as const };
  }),

  /** Display names of users the caller can see (holders of bookings, actors of history rows). */
  userNames: authedProcedure
    .input(z.object({ ids: z.array(z.uuid()).max(200) }))
    .query(({ ctx, input }) => userNames(ctx.database.db, ctx.actor, input.ids)),

  me: authedProcedure.query(async ({ ctx }) => {
    const user = await loadUserProfile(ctx.database.db, ctx.actor.userId);
    if (!user) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in first' });
    return user;
  }),
});
