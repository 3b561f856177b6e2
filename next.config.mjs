import createNextIntlPlugin from 'next-intl/plugin';
import { STATIC_SECURITY_HEADERS } from './server/platform/security-headers.mjs';

const withNextIntl = createNextIntlPlugin('./app/i18n/request.ts');

/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // server-only packages with native or Node-specific code stay external to the bundle
  serverExternalPackages: [
    'postgres', 'kafkajs', 'pino', 'prom-client', '@node-rs/argon2',
    // the OpenTelemetry SDK is loaded at start-up by instrumentation.ts only when tracing is on
    '@opentelemetry/sdk-node', '@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/resources',
  ],
  typedRoutes: false,
  // NEXT_BROWSER_SOURCE_MAPS=1 (bench profiling only): the browser chunks get .map files, so
  // bench/cpuprofile-summary.ts can name the sources of a Chromium profile (BENCH_BROWSER_CPU_PROF)
  productionBrowserSourceMaps: process.env.NEXT_BROWSER_SOURCE_MAPS === '1',
  // `next dev` serves its client bundles to these hosts too (Playwright uses 127.0.0.1)
  allowedDevOrigins: ['127.0.0.1', 'localhost'],
  async headers() {
    return [
      {
        source: '/:path*',
        // Content-Security-Policy: per request, with a nonce (proxy.ts)
        headers: STATIC_SECURITY_HEADERS.map(([key, value]) => ({ key, value })),
      },
    ];
  },
};

export default withNextIntl(nextConfig);
