import { createServer, type Server } from 'node:http';
import type { Metrics } from './metrics.js';

/** METRICS_PORT: /metrics alone, without a token, on a port of its own (keep it off the public network). */
export async function serveMetrics(metrics: Metrics, port: number, host: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || (path !== '/metrics' && path !== '/cluster')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (path === '/cluster') {
      metrics.cluster().then(
        (view) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(view)),
        () => res.writeHead(503, { 'content-type': 'text/plain' }).end('cluster view unavailable'),
      );
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
