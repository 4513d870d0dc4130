// The service's logger: pino, writing JSON lines (for a log collector) or one
// human-readable line per record (for a terminal). Which one is LOG_FORMAT's
// choice, else whether standard output is a terminal.
import { type Logger, pino } from 'pino';
import type { Config } from './config.ts';
import { loggerOptions } from './http/server.ts';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const ERROR_LEVEL = 50;
/** pino's own fields, shown in their own places (or not at all: pid and hostname say nothing on a terminal). */
const OWN_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

/** Control characters (a newline in a value could forge a line) are escaped; anything else is shown as it is. */
function escaped(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping them is the point
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => JSON.stringify(c).slice(1, -1));
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return value === '' || /[\s"=]/.test(value) ? JSON.stringify(value) : escaped(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return escaped(JSON.stringify(value) ?? String(value));
}

interface SerializedError {
  type?: string;
  message?: string;
  stack?: string;
}

/**
 * One record as one line: time (UTC), level, message, key=value fields. An
 * error's stack follows, indented, only at error level and above; below that
 * the error is its message (a warning about a retried connection needs no
 * stack).
 */
export function formatRecord(record: Record<string, unknown>): string {
  const level = typeof record.level === 'number' ? record.level : 30;
  const time = typeof record.time === 'number' ? new Date(record.time).toISOString().slice(11) : '';
  const parts = [time, (LEVELS[level] ?? String(level)).padEnd(5), escaped(String(record.msg ?? ''))];
  for (const [key, value] of Object.entries(record)) {
    if (OWN_FIELDS.has(key) || value === undefined) continue;
    parts.push(`${key}=${valueText(value)}`);
  }
  const err = record.err as SerializedError | undefined;
  let stack = '';
  if (err && typeof err === 'object') {
    parts.push(`err=${valueText(err.message ?? err.type ?? 'error')}`);
    if (level >= ERROR_LEVEL && typeof err.stack === 'string') {
      stack = `\n${err.stack
        .split('\n')
        .map((line) => `    ${escaped(line)}`)
        .join('\n')}`;
    }
  }
  return `${parts.filter(Boolean).join(' ')}${stack}\n`;
}

/** A destination that turns pino's JSON lines into formatRecord's lines. */
export function prettyStream(out: { write(text: string): unknown }): { write(line: string): void } {
  return {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        out.write(line);
        return;
      }
      out.write(formatRecord(record));
    },
  };
}

export type LogFormat = 'pretty' | 'json';

/** LOG_FORMAT when set, else pretty on a terminal and JSON lines otherwise. */
export function logFormatFor(configured: Config['logFormat'], out: { isTTY?: boolean }): LogFormat {
  return configured ?? (out.isTTY === true ? 'pretty' : 'json');
}

/** The service's logger, writing to standard output in the configured format. */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>, out: NodeJS.WriteStream = process.stdout): Logger {
  const options = loggerOptions(config.logLevel);
  return logFormatFor(config.logFormat, out) === 'pretty' ? pino(options, prettyStream(out)) : pino(options);
}
