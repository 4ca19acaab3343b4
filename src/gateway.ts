import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './api/app.js';
import { ACCOUNT_POLICY, ADDRESS_POLICY, AttemptLimiter } from './api/auth/attempt-limiter.js';
import { JwtIssuer } from './api/auth/jwt.js';
import { SignIn } from './api/auth/sign-in.js';
import type { ApiDeps } from './api/deps.js';
import { AccountCommands } from './commands/accounts.js';
import { CommandHandler } from './commands/command-handler.js';
import { InstanceCommands } from './commands/instances.js';
import { ReadYourWrites } from './commands/read-your-writes.js';
import { openBackends } from './infra/backends.js';
import { systemClock, type Clock } from './infra/clock.js';
import type { Config } from './infra/config/config.js';
import { SecretBox } from './infra/crypto/secret-box.js';
import { loadOrCreateKey } from './infra/crypto/server-keys.js';
import { randomIds, type IdGenerator } from './infra/ids.js';
import { createLogger, type Logger } from './infra/logging/logger.js';
import { AccountQueries } from './projections/accounts/account-queries.js';
import { accountsProjection } from './projections/accounts/accounts-projection.js';
import { InstanceQueries } from './projections/instances/instance-queries.js';
import { instancesProjection } from './projections/instances/instances-projection.js';
import { ProjectionRunner } from './projections/runner.js';
import { ChatQueries } from './projections/chats/chat-queries.js';
import { chatsProjection } from './projections/chats/chats-projection.js';
import { GroupQueries } from './projections/groups/group-queries.js';
import { groupsProjection } from './projections/groups/groups-projection.js';
import { SessionQueries } from './projections/sessions/session-queries.js';
import { sessionsProjection } from './projections/sessions/sessions-projection.js';
import { chatListRoutes } from './api/routes/chats.js';
import { messagingRoutes } from './api/routes/messaging.js';
import { chatActionRoutes } from './api/routes/chat-actions.js';
import { mediaRoutes } from './api/routes/media.js';
import { ChatActionCommands } from './commands/chat-actions.js';
import { GroupInvites } from './commands/group-invites.js';
import { MediaDownloader } from './media/media-downloader.js';
import { MediaSource } from './media/media-source.js';
import type { EventStore } from './infra/eventstore/port.js';
import { sessionRoutes } from './api/routes/session.js';
import { webAppFiles } from './api/routes/web-app.js';
import { webSessionRoutes } from './api/routes/web-session.js';
import { MessagingCommands } from './commands/messaging.js';
import { DocumentAuthStateStore } from './sessions/baileys/document-auth-state-store.js';
import { CancellationReactor } from './sessions/cancellation-reactor.js';
import { chooseNetwork } from './sessions/networks.js';
import { SessionManager } from './sessions/session-manager.js';
import { SessionRecorder } from './sessions/session-recorder.js';
import { createWebhooks, type WebhookTuning } from './webhooks/index.js';

export const VERSION = '1.0.0';

export interface GatewayOptions {
  clock?: Clock;
  ids?: IdGenerator;
  logger?: Logger;
  /** Webhook knobs with production defaults (tests shorten the retention sweep interval). */
  webhooks?: WebhookTuning;
}

export interface Gateway {
  url: string;
  server: Server;
  /** The event store, for in-process tests that read what a session recorded. */
  events: EventStore;
  stop(): Promise<void>;
}

/** Composition root: adapters behind ports, services, projections, HTTP. */
export async function startGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);

  const backends = await openBackends(config);
  const jwtKey = config.JWT_SECRET ? Buffer.from(config.JWT_SECRET, 'utf8') : await loadOrCreateKey(config.DATA_DIR, 'jwt');
  const box = new SecretBox(await loadOrCreateKey(config.DATA_DIR, 'server'));
  const jwt = new JwtIssuer(jwtKey, config.JWT_TTL_SECONDS);

  const instanceQueries = new InstanceQueries(backends.docs);
  const webhooks = createWebhooks({ docs: backends.docs, clock, logger, config, box }, options.webhooks);
  const projections = new ProjectionRunner(
    backends.events,
    backends.docs,
    [accountsProjection, instancesProjection, sessionsProjection, groupsProjection, chatsProjection, ...webhooks.projections],
    logger,
  );
  await projections.start();
  await webhooks.start();

  const handler = new CommandHandler(backends.events, ids, clock);
  const rw = new ReadYourWrites(projections, config.READ_YOUR_WRITES_TIMEOUT_MS);
  const accountQueries = new AccountQueries(backends.docs);
  const deps: ApiDeps = {
    config,
    clock,
    version: VERSION,
    accounts: new AccountCommands(handler, rw, ids, { scryptLogN: config.SCRYPT_LOG_N, signupOpen: config.SIGNUP === 'open' }),
    instances: new InstanceCommands(handler, rw, ids, clock, box, { idPrefix: config.ID_PREFIX, trialDays: config.TRIAL_DAYS }),
    signIn: new SignIn(
      accountQueries,
      jwt,
      { account: new AttemptLimiter(clock, ACCOUNT_POLICY), address: new AttemptLimiter(clock, ADDRESS_POLICY) },
      clock,
      config.SCRYPT_LOG_N,
    ),
    accountQueries,
    instanceQueries,
    health: {
      async ready() {
        const head = await backends.events.headPosition().catch(() => null);
        const docs = await backends.docs.ping().catch(() => false);
        const checks = {
          event_store: head !== null,
          document_store: docs,
          projections: head !== null && projections.hasReached(head),
        };
        return { ready: Object.values(checks).every(Boolean), checks };
      },
    },
  };

  // Sessions wired: the chosen driver behind the port, one manager, the session-side routes.
  const choice = await chooseNetwork(config, { docs: backends.docs, clock, ids, logger });
  await DocumentAuthStateStore.ensureIndexes(backends.docs);
  const sessions = new SessionQueries(backends.docs);
  const recorder = new SessionRecorder(backends.events, ids, clock, choice.network.kind, config.SESSION_RETENTION_DAYS);
  const manager = new SessionManager({
    network: choice.network,
    recorder,
    authState: (instanceId) => new DocumentAuthStateStore(backends.docs, box, instanceId),
    instances: deps.instanceQueries,
    sessions,
    logger: logger.child({ module: 'sessions' }),
    clock,
  });
  const cancellations = new CancellationReactor(backends.events, (id) => manager.stop(id), logger);
  await cancellations.start();
  const chatQueries = new ChatQueries(backends.docs, () => projections.position(chatsProjection.name));
  const mediaSource = new MediaSource({ allowedHost: choice.mediaHosts, allowPrivate: config.ALLOW_PRIVATE_TARGETS });
  const mediaDownloader = new MediaDownloader(mediaSource, config.MEDIA_MAX_BYTES);
  const extraRoutes = [
    ...sessionRoutes({ manager, sessions, rw }),
    ...chatListRoutes({
      groups: new GroupQueries(backends.docs),
      chats: chatQueries,
      sessions,
      accounts: accountQueries,
      invites: new GroupInvites(manager, clock, logger.child({ module: 'group-invites' })),
      clock,
    }),
    ...messagingRoutes(new MessagingCommands(manager, recorder, clock)),
    ...chatActionRoutes(new ChatActionCommands(manager, recorder, chatQueries, rw, clock)),
    ...mediaRoutes(mediaDownloader),
    ...choice.routes,
    ...webhooks.routes,
    ...webSessionRoutes(deps),
  ];

  const app = buildApp({ deps, jwt, logger, extraRoutes, openApiExtras: webhooks.openApiExtras });
  // After the API's routes: only what they leave unanswered reaches the static files.
  app.use(await webAppFiles());
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  logger.info({ port, dataDir: config.DATA_DIR, network: choice.network.kind }, 'gateway listening');
  // Paired sessions come back after the listener is up, so /health answers while they connect.
  await manager.start();

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // Stop accepting, let in-flight requests finish, then flush and close the stores.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
      await closed;
      clearTimeout(timer);
      await cancellations.stop();
      await manager.shutdown();
      await webhooks.stop();
      await Promise.all([mediaSource.close(), mediaDownloader.close()]);
      await projections.stop();
      await backends.close();
      logger.info('gateway stopped');
    })());

  return { url, server, events: backends.events, stop };
}
