// HTTP plumbing every module relies on: request ids, HTTPS enforcement, HSTS,
// validation compilers, and the one error renderer. Modules add routes only.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsImport from 'ajv-formats';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify';
import type { Config } from '../config.ts';
import { isDatabaseUnavailable } from '../db.ts';
import { AppError, type FieldError, renderProblem, serviceUnavailable } from '../errors.ts';
import { refuseBadText } from './input.ts';
import { logRequests } from './request-log.ts';
import { addJsonSecurityHeaders, addSecurityHeaders } from './security-headers.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsImport as unknown as { default?: typeof addFormatsImport }).default ?? addFormatsImport) as unknown as (ajv: Ajv) => Ajv;

export type HttpApp = FastifyInstance<import('node:http').Server, IncomingMessage, ServerResponse, import('fastify').FastifyBaseLogger, TypeBoxTypeProvider>;

const REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

function isLoopback(address: string | undefined): boolean {
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1' || (address?.startsWith('127.') ?? false);
}

/** Query strings are coerced (page=2 is a number) and arrays may repeat or be comma-separated; bodies are taken as sent. */
function validatorCompilers() {
  const common = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false } as const;
  const body = addFormats(new Ajv({ ...common, coerceTypes: false }));
  const query = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
  return { body, query };
}

function fieldOf(error: ErrorObject, context: string): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') path.push((error.params as { missingProperty: string }).missingProperty);
  if (error.keyword === 'additionalProperties') path.push((error.params as { additionalProperty: string }).additionalProperty);
  return path.length > 0 ? path.join('.') : context;
}

function messageOf(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an accepted field';
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'type':
      return `must be ${String(p.type).replace(',', ' or ')}`;
    case 'format':
      return `must be a valid ${String(p.format)}`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minLength':
      return `must be at least ${String(p.limit)} characters`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

export function validationProblem(errors: ErrorObject[], context: string): AppError {
  const seen = new Set<string>();
  const fields: FieldError[] = [];
  for (const error of errors) {
    const field = fieldOf(error, context === 'querystring' ? 'query' : context);
    const message = messageOf(error);
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    fields.push({ field, message });
  }
  const detail = fields.map((f) => `${f.field}: ${f.message}`).join('; ');
  return new AppError('validation_error', detail || 'The request is invalid.', { errors: fields });
}

function toAppError(error: FastifyError): AppError | undefined {
  if (error instanceof AppError) return error;
  // The database restarting, failing over or dropping a connection: the request may be repeated as it is.
  if (isDatabaseUnavailable(error)) return serviceUnavailable();
  if (error.validation) return validationProblem(error.validation as ErrorObject[], error.validationContext ?? 'body');
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'Request bodies must be JSON (Content-Type: application/json).');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'The request body is too large.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('validation_error', 'body: must not be empty with Content-Type application/json', {
        errors: [{ field: 'body', message: 'must not be empty' }],
      });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('validation_error', 'body: is not valid JSON', { errors: [{ field: 'body', message: 'is not valid JSON' }] });
  }
  if (error.statusCode === 400 && /JSON/i.test(error.message)) {
    return new AppError('validation_error', 'body: is not valid JSON', { errors: [{ field: 'body', message: 'is not valid JSON' }] });
  }
  return undefined;
}

export function sendProblem(reply: FastifyReply, error: AppError | undefined, baseUrl: string): FastifyReply {
  const body = renderProblem(error, String(reply.request.id), baseUrl);
  if (error?.headers) void reply.headers(error.headers);
  return reply.code(body.status).type('application/problem+json; charset=utf-8').send(body);
}

/** Query parameters whose values are credentials: the invoice link's signature, tokens, client secrets (also as a name's suffix, e.g. access_token, payment_intent_client_secret). */
const SECRET_QUERY_VALUE = /([?&][^=&#]*(?:signature|token|client_secret)=)[^&#]*/gi;

/**
 * A request URL as logged: credentials travel in query strings (the signed
 * invoice link's `signature`, `token`/`access_token`, the sandbox's hosted
 * page and intent reads take `client_secret=`), so the query of /sandbox/
 * URLs is dropped and those values elsewhere are replaced.
 */
export function loggedUrl(url: string): string {
  const query = url.indexOf('?');
  if (query === -1) return url;
  const pathname = url.slice(0, query);
  if (pathname === '/sandbox' || pathname.startsWith('/sandbox/')) return `${pathname}?[redacted]`;
  return `${pathname}${url.slice(query).replace(SECRET_QUERY_VALUE, '$1[redacted]')}`;
}

/** Fastify's request serializer, with the URL as loggedUrl shows it. */
function requestSerializer(request: {
  method: string;
  url: string;
  headers?: Record<string, string | string[] | undefined>;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}) {
  return {
    method: request.method,
    url: loggedUrl(request.url),
    version: [request.headers?.['accept-version']].flat()[0],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** Log options of every logger of the service: secrets in headers and in query strings never reach a log line. */
export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
    serializers: { req: requestSerializer },
  };
}

export interface HttpAppOptions {
  config: Pick<Config, 'mode' | 'trustProxy' | 'publicBaseUrl' | 'logLevel'> & { stripe?: Pick<Config['stripe'], 'sandbox'> };
  /** Requests the service's own built-in sandboxes made (logged at debug); see request-log.ts. */
  ownTraffic?: (request: FastifyRequest) => boolean;
  /** Makes the HTTPS server; absent in tests that use inject(). */
  serverFactory?: FastifyServerOptions['serverFactory'];
  logger?: FastifyServerOptions['logger'];
  /** A pino logger made by the caller (main.ts shares it with start-up messages). */
  loggerInstance?: import('fastify').FastifyBaseLogger;
  /**
   * Interfaces under a prefix that answer in a shape of their own (OCPI's envelope under /ocpi): a request there that
   * fails before routing (a URL that is not validly percent-encoded) gets `answer`'s body, with the HTTP status given.
   */
  preRoutingAnswers?: readonly { prefix: string; answer: (reply: FastifyReply, request: FastifyRequest, status: number, message: string) => unknown }[];
}

export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { config } = options;
  const compilers = validatorCompilers();
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger: options.logger ?? loggerOptions(config.logLevel) }),
    requestIdHeader: false,
    // Fastify's two lines per request are off: logRequests writes one, once the answer is sent.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    trustProxy: config.trustProxy,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Ids are bounded by Node's 16 KiB header limit; a long malformed id must reach
    // the handlers (401 without a token, else 404), not a router error.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 16_384 },
    // Errors raised before routing (a malformed percent-encoding) still get a problem body.
    frameworkErrors: (error, request, reply) => {
      void reply.header('X-Request-Id', request.id);
      addJsonSecurityHeaders(reply);
      const pathname = request.url.split('?')[0] ?? '';
      const own = options.preRoutingAnswers?.find((p) => pathname === p.prefix || pathname.startsWith(`${p.prefix}/`));
      if (own) {
        const bad = error.code === 'FST_ERR_BAD_URL';
        const status = bad ? 400 : ((error as FastifyError).statusCode ?? 400);
        return own.answer(reply as FastifyReply, request, status, bad ? 'The URL is not validly percent-encoded' : 'Malformed request');
      }
      const problem =
        error.code === 'FST_ERR_BAD_URL'
          ? new AppError('validation_error', 'The URL is not validly percent-encoded.', {
              errors: [{ field: 'url', message: 'is not validly percent-encoded' }],
            })
          : toAppError(error as FastifyError);
      return sendProblem(reply, problem, config.publicBaseUrl);
    },
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as HttpApp;

  // Bodies are JSON only: anything else (text/plain included) is 415.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? compilers.body : compilers.query).compile(schema));
  // NUL characters and lone surrogates are refused for every route here, before any scope registers.
  refuseBadText(app);
  addSecurityHeaders(app, { publicBaseUrl: config.publicBaseUrl, docsPrefix: '/docs' });
  logRequests(app, { paymentsSandbox: config.stripe?.sandbox ?? true, ...(options.ownTraffic ? { ownTraffic: options.ownTraffic } : {}) });

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('X-Request-Id', request.id);
    const socket = request.raw.socket as Partial<TLSSocket> | undefined;
    const forwardedProto = request.headers['x-forwarded-proto'];
    const proto = typeof forwardedProto === 'string' ? forwardedProto.split(',').pop()?.trim().toLowerCase() : undefined;
    const secure = socket?.encrypted === true || (config.trustProxy && proto === 'https');
    if (secure) {
      void reply.header('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
      return;
    }
    const exempt = config.mode !== 'production' && !config.trustProxy && isLoopback(request.raw.socket?.remoteAddress);
    const pathname = request.url.split('?')[0];
    const probe = pathname === '/healthz' || pathname === '/readyz';
    if (!exempt && !probe) {
      throw new AppError('https_required', 'This API is served over HTTPS only; repeat the request with https://.');
    }
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = toAppError(error);
    if (!known) {
      request.log.error({ err: error }, 'unhandled error');
    } else if (known.code === 'service_unavailable') {
      request.log.warn({ reason: (error as Error).message }, 'answered 503: the database is unavailable');
    } else if (known.status >= 500) {
      request.log.error({ err: error, code: known.code }, 'server error');
    }
    return sendProblem(reply, known, config.publicBaseUrl);
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new AppError('not_found', `No resource at ${request.method} ${request.url.split('?')[0]}.`), config.publicBaseUrl),
  );

  return app;
}

export type { FastifyReply, FastifyRequest };
