import { z } from 'zod';
import { authEnvShape } from '../auth/env';
import { catalogEnvShape } from '../catalog/env';
import { chessboardEnvShape } from '../chessboard/env';
import { crmEnvShape } from '../crm/env';
import { notificationsEnvShape } from '../notifications/env';
import { EnvError, parseEnvWith, platformEnvShape } from '../platform/env';
import { profileEnvProblem, profileEnvShape } from '../profile/env';

/**
 * The environment of web, worker and scripts: platform's settings and every context's slice
 * (server/<context>/env.ts), one schema. A context without settings has no slice.
 */
export const CONTEXT_ENV_SHAPES = {
  auth: authEnvShape,
  catalog: catalogEnvShape,
  chessboard: chessboardEnvShape,
  crm: crmEnvShape,
  notifications: notificationsEnvShape,
  profile: profileEnvShape,
} as const;

export const envSchema = z.object({
  ...platformEnvShape,
  ...authEnvShape,
  ...catalogEnvShape,
  ...chessboardEnvShape,
  ...crmEnvShape,
  ...notificationsEnvShape,
  ...profileEnvShape,
});

export type Env = z.infer<typeof envSchema>;

/** Checks across settings that no single field's schema can make; each names its variable first. */
const ENV_PROBLEMS: readonly ((env: Env) => string | null)[] = [profileEnvProblem];

/** Parses the environment; throws EnvError whose message is one line per bad variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const env = parseEnvWith(envSchema, source);
  const problems = ENV_PROBLEMS.map((problem) => problem(env)).filter((p): p is string => p !== null);
  if (problems.length) throw new EnvError(problems.map((p) => `invalid configuration: ${p}`).join('\n'));
  return env;
}

let cached: Env | undefined;

/** For processes: a bad environment prints the variable and exits 1. */
export function loadEnv(): Env {
  if (cached) return cached;
  try {
    cached = parseEnv();
    return cached;
  } catch (e) {
    if (e instanceof EnvError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
}

export function resetEnvCache(): void {
  cached = undefined;
}
