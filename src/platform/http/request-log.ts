// One log line per request, written when the answer has gone out (Fastify's
// own "incoming request" / "request completed" pair is turned off). Only the
// traffic an operator watches is at info: the client API and OCPI peers.
// Probes, metrics, the API reference, the payment sandbox's pages and
// webhooks, and the built-in CPO network's own OCPI calls are at debug, so
// an idle service prints nothing.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loggedUrl } from './server.ts';

export interface RequestLogOptions {
  /** The payment processor is the built-in Stripe sandbox: its webhook deliveries are the service talking to itself. */
  paymentsSandbox: boolean;
  /**
   * True for a request the service's own built-in sandboxes made (the CPO
   * network's OCPI pushes). Decided from what authenticated the request
   * (the OCPI connection), never from anything a client could set.
   */
  ownTraffic?: (request: FastifyRequest) => boolean;
}

export function requestLogLevel(request: FastifyRequest, options: RequestLogOptions): 'info' | 'debug' {
  const url = request.url;
  const query = url.indexOf('?');
  const pathname = query === -1 ? url : url.slice(0, query);
  if (pathname.startsWith('/api/')) return 'info';
  if (pathname === '/ocpi' || pathname.startsWith('/ocpi/')) return options.ownTraffic?.(request) === true ? 'debug' : 'info';
  if (pathname === '/webhooks/stripe') return options.paymentsSandbox ? 'debug' : 'info';
  return 'debug';
}

/** Rounded to 0.1 ms: finer digits are noise in a log line. */
const millis = (reply: FastifyReply) => Math.round(reply.elapsedTime * 10) / 10;

export function logRequests(app: FastifyInstance, options: RequestLogOptions): void {
  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('onResponse', (request, reply, done) => {
    const level = requestLogLevel(request, options);
    // At a level that is off nothing is built (the URL's redaction included); pino says which are on, Fastify's
    // silent logger (no such method) takes every call as a no-op.
    if ((request.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.(level) ?? true) {
      request.log[level]({ method: request.method, url: loggedUrl(request.url), status: reply.statusCode, ms: millis(reply) }, 'request');
    }
    done();
  });
}
