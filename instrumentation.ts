/**
 * Next.js start-up hook of the web process: starts OpenTelemetry tracing when OTEL_TRACES_EXPORTER is
 * not `none` (server/platform/tracing.ts). The Node-only code sits behind the NEXT_RUNTIME check so
 * that the edge build never includes it.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    const { startWebTracing } = await import('./server/platform/tracing');
    await startWebTracing();
  }
}
