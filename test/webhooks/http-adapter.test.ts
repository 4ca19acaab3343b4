import { expect } from 'chai';
import axios, { AxiosError, type AxiosInstance } from 'axios';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from 'undici';
import { leanAxios } from '../../src/infra/http/lean-axios.js';
import { createOutboundAgent } from '../../src/infra/http/outbound-agent.js';
import { undiciAdapter } from '../../src/infra/http/undici-axios-adapter.js';

describe('axios adapter over undici', () => {
  let server: Server;
  let base: string;
  let connections = 0;
  let agent: Agent;
  let http: AxiosInstance;
  const seen: { method: string; url: string; headers: Record<string, unknown>; body: string }[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
        if (req.url?.startsWith('/slow')) return void setTimeout(() => res.end('late'), 300);
        if (req.url?.startsWith('/missing')) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"nope"}');
        if (req.url?.startsWith('/bytes')) return void res.end(Buffer.from([1, 2, 3]));
        if (req.url?.startsWith('/trickle')) {
          res.writeHead(200);
          const timer = setInterval(() => res.write('x'), 20);
          return void res.on('close', () => clearInterval(timer));
        }
        res.writeHead(200, { 'content-type': 'application/json', 'x-echo': 'yes' }).end(JSON.stringify({ ok: true, url: req.url }));
      });
    });
    server.keepAliveTimeout = 10_000;
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    agent = createOutboundAgent({ allowPrivate: true, connectionsPerOrigin: 4, timeoutMs: 5000 });
    http = axios.create({ adapter: undiciAdapter(agent) });
  });
  after(async () => {
    await agent.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => (seen.length = 0));

  it('posts an object as JSON and parses the JSON answer, headers included', async () => {
    const res = await http.post(`${base}/echo`, { a: 1 }, { headers: { 'x-custom': 'v' } });
    expect(res.status).to.equal(200);
    expect(res.data).to.deep.equal({ ok: true, url: '/echo' });
    expect(res.headers['x-echo']).to.equal('yes');
    expect(seen[0]).to.deep.include({ method: 'POST', body: '{"a":1}' });
    expect(seen[0]!.headers).to.include({ 'content-type': 'application/json', 'x-custom': 'v' });
  });

  it('resolves baseURL and params', async () => {
    const res = await http.get('/q', { baseURL: base, params: { x: 'a b', y: 2 } });
    expect(res.data.url).to.equal('/q?x=a+b&y=2');
  });

  it('rejects outside validateStatus with an AxiosError carrying the response', async () => {
    const err = await http.get(`${base}/missing`).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(AxiosError);
    expect((err as AxiosError).code).to.equal('ERR_BAD_REQUEST');
    expect((err as AxiosError).response?.status).to.equal(404);
    expect((err as AxiosError).response?.data).to.deep.equal({ error: 'nope' });
    const ok = await http.get(`${base}/missing`, { validateStatus: () => true });
    expect(ok.status).to.equal(404);
  });

  it('times out with ECONNABORTED, and cancels on a signal', async () => {
    const timedOut = await http.get(`${base}/slow`, { timeout: 50 }).catch((e: unknown) => e);
    expect((timedOut as AxiosError).code).to.equal('ECONNABORTED');
    expect((timedOut as AxiosError).message).to.equal('timeout of 50ms exceeded');
    const controller = new AbortController();
    const pending = http.get(`${base}/slow`, { signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 20);
    expect(axios.isCancel(await pending)).to.equal(true);
  });

  it('ends a streamed answer whose body outlasts the timeout, or whose signal fires, with the same errors', async () => {
    const read = async (stream: AsyncIterable<Buffer>) => {
      for await (const _ of stream) void _;
    };
    const started = Date.now();
    const slow = await http.get(`${base}/trickle`, { responseType: 'stream', timeout: 150 });
    const timedOut = await read(slow.data as AsyncIterable<Buffer>).catch((e: unknown) => e);
    expect(timedOut).to.be.instanceOf(AxiosError);
    expect((timedOut as AxiosError).code).to.equal('ECONNABORTED');
    expect(Date.now() - started).to.be.within(140, 2000);

    const controller = new AbortController();
    const watched = await http.get(`${base}/trickle`, { responseType: 'stream', signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(axios.isCancel(await read(watched.data as AsyncIterable<Buffer>).catch((e: unknown) => e))).to.equal(true);
  });

  it('returns bytes for arraybuffer and a stream for stream', async () => {
    const bytes = await http.get(`${base}/bytes`, { responseType: 'arraybuffer' });
    expect(Buffer.from(bytes.data as Buffer).equals(Buffer.from([1, 2, 3]))).to.equal(true);
    const stream = await http.get(`${base}/bytes`, { responseType: 'stream' });
    const chunks: Buffer[] = [];
    for await (const c of stream.data as AsyncIterable<Buffer>) chunks.push(c);
    expect(Buffer.concat(chunks).equals(Buffer.from([1, 2, 3]))).to.equal(true);
  });

  it('reuses kept-alive connections', async () => {
    const before = connections;
    for (let i = 0; i < 50; i++) await http.post(`${base}/echo`, { i });
    expect(connections - before).to.be.at.most(1);
  });

  it('refuses, at connection time, a name that resolves to a private address', async () => {
    const guarded = createOutboundAgent({ allowPrivate: false, connectionsPerOrigin: 1, timeoutMs: 2000 });
    try {
      const client = axios.create({ adapter: undiciAdapter(guarded) });
      const port = new URL(base).port;
      // `localhost` resolves to loopback: the check runs on the address, after DNS.
      const err = (await client.get(`http://localhost:${port}/echo`).catch((e: unknown) => e)) as AxiosError;
      expect(err).to.be.instanceOf(AxiosError);
      expect(err.code).to.equal('EBLOCKEDADDRESS');
      expect(seen).to.have.length(0);
    } finally {
      await guarded.close();
    }
    // The same request through the permissive agent arrives: the refusal above was the policy.
    expect((await http.get(`http://localhost:${new URL(base).port}/echo`)).status).to.equal(200);
  });
  describe('a lean instance (defaults exactly as given)', () => {
    it('keeps only the given defaults and still sends them, with per-request headers on top', async () => {
      const lean = leanAxios({
        adapter: undiciAdapter(agent),
        transformRequest: [],
        transformResponse: [],
        responseType: 'stream',
        validateStatus: () => true,
        timeout: 2000,
        headers: { 'content-type': 'application/json', 'user-agent': 'lean-test' },
      });
      expect(Object.keys(lean.defaults).sort()).to.deep.equal(['adapter', 'headers', 'responseType', 'timeout', 'transformRequest', 'transformResponse', 'validateStatus']);
      const res = await lean.post(`${base}/missing`, Buffer.from('{"b":2}'), { headers: { 'webhook-id': 'msg_1' } });
      expect(res.status).to.equal(404);
      const body: Buffer[] = [];
      for await (const chunk of res.data as AsyncIterable<Buffer>) body.push(chunk);
      expect(Buffer.concat(body).toString()).to.equal('{"error":"nope"}');
      expect(seen[0]).to.deep.include({ method: 'POST', body: '{"b":2}' });
      expect(seen[0]!.headers).to.include({ 'content-type': 'application/json', 'user-agent': 'lean-test', 'webhook-id': 'msg_1' });
    });

    it('times out as a plain instance does', async () => {
      const lean = leanAxios({ adapter: undiciAdapter(agent), timeout: 50 });
      const err = await lean.get(`${base}/slow`).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AxiosError);
      expect((err as AxiosError).code).to.be.oneOf(['ECONNABORTED', 'ETIMEDOUT']);
    });
  });
});
