/**
 * Next.js start-up hook of the web process: checks that every Kafka topic exists (a missing one ends
 * the process with one line naming it and `npm run kafka:topics`; an unreachable broker is a warning), then starts OpenTelemetry tracing
 * when OTEL_TRACES_EXPORTER is not `none` (server/platform/tracing.ts). The Node-only code sits behind
 * the NEXT_RUNTIME check so that the edge build never includes it; `next build` checks nothing.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    if (process.env.NEXT_PHASE !== 'phase-production-build') {
      const { loadEnv } = await import('./server/main/env');
      const { exitUnlessTopicsExist } = await import('./server/platform/kafka/startup-check');
      // the web does not need the broker to answer commands (they write the outbox), so an unreachable
      // broker is only a warning here; a broker that answers without our topics is a deployment mistake
      await exitUnlessTopicsExist(loadEnv()).catch((e: unknown) =>
        console.warn(`web: Kafka topic check skipped, broker not reachable (${e instanceof Error ? e.message : String(e)})`));
    }
    const { startWebTracing } = await import('./server/platform/tracing');
    await startWebTracing();
  }
}
