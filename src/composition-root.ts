import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './api/app.js';
import { IdempotencyStore, sweepPeriodically } from './api/idempotency/idempotency-store.js';
import { JwtIssuer } from './api/auth/jwt.js';
import { SecretGenerations } from './api/auth/secret-generations.js';
import { SignIn } from './api/auth/sign-in.js';
import { SignInThrottle } from './api/auth/sign-in-throttle.js';
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
import { accessTokensProjection } from './projections/accounts/access-tokens-projection.js';
import { AccessTokenQueries } from './projections/accounts/access-token-queries.js';
import { TokenRegistry } from './api/auth/token-registry.js';
import { AccessTokenCommands } from './commands/access-tokens.js';
import { accountTokenRoutes } from './api/routes/account-tokens.js';
import { SignOut } from './api/auth/sign-out.js';
import { InstanceQueries } from './projections/instances/instance-queries.js';
import { instancesProjection } from './projections/instances/instances-projection.js';
import { ProjectionRunner } from './projections/runner.js';
import { ChatQueries } from './projections/chats/chat-queries.js';
import { chatsProjection } from './projections/chats/chats-projection.js';
import { GroupQueries } from './projections/groups/group-queries.js';
import { groupsProjection } from './projections/groups/groups-projection.js';
import { contactsProjection } from './projections/contacts/contacts-projection.js';
import { SessionQueries } from './projections/sessions/session-queries.js';
import { sessionsProjection } from './projections/sessions/sessions-projection.js';
import { chatListRoutes } from './api/routes/chats.js';
import { messagingRoutes } from './api/routes/messaging.js';
import { chatActionRoutes } from './api/routes/chat-actions.js';
import { mediaRoutes } from './api/routes/media.js';
import { ChatActionCommands } from './commands/chat-actions.js';
import { GroupInvites } from './commands/group-invites.js';
import { MediaDownloader } from './media/media-downloader.js';
import { visionImages } from './bots/vision-image.js';
import { MediaSource } from './media/media-source.js';
import type { EventStore } from './infra/eventstore/port.js';
import type { DocumentStore } from './infra/docstore/port.js';
import { sessionRoutes } from './api/routes/session.js';
import { webAppFiles } from './api/routes/web-app.js';
import { webSessionRoutes } from './api/routes/web-session.js';
import { MessagingCommands } from './commands/messaging.js';
import { DocumentAuthStateStore } from './sessions/baileys/document-auth-state-store.js';
import { CancellationReactor } from './sessions/cancellation-reactor.js';
import { chooseNetwork, type NetworkHooks } from './sessions/networks.js';
import { contactRoutes } from './api/routes/contacts.js';
import { groupRoutes } from './api/routes/groups.js';
import { accountAdminRoutes } from './api/routes/account-admin.js';
import { sandboxFarEndRoutes } from './api/routes/sandbox-far-end.js';
import { GroupCommands } from './commands/groups.js';
import { AccountSettingsCommands } from './commands/account-settings.js';
import { ContactQueries } from './projections/contacts/contact-queries.js';
import { findStoredMessage } from './sessions/baileys/stored-messages.js';
import { messagesProjection } from './projections/messages/messages-projection.js';
import { StoredMessages } from './projections/messages/stored-messages.js';
import { MessageQueries } from './projections/messages/message-queries.js';
import { MessageRetention } from './projections/messages/retention-sweep.js';
import { messageRoutes } from './api/routes/messages.js';
import { MediaRefresh } from './commands/media-refresh.js';
import { SessionManager } from './sessions/session-manager.js';
import { createWebhooks, type WebhookTuning } from './webhooks/index.js';
import { billingRoutes } from './api/routes/billing.js';
import { instanceStateRoutes } from './api/routes/instances.js';
import { checkBillingConfig, createBilling } from './billing/index.js';
import { InstanceStateAt } from './projections/instances/instance-state-at.js';
import { EventSignInRecorder } from './commands/sign-ins.js';
import { historyRoutes } from './api/routes/history.js';
import { HistoryQueries } from './projections/history/history-queries.js';
import { auditProjections } from './projections/audit.js';
import { AliasedDocumentStore } from './infra/docstore/aliased-document-store.js';
import { statsRoutes } from './api/routes/stats.js';
import { StatsQueries } from './projections/stats/stats-queries.js';
import { DeliveryOutcomeRecorder } from './commands/delivery-outcomes.js';
import { helpdeskRoutes } from './api/routes/helpdesk.js';
import { sandboxRoutes } from './api/routes/sandbox.js';
import { webhookDeliveryRoutes } from './api/routes/webhook-deliveries.js';
import { webhookOpenApi } from './api/webhook-openapi.js';
import { Authenticator } from './api/auth/authenticate.js';
import { RealtimeServer, type RealtimeOptions } from './api/realtime/realtime-server.js';
import { realtimeRoutes } from './api/realtime/routes.js';
import { RealtimeHub } from './realtime/hub.js';
import { SendPacer } from './commands/send-pacing/pacer.js';
import { QueuedSends } from './commands/send-pacing/queued-sends.js';
import { sendQueueProjection } from './projections/sends/send-queue-projection.js';
import { scheduledSendsProjection } from './projections/sends/scheduled-sends-projection.js';
import { ScheduledSends } from './commands/sending/scheduled-sends.js';
import { SendCommands } from './commands/sending/send-commands.js';
import { SendGate } from './commands/sending/send-gate.js';
import { Groups as SendGroups } from './commands/sending/recipients.js';
import { sendingRoutes } from './api/routes/sending.js';
import { Ffmpeg } from './media/outgoing/ffmpeg.js';
import { MediaInputs } from './media/outgoing/media-input.js';
import { LinkPreviews } from './media/outgoing/link-preview.js';
import { MediaPreparer } from './media/outgoing/prepare-media.js';
import { Metrics } from './infra/metrics/metrics.js';
import { MeteredEventStore } from './infra/metrics/metered-event-store.js';
import { serveMetrics } from './infra/metrics/metrics-server.js';
import { HelpdeskCommands } from './commands/helpdesk.js';
import { CallbackPaths } from './helpdesk/callback-paths.js';
import { ChatwootClient } from './helpdesk/chatwoot-client.js';
import { helpdeskProjection } from './projections/helpdesk/helpdesk-projection.js';
import { HelpdeskQueries } from './projections/helpdesk/helpdesk-queries.js';
import { BridgeOutbox } from './helpdesk/bridge/outbox.js';
import { HelpdeskBridge } from './helpdesk/bridge/bridge.js';
import { ToHelpdesk } from './helpdesk/bridge/to-helpdesk.js';
import { ImportHistory } from './helpdesk/bridge/import-history.js';
import { ToWhatsApp } from './helpdesk/bridge/to-whatsapp.js';
import { mediaFetcher, sessionSender } from './helpdesk/bridge/session-side.js';
import { HelpdeskCallbacks } from './commands/helpdesk-callbacks.js';
import { helpdeskCallbackRoutes } from './api/routes/helpdesk-callback.js';
import { serveRebuilds } from './rebuild/control-server.js';
import { Leases } from './cluster/leases.js';
import { newNodeId } from './cluster/node-id.js';
import { ExpiringDocClaims, singleNodeClaims } from './infra/doc-claims.js';
import { nodeAddress } from './cluster/node-address.js';
import { ForwardToOwner } from './api/middleware/forward-to-owner.js';
import { LeasedProjections } from './cluster/leased-projections.js';
import { SessionOwnership } from './sessions/ownership/session-ownership.js';
import { Placement } from './cluster/placement.js';
import { FencedSessionRecorder } from './sessions/ownership/fenced-recorder.js';
import { checkExportConfig, createExport, type ExportTuning } from './export/index.js';
import { ExportCommands } from './commands/export.js';
import { exportRoutes } from './api/routes/export.js';
import { botsProjection } from './projections/bots/bots-projection.js';
import { botSessionsProjection } from './projections/bots/bot-sessions-projection.js';
import { BotQueries } from './projections/bots/bot-queries.js';
import { BotCommands } from './commands/bots.js';
import { botRoutes } from './api/routes/bots.js';
import { BotOutbox } from './bots/outbox.js';
import { BotRunner } from './bots/runner.js';
import { BotHttp } from './bots/bot-http.js';
import { TypebotClient } from './bots/typebot-client.js';
import { OpenAiClient } from './bots/openai-client.js';
import { answerContent } from './bots/answer-content.js';

const VERSION = '1.0.0';

export interface GatewayOptions {
  clock?: Clock;
  /** What the request rate limits measure time with (default `performance.now`: never stepped, unlike the clock). */
  monotonicMs?: () => number;
  ids?: IdGenerator;
  logger?: Logger;
  /** Webhook knobs with production defaults (tests shorten the retention sweep interval). */
  webhooks?: WebhookTuning;
  /** Event export knobs with production defaults. */
  exports?: ExportTuning;
  /** Realtime stream knobs (tests shorten the ack timeout and the window). */
  realtime?: Pick<RealtimeOptions, 'ackTimeoutMs' | 'limits'>;
  /** What tests change of the real network's driver (a scripted WhatsApp server, no internet). */
  network?: NetworkHooks;
}

export interface Gateway {
  url: string;
  server: Server;
  /** The event store, for in-process tests that read what a session recorded. */
  events: EventStore;
  /** The document store, for in-process tests that read a read model directly. */
  docs: DocumentStore;
  /** For tests: the realtime streams' socket buffers. */
  realtime: Pick<RealtimeServer, 'stats'>;
  /** Where /metrics is served when METRICS_PORT is set (tests pass 0). */
  metricsUrl: string | null;
  stop(): Promise<void>;
}

/** Composition root: adapters behind ports, services, projections, HTTP. */
export async function startGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const logger = options.logger ?? createLogger(config.LOG_LEVEL);

  checkBillingConfig(config);
  checkExportConfig(config);
  const metrics = new Metrics();
  // Looked for while the stores open: its child process took a second of a busy start when awaited in line.
  const ffmpegFound = Ffmpeg.find();
  const opened = await openBackends(config);
  // Read models by logical name: a rebuild swaps in fresh collections under the same names. Every
  // append is timed: the store behind the port does not know it is measured.
  const backends = { ...opened, docs: await AliasedDocumentStore.open(opened.docs), events: new MeteredEventStore(opened.events, metrics) };
  const jwtKey = config.JWT_SECRET ? Buffer.from(config.JWT_SECRET, 'utf8') : await loadOrCreateKey(config.DATA_DIR, 'jwt');
  const serverKey = await loadOrCreateKey(config.DATA_DIR, 'server');
  const box = new SecretBox(serverKey);
  const accountQueries = new AccountQueries(backends.docs);
  const generations = new SecretGenerations(accountQueries);
  const jwt = new JwtIssuer(jwtKey, config.JWT_TTL_SECONDS, generations);
  const accessTokens = new AccessTokenQueries(backends.docs);
  const tokenRegistry = new TokenRegistry(accessTokens, (err) => logger.warn({ err }, 'access token use not recorded'));

  const instanceQueries = new InstanceQueries(backends.docs);
  // The bridge worker and the send queue exist only once sessions do; their outboxes poke them from the first commit on.
  let pokeBridge = () => undefined as void;
  const bridgeOutbox = new BridgeOutbox(() => pokeBridge());
  let pokeBots = () => undefined as void;
  const botOutbox = new BotOutbox(() => pokeBots(), logger.child({ module: 'bots' }));
  let pokeSends = () => undefined as void;
  const sendQueue = sendQueueProjection(() => pokeSends());
  let pokeScheduled = () => undefined as void;
  const scheduledSendsModel = scheduledSendsProjection(() => pokeScheduled());
  const outcomes = new DeliveryOutcomeRecorder(backends.events, ids, clock, logger);
  // Many nodes share the backends only when both are shared: then sessions and projections go by
  // lease (issue 15). Leases keep real time whatever clock the gateway is given.
  const leases = config.EVENTSTORE_URL !== undefined && config.MONGODB_URL !== undefined ? new Leases(backends.docs, newNodeId(), systemClock) : null;
  // Background work (webhook lanes and retries, helpdesk jobs, queued sends) is claimed then, on real time too.
  // Sessions and lanes spread over the live nodes (issue 34): each node's membership, and the placement all compute alike.
  const placement = leases
    ? new Placement({ docs: backends.docs, nodeId: leases.nodeId, clock: systemClock, ttlMs: config.LEASE_TTL_MS, logger: logger.child({ module: 'cluster' }), address: () => leases.advertised() })
    : null;
  const workClaims =
    leases && placement
      ? { leases, claims: new ExpiringDocClaims(backends.docs, leases.nodeId, systemClock, config.LEASE_TTL_MS), ttlMs: config.LEASE_TTL_MS, clock: systemClock, placement }
      : undefined;
  const webhooks = createWebhooks(
    { docs: backends.docs, clock, logger, config, box, work: metrics.work, onSettled: (d) => (outcomes.settled(d), metrics.webhookSettled(d)), ...(workClaims ? { cluster: workClaims } : {}) },
    options.webhooks,
  );
  // Event export to the brokers: its lanes are claimed like the webhook lanes when several nodes share the stores.
  const eventExport = createExport(
    { docs: backends.docs, clock, logger, config, box, registry: metrics.registry, ...(workClaims ? { cluster: { leases: workClaims.leases, ttlMs: workClaims.ttlMs, clock: workClaims.clock, placement: workClaims.placement } } : {}) },
    options.exports,
  );
  const billing = createBilling({ config, docs: backends.docs, clock, logger });
  const projectionList = [
    generations.watching(accountsProjection),
    tokenRegistry.watching(accessTokensProjection),
    instancesProjection,
    sessionsProjection,
    groupsProjection,
    contactsProjection,
    chatsProjection,
    billing.dueTimes,
    helpdeskProjection,
    bridgeOutbox,
    sendQueue,
    messagesProjection,
    scheduledSendsModel,
    botsProjection,
    botSessionsProjection,
    botOutbox,
    ...webhooks.projections,
    ...eventExport.projections,
    ...auditProjections(),
  ];
  const runnerFor = (mode: 'writing' | 'dry') =>
    new ProjectionRunner(
      backends.events,
      backends.docs,
      // A dry runner folds only for the commit hooks: projections without one are left out.
      mode === 'dry' ? projectionList.filter((p) => p.committed !== undefined) : projectionList,
      logger,
      // MongoDB's batches are not atomic: projection writes must then be safe to apply twice.
      { idempotentWrites: config.MONGODB_URL !== undefined, meter: metrics.work, ...(leases ? { sharedProgress: true, dryRun: mode === 'dry' } : {}) },
    );
  const projections = leases
    ? new LeasedProjections({ leases, docs: backends.docs, ttlMs: config.LEASE_TTL_MS, names: projectionList.map((p) => p.name), runner: runnerFor, logger: logger.child({ module: 'cluster' }) })
    : runnerFor('writing');
  // Joined before any lane or session is taken: the placement knows the other nodes from the start.
  let sessionsHeld = (): number => 0;
  await placement?.start(() => ({ sessions: sessionsHeld(), lanes: webhooks.dispatcher.lanesHeld }));
  await projections.start();
  await webhooks.start();
  // Message contents past SESSION_RETENTION_DAYS leave the conversations read model as they leave the log.
  const messageRetention = new MessageRetention({ docs: backends.docs, clock, logger: logger.child({ module: 'messages' }), retentionDays: config.SESSION_RETENTION_DAYS, intervalMs: 5 * 60_000, batch: 500 });
  messageRetention.start();
  await eventExport.start();
  // `npm run rebuild` while serving: asked over a socket in DATA_DIR that only its owner can open.
  const rebuilds = await serveRebuilds({
    dataDir: config.DATA_DIR,
    events: backends.events,
    docs: backends.docs,
    live: projections,
    logger: logger.child({ module: 'rebuild' }),
    ...(backends.embedded ? { embedded: backends.embedded } : {}),
  });

  const handler = new CommandHandler(backends.events, ids, clock, logger);
  const rw = new ReadYourWrites(projections, config.READ_YOUR_WRITES_TIMEOUT_MS);
  const tokenCommands = new AccessTokenCommands(handler, rw, accessTokens, clock);
  let describeNetwork: () => Record<string, string> = () => ({});
  const deps: ApiDeps = {
    config,
    clock,
    version: VERSION,
    accounts: new AccountCommands(handler, rw, ids, { scryptLogN: config.SCRYPT_LOG_N, signupOpen: config.SIGNUP === 'open' }),
    instances: new InstanceCommands(handler, rw, ids, clock, box, { idPrefix: config.ID_PREFIX, trialDays: config.TRIAL_DAYS, billing: billing.settings }),
    signIn: new SignIn(
      accountQueries,
      jwt,
      new SignInThrottle(clock),
      clock,
      config.SCRYPT_LOG_N,
      new EventSignInRecorder(backends.events, ids, clock, rw),
      ids,
    ),
    signOut: new SignOut(jwt, tokenCommands, clock),
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
        // What the network driver says of itself informs; it does not make the node unready.
        return { ready: Object.values(checks).every(Boolean), checks: { ...checks, ...describeNetwork() } };
      },
    },
  };

  // Sessions wired: the chosen driver behind the port, one manager, the session-side routes.
  const choice = await chooseNetwork(config, { docs: backends.docs, clock, ids, logger, ...(options.network ? { hooks: options.network } : {}) });
  if (choice.describe) describeNetwork = choice.describe;
  await DocumentAuthStateStore.ensureIndexes(backends.docs);
  const sessions = new SessionQueries(backends.docs);
  const recorder = new FencedSessionRecorder(backends.events, ids, clock, choice.network.kind, config.SESSION_RETENTION_DAYS);
  const ownership = leases
    ? new SessionOwnership({ leases, sessions, instances: instanceQueries, logger: logger.child({ module: 'cluster' }), ttlMs: config.LEASE_TTL_MS, ...(placement ? { placement } : {}) })
    : null;
  if (ownership) recorder.guardWith(ownership, logger.child({ module: 'cluster' }));
  if (ownership) sessionsHeld = () => ownership.owned().length;
  const storedMessages = new StoredMessages(backends.docs, backends.events);
  const manager = new SessionManager({
    network: choice.network,
    recorder,
    authState: (instanceId) => new DocumentAuthStateStore(backends.docs, box, instanceId),
    instances: deps.instanceQueries,
    sessions,
    logger: logger.child({ module: 'sessions' }),
    clock,
    receiveStatus: config.RECEIVE_STATUS,
    storedMessage: (instanceId, messageId, chat) => storedMessages.find(instanceId, messageId, chat),
    ...(ownership ? { handover: ownership } : {}),
  });
  const cancellations = new CancellationReactor(
    backends.events,
    (id) => manager.stop(id),
    logger,
    async (id, position) => {
      // The manager reads the billing status from the read model: let it see the subscription first.
      await projections.waitFor(position, [instancesProjection.name], config.READ_YOUR_WRITES_TIMEOUT_MS);
      const [instance, session] = await Promise.all([instanceQueries.byId(id), sessions.status(id)]);
      // Only a paired session that is down: a pairing under way is left alone.
      if (instance && session?.paired === true && !manager.isConnected(id)) await manager.restart(id, instance.account_id);
    },
  );
  await cancellations.start();
  billing.startTimer((id) => deps.instances.reachDueTime(id));
  const chatQueries = new ChatQueries(backends.docs, () => projections.readVersion(chatsProjection.name));
  const mediaSource = new MediaSource({
    allowedHost: choice.mediaHosts,
    allowPrivate: config.ALLOW_PRIVATE_TARGETS,
    ownHost: choice.mediaHostIsOwn,
    ...(choice.mediaHeaders ? { headers: choice.mediaHeaders } : {}),
  });
  const mediaDownloader = new MediaDownloader(mediaSource, config.MEDIA_MAX_BYTES);
  // The network bans numbers that send in bursts: the real one is paced by default, the sandbox not.
  const pacer = new SendPacer(
    { perMinute: config.SEND_RATE_PER_MIN ?? (choice.network.kind === 'baileys' ? 20 : null), jitterMs: config.SEND_JITTER_MS },
    () => clock.now().getTime(),
  );
  const sendGate = new SendGate();
  const queuedSends = new QueuedSends({
    docs: backends.docs,
    events: backends.events,
    recorder,
    liveConnection: (id) => manager.liveConnection(id),
    pacer,
    clock,
    logger: logger.child({ module: 'sends' }),
    claims: workClaims?.claims ?? singleNodeClaims,
    gate: sendGate,
  });
  pokeSends = () => queuedSends.poke();
  const scheduledSends = new ScheduledSends({
    docs: backends.docs,
    events: backends.events,
    recorder,
    liveConnection: (id) => manager.liveConnection(id),
    ...(pacer.paced ? { pacer } : {}),
    onQueued: () => queuedSends.poke(),
    gate: sendGate,
    clock,
    logger: logger.child({ module: 'sends' }),
    claims: workClaims?.claims ?? singleNodeClaims,
  });
  pokeScheduled = () => scheduledSends.poke();
  // Voice notes need ffmpeg; without it the gateway runs, and says so, and refuses what needs converting.
  const ffmpeg = await ffmpegFound;
  if (!ffmpeg.available) logger.warn('ffmpeg not found: voice notes that are not OGG/Opus will be refused with 400 (install ffmpeg to convert them)');
  const mediaInputs = new MediaInputs({ maxBytes: config.MEDIA_MAX_BYTES, allowPrivate: config.ALLOW_PRIVATE_TARGETS });
  const findMessage = (instanceId: string, messageId: string) => storedMessages.find(instanceId, messageId);
  const mediaPreparer = new MediaPreparer(mediaInputs, ffmpeg);
  const linkPreviews = new LinkPreviews({ allowPrivate: config.ALLOW_PRIVATE_TARGETS });
  const sendCommands = new SendCommands({
    manager,
    recorder,
    clock,
    ids,
    docs: backends.docs,
    media: mediaPreparer,
    groups: new SendGroups(backends.docs),
    gate: sendGate,
    findMessage,
    ...(pacer.paced ? { pacer } : {}),
    onScheduled: () => scheduledSends.poke(),
    previews: linkPreviews,
    readYourWrites: rw,
  });
  // Before the listener: a send arriving at boot queues behind those queued before the restart.
  await queuedSends.start();
  scheduledSends.start();
  const helpdeskClient = new ChatwootClient({ allowPrivate: config.ALLOW_PRIVATE_TARGETS });
  const helpdeskCommands = new HelpdeskCommands(handler, rw, ids, box, new CallbackPaths(serverKey), helpdeskClient, { publicUrl: config.PUBLIC_URL });
  const helpdeskQueries = new HelpdeskQueries(backends.docs);
  const toHelpdesk = new ToHelpdesk(helpdeskClient, backends.docs, mediaFetcher(mediaDownloader));
  const bridge = new HelpdeskBridge({
    docs: backends.docs,
    configs: helpdeskQueries,
    client: helpdeskClient,
    toHelpdesk,
    importHistory: new ImportHistory(backends.events, backends.docs, toHelpdesk, clock),
    toWhatsApp: new ToWhatsApp(sessionSender(manager, recorder, instanceQueries, mediaPreparer), backends.docs, backends.events, helpdeskClient),
    openToken: (instanceId, sealed) => helpdeskCommands.openToken(instanceId, sealed),
    clock,
    logger: logger.child({ module: 'helpdesk' }),
    claims: workClaims?.claims ?? singleNodeClaims,
  });
  pokeBridge = () => bridge.poke();
  const callbacks = new HelpdeskCallbacks(backends.events, helpdeskQueries, (id, sealed) => helpdeskCommands.openInboxSecret(id, sealed), clock);
  const groupQueries = new GroupQueries(backends.docs);
  const botQueries = new BotQueries(backends.docs);
  const botCommands = new BotCommands(handler, rw, box, clock);
  const botHttp = new BotHttp({ allowPrivate: config.ALLOW_PRIVATE_TARGETS });
  const botRunner = new BotRunner({
    docs: backends.docs,
    events: backends.events,
    handler,
    queries: botQueries,
    sessions: recorder,
    pacer,
    clients: { typebot: new TypebotClient(botHttp), openai: new OpenAiClient(botHttp) },
    openApiKey: (instanceId, botId, sealed) => botCommands.openApiKey(instanceId, botId, sealed),
    content: answerContent(manager, mediaPreparer, logger.child({ module: 'bots' })),
    image: visionImages(mediaDownloader, logger.child({ module: 'bots' })),
    ids,
    clock,
    logger: logger.child({ module: 'bots' }),
    claims: workClaims?.claims ?? singleNodeClaims,
  });
  pokeBots = () => botRunner.poke();
  const groupInvites = new GroupInvites(manager, clock, logger.child({ module: 'group-invites' }));
  const contactQueries = new ContactQueries(backends.docs);
  const extraRoutes = [
    ...helpdeskRoutes({ commands: helpdeskCommands, queries: helpdeskQueries, imports: bridge, allowPrivate: config.ALLOW_PRIVATE_TARGETS }),
    ...helpdeskCallbackRoutes(callbacks),
    ...realtimeRoutes(),
    ...sessionRoutes({ manager, sessions, rw }),
    ...chatListRoutes({ groups: groupQueries, chats: chatQueries, sessions, accounts: accountQueries, invites: groupInvites, clock }),
    ...messagingRoutes(new MessagingCommands(manager, recorder, clock, { pacer, ids }, rw), sendCommands),
    ...sendingRoutes(sendCommands, { mediaMaxBytes: config.MEDIA_MAX_BYTES }),
    ...messageRoutes(new MessageQueries(backends.docs)),
    ...contactRoutes(manager),
    // After group/list and contacts/check, which their /{jid} routes would otherwise take.
    ...groupRoutes({ commands: new GroupCommands(manager, groupQueries, groupInvites, rw), groups: groupQueries, sessions, invites: groupInvites }),
    ...accountAdminRoutes({ commands: new AccountSettingsCommands(manager, contactQueries, rw), contacts: contactQueries, sessions, manager }),
    ...chatActionRoutes(new ChatActionCommands(manager, recorder, chatQueries, rw, clock)),
    ...mediaRoutes(mediaDownloader, new MediaRefresh(manager, findStoredMessage(backends.events)), findMessage),
    ...(choice.sandbox ? sandboxRoutes(choice.sandbox) : []),
    ...(choice.sandbox ? sandboxFarEndRoutes(choice.sandbox) : []),
    ...webhookDeliveryRoutes(webhooks.log),
    ...botRoutes({ commands: botCommands, queries: botQueries, allowPrivate: config.ALLOW_PRIVATE_TARGETS }),
    ...exportRoutes({ commands: new ExportCommands(handler, rw, eventExport.readModel), queries: eventExport.queries, enabled: eventExport.enabled }),
    ...billingRoutes({
      provider: billing.settings.provider,
      stripeWebhook: billing.stripeWebhook((id, report) => deps.instances.recordProviderReport(id, report)),
    }),
    ...instanceStateRoutes(new InstanceStateAt(backends.events, logger), config.PUBLIC_URL),
    ...historyRoutes(new HistoryQueries(backends.docs, backends.events)),
    ...statsRoutes(new StatsQueries(backends.docs), clock),
    ...webSessionRoutes(deps),
    ...accountTokenRoutes({ accounts: accountQueries, tokens: accessTokens, commands: tokenCommands, clock }),
  ];

  // Many nodes: a request needing a session another node owns goes there (embedded mode: none).
  const toOwner =
    ownership && leases
      ? new ForwardToOwner({
          owners: ownership,
          nodeId: leases.nodeId,
          logger: logger.child({ module: 'cluster' }),
          // The owner's lease lapses within the ttl and the next scan opens the session elsewhere.
          retryAfterSeconds: Math.max(1, Math.ceil(config.LEASE_TTL_MS / 4000)),
        })
      : null;
  const idempotency = new IdempotencyStore(backends.docs, box, clock);
  await idempotency.setup();
  const stopSweeping = sweepPeriodically(idempotency, 3600_000, (err) => logger.warn({ err }, 'expired idempotency keys not swept'));
  const app = buildApp({
    deps,
    jwt,
    tokens: tokenRegistry,
    logger,
    extraRoutes,
    openApiExtras: webhookOpenApi(),
    idempotency,
    ...(options.monotonicMs ? { monotonicMs: options.monotonicMs } : {}),
    ...(toOwner ? { toOwner: toOwner.middleware } : {}),
    metrics: { metrics, endpoint: { ...(config.METRICS_TOKEN ? { token: config.METRICS_TOKEN } : {}), elsewhere: config.METRICS_PORT !== undefined } },
  });
  // After the API's routes: only what they leave unanswered reaches the static files.
  app.use(await webAppFiles());
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  const hub = new RealtimeHub(backends.events, logger.child({ module: 'realtime' }), metrics.work.stage('realtime_hub'));
  await hub.start();
  const realtime = new RealtimeServer({
    authenticator: new Authenticator(jwt, accountQueries, instanceQueries, clock, tokenRegistry),
    hub,
    store: backends.events,
    logger: logger.child({ module: 'realtime' }),
    maxPerAccount: config.REALTIME_MAX_STREAMS_PER_ACCOUNT,
    publicUrl: config.PUBLIC_URL,
    ...options.realtime,
  });
  realtime.attach(server);
  metrics.observe({
    sessions: () => manager.states(),
    projectionLag: async () => {
      const head = await backends.events.headPosition();
      return Object.fromEntries(projectionList.map((p) => [p.name, Number(head > projections.position(p.name) ? head - projections.position(p.name) : 0n)]));
    },
    queues: async () => ({ helpdesk_jobs: await bridge.pending(), webhook_in_flight: webhooks.dispatcher.busy, bot_jobs: await botRunner.pending() }),
    realtimeStreams: () => realtime.stats().streams,
    ...(placement
      ? {
          cluster: async () => ({
            nodes: (await placement.nodes()).map((n) => ({ node_id: n._id, node_url: n.address, since: n.since, sessions: n.sessions, lanes: n.lanes })),
          }),
        }
      : {}),
  });
  const metricsServer = config.METRICS_PORT === undefined ? null : await serveMetrics(metrics, config.METRICS_PORT, config.HOST);
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      // Stop accepting, let in-flight requests finish, then flush and close the stores.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
      await realtime.close();
      if (metricsServer) await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
      await closed;
      clearTimeout(timer);
      await toOwner?.close();
      await hub.stop();
      stopSweeping();
      await billing.stop();
      await cancellations.stop();
      await bridge.stop();
      await botRunner.stop();
      await queuedSends.stop();
      await scheduledSends.stop();
      // Leaves first: the other nodes place this node's sessions and lanes on themselves and take them as they are released.
      await placement?.stop();
      ownership?.closeForShutdown();
      await manager.shutdown();
      await ownership?.stop();
      await webhooks.stop();
      await messageRetention.stop();
      await eventExport.stop();
      await outcomes.flush();
      await rebuilds.close();
      await Promise.all([mediaSource.close(), mediaDownloader.close(), helpdeskClient.close(), mediaInputs.close(), botHttp.close(), linkPreviews.close()]);
      await projections.stop();
      await backends.close();
      logger.info('gateway stopped');
    })());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => resolve());
  }).catch(async (error: unknown) => {
    // A port already taken must not leave the stores open and the data directory locked.
    await stop().catch(() => undefined);
    throw error;
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  // Before any session lease is taken (manager and ownership start below): each carries the address.
  leases?.advertise(nodeAddress(config.NODE_URL, config.HOST, port));
  logger.info({ port, dataDir: config.DATA_DIR, network: choice.network.kind }, 'gateway listening');
  // Paired sessions come back after the listener is up, so /health answers while they connect.
  // With many nodes the ownership's scans open those placed here (the manager would take every free one).
  if (!ownership) await manager.start();
  ownership?.start(manager);
  bridge.start();
  botRunner.start();

  const metricsUrl = metricsServer ? `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics` : null;
  return { url, server, events: backends.events, docs: backends.docs, realtime, metricsUrl, stop };
}
