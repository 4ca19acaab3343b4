/* eslint-disable @typescript-eslint/no-explicit-any -- schemas and answers are read field by field */
import { expect } from 'chai';
import { pairedInstance } from '../support/chats.js';
import { useGateway } from '../support/use-gateway.js';

/**
 * A value of `schema`'s shape whose every string is `text(schema)` long: the longest a route
 * accepts, or longer. What a lookup would receive if the route passed strings on unbounded.
 */
function sample(schema: any, text: (s: any) => string, depth = 0): unknown {
  if (!schema || depth > 8) return null;
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return sample(options.find((o: any) => o.type !== 'null') ?? options[0], text, depth + 1);
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [name, prop] of Object.entries(schema.properties ?? {})) out[name] = sample(prop, text, depth + 1);
      return out;
    }
    case 'array':
      return [sample(schema.items, text, depth + 1)];
    case 'string':
      return text(schema);
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    default:
      return 'x';
  }
}

const longest = (s: any) => 'x'.repeat(Math.min(s.maxLength ?? 5000, 200_000));
const overLong = () => 'y'.repeat(2_000);

describe('security: no request content causes a 500', () => {
  let me: { id: string; phone: string };
  let document: any;
  const { t, owner } = useGateway({ MESSAGING_NETWORK: 'sandbox', BODY_LIMIT_BYTES: String(4 * 1024 * 1024) });
  before(async () => {
    me = await pairedInstance(t, owner);
    document = (await t.api('GET', '/openapi.json')).body;
  });

  for (const [label, text] of [['the longest strings each field accepts', longest], ['2,000-character strings everywhere', overLong]] as const) {
    it(`every route, with ${label} in its path, query and body`, async function () {
      this.timeout(120_000);
      const failures: string[] = [];
      for (const [path, ops] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
        for (const [method, op] of Object.entries(ops)) {
          // Sessions are left alone: logging out would end the paired instance the rest rely on.
          if (/session\/(logout|restart)|token\/rotate|client-secret\/rotate|cancel/.test(path)) continue;
          const params = (op.parameters ?? []) as any[];
          let url = path.replace('{id}', me.id);
          for (const p of params.filter((p) => p.in === 'path' && p.name !== 'id')) url = url.replace(`{${p.name}}`, encodeURIComponent(String(sample(p.schema, text))));
          const query = params.filter((p) => p.in === 'query').map((p) => `${p.name}=${encodeURIComponent(String(sample(p.schema, text)))}`);
          if (query.length > 0) url += `?${query.join('&')}`;
          const schema = op.requestBody?.content?.['application/json']?.schema;
          const body = method === 'get' ? undefined : schema ? sample(schema, text) : {};
          const res = await t.api(method.toUpperCase(), url, { token: owner.jwt, body });
          // 502 (a network answer) and 503 (/ready while projections catch up) are designed answers; 500 never is.
          if (res.status === 500) failures.push(`${method.toUpperCase()} ${path}: ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
      expect(failures, failures.join('\n')).to.deep.equal([]);
    });
  }
});
