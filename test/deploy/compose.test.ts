import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { load, YAML11_SCHEMA } from 'js-yaml';

/**
 * Docker cannot run on the build machines, so the two-node deployment is checked as far as it can
 * be without it: the compose file's wiring, the proxy configuration against it, and (where nginx
 * is installed) nginx's own syntax check of that configuration.
 */

const ROOT = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface Healthcheck {
  test: string[] | string;
}
interface Service {
  image?: string;
  hostname?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: Healthcheck;
}
interface Compose {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

// YAML 1.1, as Compose reads it: the nodes share their settings through merge keys (`<<`).
const compose = load(read('docker-compose.yml'), { schema: YAML11_SCHEMA }) as Compose;
const nginxConf = read('deploy/nginx.conf');
const services = compose.services;
const NODES = ['gateway-1', 'gateway-2'];
const node = (name: string) => services[name] as Service;
const env = (name: string) => node(name).environment ?? {};
const healthText = (s: Service) => [s.healthcheck?.test ?? []].flat().join(' ');

describe('docker-compose.yml: EventStoreDB, a MongoDB replica set, two gateway nodes behind a proxy', () => {
  it('has the backends, both nodes, the proxy and the one-shot key generator', () => {
    expect(Object.keys(services)).to.include.members(['eventstore', 'mongodb', 'keys', 'proxy', ...NODES]);
    expect(services.eventstore?.image).to.match(/^(eventstore\/eventstore|kurrentplatform\/kurrentdb|docker\.kurrent\.io\/kurrent-latest\/kurrentdb):/);
    expect(services.mongodb?.image).to.match(/^mongo:/);
  });

  it('gives both nodes the same backends, pointing at the compose services', () => {
    const [a, b] = NODES.map(env) as [Record<string, string>, Record<string, string>];
    expect(a.EVENTSTORE_URL).to.be.a('string').and.equal(b.EVENTSTORE_URL);
    expect(a.MONGODB_URL).to.be.a('string').and.equal(b.MONGODB_URL);
    expect(new URL(a.EVENTSTORE_URL as string).hostname).to.equal('eventstore');
    const mongo = new URL(a.MONGODB_URL as string);
    expect(mongo.hostname).to.equal('mongodb');
    // The replica set the URL names is the one mongod is started with (and the healthcheck initiates).
    const replSet = mongo.searchParams.get('replicaSet');
    expect(replSet).to.be.a('string');
    const mongodArgs = [services.mongodb?.command ?? []].flat();
    expect(mongodArgs[mongodArgs.indexOf('--replSet') + 1]).to.equal(replSet);
    expect(healthText(services.mongodb as Service)).to.include('rs.initiate').and.include(`_id: '${replSet}'`);
  });

  it('gives each node its own id and data dir, and both the same keys', () => {
    expect(new Set(NODES.map((n) => node(n).hostname)).size).to.equal(2);
    const volumesOf = (n: string) => node(n).volumes ?? [];
    const dataOf = (n: string) => volumesOf(n).find((v) => v.split(':')[1] === '/data');
    expect(dataOf('gateway-1')).to.be.a('string').and.not.equal(dataOf('gateway-2'));
    for (const n of NODES) {
      expect(volumesOf(n)).to.include('gateway-keys:/keys:ro');
      // A node seeds its data dir from the shared keys before the gateway starts, never over its own.
      const command = [node(n).command ?? []].flat().join(' ');
      expect(command).to.include('/keys/$$k.key').and.include('[ -f /data/$$k.key ]').and.match(/exec node dist\/main\.js$/);
      expect(node(n).depends_on).to.deep.include({ keys: { condition: 'service_completed_successfully' } });
      expect(node(n).depends_on).to.deep.include({ eventstore: { condition: 'service_healthy' }, mongodb: { condition: 'service_healthy' } });
      expect(env(n).TRUST_PROXY).to.equal('true');
      // The address the other node forwards session requests to: this node's own service.
      expect(env(n).NODE_URL).to.equal(`http://${n}:8080`);
    }
    expect(services.keys?.volumes).to.include('gateway-keys:/keys');
    expect([services.keys?.command ?? []].flat().join(' ')).to.include("loadOrCreateKey('/keys', n)").and.include("'server', 'jwt'");
    for (const v of ['gateway-keys', 'gateway-1-data', 'gateway-2-data']) expect(compose.volumes).to.have.property(v);
  });

  it('points both nodes at the RabbitMQ and NATS services for the event export', () => {
    expect(services.rabbitmq?.image).to.match(/^rabbitmq:/);
    expect(services.nats?.image).to.match(/^nats:/);
    expect([services.nats?.command ?? []].flat()).to.include('-js');
    for (const n of NODES) {
      expect(new URL(env(n).EXPORT_AMQP_URL as string).hostname).to.equal('rabbitmq');
      expect(new URL(env(n).EXPORT_NATS_URL as string).hostname).to.equal('nats');
      expect(node(n).depends_on).to.deep.include({ rabbitmq: { condition: 'service_healthy' }, nats: { condition: 'service_healthy' } });
    }
    const amqp = new URL(env('gateway-1').EXPORT_AMQP_URL as string);
    expect(services.rabbitmq?.environment).to.deep.include({ RABBITMQ_DEFAULT_USER: amqp.username, RABBITMQ_DEFAULT_PASS: amqp.password });
  });

  it('puts the proxy in front of both nodes, waiting for them to be healthy', () => {
    const proxy = services.proxy as Service;
    expect(proxy.depends_on).to.deep.equal(Object.fromEntries(NODES.map((n) => [n, { condition: 'service_healthy' }])));
    expect(proxy.volumes).to.include('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
    // Only the proxy is published; the nodes are reached through it.
    for (const n of NODES) expect(node(n).ports).to.equal(undefined);
    const published = (proxy.ports ?? [])[0] as string;
    const [hostPort, containerPort] = published.split(':');
    expect(new URL(env('gateway-1').PUBLIC_URL as string).port).to.equal(hostPort);
    expect(nginxConf).to.match(new RegExp(`listen ${containerPort};`));
  });

  it('has a healthcheck on every long-running service', () => {
    for (const [name, service] of Object.entries(services)) {
      if (name === 'keys') continue;
      expect(healthText(service), name).to.not.equal('');
    }
    for (const n of NODES) expect(healthText(node(n))).to.include('/health');
  });

  it('copies into the image everything npm run build reads before it builds', () => {
    const dockerfile = read('Dockerfile');
    const copied = [...dockerfile.matchAll(/^COPY\s+(.+?)\s+\S+$/gm)].flatMap((m) => (m[1] as string).split(/\s+/));
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const build = Object.entries(scripts).filter(([name]) => name === 'build' || name.startsWith('build:')).map(([, command]) => command).join(' ');
    for (const dir of new Set([...build.matchAll(/\b(scripts|src)\//g)].map((m) => m[1] as string))) expect(copied, dir).to.include(dir);
    for (const file of ['tsconfig.json', 'tsconfig.build.json', 'vite.config.ts']) expect(copied, file).to.include(file);
  });

  it('runs the gateway image as a non-root user that owns /data and /keys', () => {
    const dockerfile = read('Dockerfile');
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).to.be.a('string').and.not.match(/^(root|0)$/);
    expect(dockerfile).to.match(/chown node:node \/data \/keys/);
  });
});

describe('deploy/nginx.conf: the proxy in front of the nodes', () => {
  it('balances over exactly the compose nodes on their port', () => {
    const upstream = /upstream gateway \{([^}]*)\}/.exec(nginxConf)?.[1] ?? '';
    const servers = [...upstream.matchAll(/server\s+([^\s;]+)/g)].map((m) => m[1]);
    expect(servers).to.deep.equal(NODES.map((n) => `${n}:8080`));
  });

  it('passes the WebSocket upgrade of the realtime stream', () => {
    const ws = /location ~ \^\/instances\/\[\^\/\]\+\/events\/ws\$ \{([^}]*)\}/.exec(nginxConf)?.[1];
    expect(ws, 'a location for /instances/{id}/events/ws').to.be.a('string');
    expect(ws).to.include('proxy_set_header Upgrade $http_upgrade;').and.include('proxy_pass http://gateway;');
    expect(nginxConf).to.include('proxy_set_header Connection $connection_upgrade;').and.include('proxy_http_version 1.1;');
    expect(nginxConf).to.match(/map \$http_upgrade \$connection_upgrade \{\s*default upgrade;/);
    // The server closes a stream after 60 s without an ack: the proxy must not cut it sooner.
    expect(Number(/proxy_read_timeout (\d+)s/.exec(ws as string)?.[1])).to.be.greaterThan(60);
  });

  it('never resends a request that reached a node to the other one', () => {
    expect(nginxConf).to.match(/proxy_next_upstream error timeout;/);
    expect(nginxConf).to.not.include('non_idempotent');
  });

  it('passes nginx -t (node names mapped to loopback), where nginx is installed', async function () {
    const nginx = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
    if (!nginx) {
      console.log('      (skipped: nginx is not installed; `apt-get install nginx-light` to run it)');
      this.skip();
    }
    const dir = mkdtempSync(join(tmpdir(), 'nginx-conf-'));
    try {
      // nginx resolves upstream names when it loads the file; the compose names exist only in Docker.
      // The access log goes to the image's /var/log/nginx (stdout there); here into the scratch dir.
      const copy = nginxConf
        .replace(/gateway-1:8080/, '127.0.0.1:18081')
        .replace(/gateway-2:8080/, '127.0.0.1:18082')
        .replace('/var/log/nginx/access.log', join(dir, 'access.log'));
      writeFileSync(join(dir, 'nginx.conf'), copy);
      const { stderr } = await promisify(execFile)(nginx as string, ['-t', '-q', '-c', join(dir, 'nginx.conf'), '-p', dir]);
      expect(stderr).to.not.match(/emerg|failed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
