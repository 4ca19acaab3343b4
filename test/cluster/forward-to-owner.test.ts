import { expect } from 'chai';
import Koa from 'koa';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import pino from 'pino';
import { decideForward, ForwardToOwner, LIVE_INSTANCE, type SessionOwners } from '../../src/api/middleware/forward-to-owner.js';
import { requestContext } from '../../src/api/middleware/request-context.js';
import { buildOpenApi } from '../../src/api/openapi.js';
import { defineRoute } from '../../src/api/route.js';

/** The ownership port as a table: instance id -> owner elsewhere; it counts the questions asked. */
class OwnerTable implements SessionOwners {
  asked = 0;
  constructor(private readonly table: Record<string, { node: string; address: string }>) {}
  async ownerElsewhere(instanceId: string) {
    this.asked++;
    if (instanceId === 'unreadable') throw new Error('the leases cannot be read');
    return this.table[instanceId] ?? null;
  }
}

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A raw request, so the test controls every header (fetch would refuse or rewrite hop-by-hop ones). */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('forwarding a request to the node owning the session', () => {
  describe('decideForward', () => {
    it('keeps a request already forwarded here, without asking who owns the session', async () => {
      const owners = new OwnerTable({ i1: { node: 'n2', address: 'http://10.0.0.2:8080' } });
      expect(await decideForward({ 'x-gateway-forwarded-by': 'n2' }, 'i1', owners)).to.deep.equal({ forward: false, why: 'forwarded already' });
      expect(owners.asked).to.equal(0);
    });

    it('keeps a request whose session nobody else owns', async () => {
      expect(await decideForward({}, 'i1', new OwnerTable({}))).to.deep.equal({ forward: false, why: 'no other owner' });
    });

    it('forwards to the origin the lease advertises, and only to an http(s) origin without credentials', async () => {
      const at = (address: string) => decideForward({ host: 'evil.example' }, 'i1', new OwnerTable({ i1: { node: 'n2', address } }));
      expect(await at('http://10.0.0.2:8080')).to.deep.equal({ forward: true, node: 'n2', origin: 'http://10.0.0.2:8080' });
      expect(await at('https://gw-2.internal/')).to.deep.equal({ forward: true, node: 'n2', origin: 'https://gw-2.internal' });
      for (const bad of ['ftp://10.0.0.2', 'http://user:pw@10.0.0.2', 'not a url', ''])
        expect(await at(bad), bad).to.deep.equal({ forward: false, why: 'bad address' });
    });
  });

  describe('the middleware', () => {
    let owner: Server;
    let dead: NetServer;
    let ownerUrl: string;
    let front: Server;
    let frontUrl: string;
    const seen: Seen[] = [];
    let owners: OwnerTable;
    let forwarding: ForwardToOwner;
    let handledHere = 0;

    before(async () => {
      // The owner: records what reached it and answers with its own headers and a body.
      owner = createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (c: string) => (body += c));
        req.on('end', () => {
          seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
          // A frozen node: the connection is accepted, no answer ever comes.
          if (req.url?.startsWith('/live/frozen')) return;
          if (req.url?.startsWith('/empty')) {
            res.writeHead(204, { 'x-owner': 'yes' }).end();
            return;
          }
          res.writeHead(201, { 'content-type': 'application/json', 'x-owner': 'yes', 'keep-alive': 'timeout=5', connection: 'keep-alive, x-drop', 'x-drop': '1' });
          res.end(JSON.stringify({ echoed: body }));
        });
      });
      ownerUrl = await listen(owner);
      // An owner that died: every connection is dropped at once. The port stays ours for the
      // whole test; a port listened and closed again could be taken by another process meanwhile.
      dead = createNetServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
      const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`;

      owners = new OwnerTable({ remote: { node: 'node-b', address: ownerUrl }, frozen: { node: 'node-b', address: ownerUrl }, dead: { node: 'node-c', address: deadUrl } });
      // Time to answer: room for a 100 KB body on a loaded CI box; the frozen owner's 503 still
      // comes well inside the 5 s that tells a time limit from a hang.
      forwarding = new ForwardToOwner({ owners, nodeId: 'node-a', logger: pino({ level: 'silent' }), retryAfterSeconds: 7, connectTimeoutMs: 500, answerTimeoutMs: 2000 });
      const app = new Koa();
      app.use(requestContext(pino({ level: 'silent' })));
      // What the router does for a liveSession route: name the instance, then hand over.
      app.use(async (ctx, next) => {
        const id = /^\/(?:live|empty)\/(\w+)/.exec(ctx.path)?.[1];
        if (id !== undefined) ctx.state[LIVE_INSTANCE] = id;
        await next();
      });
      app.use(forwarding.middleware);
      app.use((ctx) => {
        handledHere++;
        ctx.body = { here: true };
      });
      front = createServer(app.callback());
      frontUrl = await listen(front);
    });
    after(async () => {
      await forwarding.close();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      owner.closeAllConnections();
      await new Promise<void>((resolve) => owner.close(() => resolve()));
      await new Promise<void>((resolve) => dead.close(() => resolve()));
    });
    beforeEach(() => {
      seen.length = 0;
      handledHere = 0;
      owners.asked = 0;
    });

    it('handles a request of a route without the flag here, without asking who owns anything', async () => {
      const res = await send(`${frontUrl}/other/remote`, 'GET', {});
      expect(JSON.parse(res.body)).to.deep.equal({ here: true });
      expect(owners.asked).to.equal(0);
      expect(seen).to.have.length(0);
    });

    it('handles here a session nobody else owns', async () => {
      const res = await send(`${frontUrl}/live/mine`, 'GET', {});
      expect(JSON.parse(res.body)).to.deep.equal({ here: true });
      expect(owners.asked).to.equal(1);
      expect(seen).to.have.length(0);
    });

    it('streams the request to the owner (method, path, query, end-to-end headers, body) and its answer back, hop-by-hop headers stripped', async () => {
      const body = JSON.stringify({ phone: '5511999990001', message: 'x'.repeat(100_000) });
      const res = await send(
        `${frontUrl}/live/remote/chat/send/text?a=1&b=two`,
        'POST',
        {
          authorization: 'Bearer abc',
          'idempotency-key': 'k-1',
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'proxy-authorization': 'Basic secret',
          connection: 'keep-alive, x-private',
          'x-private': 'for the first hop only',
          'x-request-id': 'req-42',
        },
        body,
      );
      expect(res.status).to.equal(201);
      expect(JSON.parse(res.body)).to.deep.equal({ echoed: body });
      expect(res.headers['x-owner']).to.equal('yes');
      expect(res.headers['x-drop'], 'named in the owner Connection header').to.equal(undefined);
      expect(handledHere).to.equal(0);
      expect(seen).to.have.length(1);
      const [got] = seen as [Seen];
      expect(got.method).to.equal('POST');
      expect(got.url).to.equal('/live/remote/chat/send/text?a=1&b=two');
      expect(got.body).to.equal(body);
      expect(got.headers.authorization).to.equal('Bearer abc');
      expect(got.headers['idempotency-key']).to.equal('k-1');
      expect(got.headers['content-type']).to.equal('application/json');
      expect(got.headers['x-gateway-forwarded-by']).to.equal('node-a');
      expect(got.headers['x-request-id']).to.equal('req-42');
      expect(got.headers['proxy-authorization']).to.equal(undefined);
      expect(got.headers['x-private']).to.equal(undefined);
      expect(got.headers.host).to.equal(new URL(ownerUrl).host);
    });

    it('passes an answer without a body on', async () => {
      const res = await send(`${frontUrl}/empty/remote`, 'DELETE', { authorization: 'Bearer abc' });
      expect(res.status).to.equal(204);
      expect(res.headers['x-owner']).to.equal('yes');
      expect(seen).to.have.length(1);
    });

    it('never forwards a request that was forwarded already: the owner handles it', async () => {
      const res = await send(`${frontUrl}/live/remote`, 'GET', { 'x-gateway-forwarded-by': 'node-b' });
      expect(JSON.parse(res.body)).to.deep.equal({ here: true });
      expect(seen).to.have.length(0);
    });

    it('answers 503 unavailable with Retry-After when the owner does not answer, and handles nothing here', async () => {
      const res = await send(`${frontUrl}/live/dead`, 'POST', { 'content-type': 'application/json', 'content-length': '2' }, '{}');
      expect(res.status).to.equal(503);
      expect(JSON.parse(res.body).error.type).to.equal('unavailable');
      expect(res.headers['retry-after']).to.equal('7');
      expect(handledHere).to.equal(0);
    });

    it('answers 503 unavailable, not 500, when the leases cannot be read', async () => {
      const res = await send(`${frontUrl}/live/unreadable`, 'GET', {});
      expect(res.status).to.equal(503);
      expect(JSON.parse(res.body).error.type).to.equal('unavailable');
      expect(res.headers['retry-after']).to.equal('7');
      expect(handledHere).to.equal(0);
    });

    it('answers 503 unavailable when the owner takes the request and never answers (a frozen node)', async () => {
      const started = Date.now();
      const res = await send(`${frontUrl}/live/frozen`, 'GET', {});
      expect(res.status).to.equal(503);
      expect(JSON.parse(res.body).error.type).to.equal('unavailable');
      expect(Date.now() - started).to.be.below(5_000);
      expect(seen.map((s) => s.url)).to.deep.equal(['/live/frozen']);
      expect(handledHere).to.equal(0);
    });
  });

  it('documents 503 on the routes that may be forwarded, and only on those', () => {
    const route = (path: string, liveSession: boolean) =>
      defineRoute({ method: 'get', path, summary: path, tag: 'T', auth: 'instance', liveSession, response: { description: 'ok' }, handler: () => ({ body: {} }) });
    const doc = buildOpenApi([route('/instances/{id}/live', true), route('/instances/{id}/stored', false)], 'test') as unknown as {
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
    };
    expect(doc.paths['/instances/{id}/live']?.get.responses).to.have.property('503');
    expect(doc.paths['/instances/{id}/stored']?.get.responses).to.not.have.property('503');
  });
});
