// Query-string conventions of the API: array parameters may repeat
// (operators=A&operators=B) or be comma-separated (operators=A,B), and
// booleans accept true|false|1|0. Applied before validation.
import type { FastifyRequest } from 'fastify';

export function normalizeQuery(spec: { arrays?: string[]; booleans?: string[] }) {
  return async (request: FastifyRequest) => {
    const query = request.query as Record<string, unknown>;
    for (const key of spec.arrays ?? []) {
      // `key[]=a&key[]=b` (the bracket style of many HTTP clients) means `key=a&key=b`.
      const bracketed = query[`${key}[]`];
      if (bracketed !== undefined) {
        const plain = query[key];
        query[key] = [...(plain === undefined ? [] : Array.isArray(plain) ? plain : [plain]), ...(Array.isArray(bracketed) ? bracketed : [bracketed])];
        delete query[`${key}[]`];
      }
      const value = query[key];
      if (value === undefined) continue;
      const items = (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(','));
      query[key] = items.map((v) => v.trim()).filter((v) => v.length > 0);
    }
    for (const key of spec.booleans ?? []) {
      const value = query[key];
      if (value === '1') query[key] = 'true';
      else if (value === '0') query[key] = 'false';
    }
  };
}
