/**
 * Every module that declares Prometheus metrics, imported for their side effect (registration in the
 * process registry). A metric exists in a scrape only once its module is loaded; the web app imports
 * this from getServices() (web-services.ts) so that /api/metrics lists every name from the first scrape, not only those
 * of the routes that happened to run. observability.test.ts fails when a module that declares a
 * metric is missing here.
 */
import '../crm/metrics';
import '../chessboard/metrics';
import '../messenger/metrics';
import '../catalog/retention-metrics';
import '../notifications/metrics';
import '../rewards/metrics';
import '../ops/reconciliation';
import '../auth/sign-in';
import '../chessboard/live-feed';
import '../trpc/http-metrics';
import '../platform/jobs/run-log';
import '../platform/jobs/scheduler';
import '../platform/kafka/consumer-runner';
import '../platform/kafka/lag';
import '../platform/outbox/relay';
