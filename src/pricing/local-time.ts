// Wall-clock time at a location: one Intl formatter per IANA time zone serves
// both the tariff engine's restrictions (local date, time of day, weekday) and
// the stations' `local_datetime` (with its UTC offset). An unknown time zone
// throws RangeError (from Intl.DateTimeFormat).

export const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const SHORT_WEEKDAYS: Record<string, Weekday> = {
  Mon: 'MONDAY',
  Tue: 'TUESDAY',
  Wed: 'WEDNESDAY',
  Thu: 'THURSDAY',
  Fri: 'FRIDAY',
  Sat: 'SATURDAY',
  Sun: 'SUNDAY',
};

// Building an Intl.DateTimeFormat costs tens of microseconds: one per time zone is kept (bounded: IANA has ~600
// zones, so only a caller passing made-up names could grow it further).
const FORMATS = new Map<string, Intl.DateTimeFormat>();

function formatFor(timeZone: string): Intl.DateTimeFormat {
  let format = FORMATS.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
      hourCycle: 'h23',
    });
    if (FORMATS.size < 1_000) FORMATS.set(timeZone, format);
  }
  return format;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  weekday: Weekday;
}

/** The wall clock at `ms` (epoch milliseconds) in `timeZone`. */
function wallClock(ms: number, timeZone: string): WallClock {
  const numbers: Record<string, number> = {};
  let weekday: Weekday = 'MONDAY';
  for (const part of formatFor(timeZone).formatToParts(ms)) {
    if (part.type === 'weekday') weekday = SHORT_WEEKDAYS[part.value] ?? 'MONDAY';
    else if (part.type !== 'literal') numbers[part.type] = Number(part.value);
  }
  const field = (name: string): number => numbers[name] ?? 0;
  return { year: field('year'), month: field('month'), day: field('day'), hour: field('hour'), minute: field('minute'), second: field('second'), weekday };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export interface LocalTime {
  /** YYYY-MM-DD. */
  date: string;
  /** Seconds since local midnight. */
  seconds: number;
  weekday: Weekday;
}

/** Local date, time of day and weekday: what tariff restrictions and price schedules are evaluated against. */
export function localTime(at: Date, timeZone: string): LocalTime {
  const wall = wallClock(at.getTime(), timeZone);
  return {
    date: `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}`,
    seconds: wall.hour * 3600 + wall.minute * 60 + wall.second,
    weekday: wall.weekday,
  };
}

/** `now` in `timeZone` as "YYYY-MM-DDTHH:MM:SS±HH:MM": whole seconds, the offset always numeric ("+00:00", never "Z"). */
export function localIsoDateTime(now: Date, timeZone: string): string {
  const ms = now.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('now is not a valid date');
  const seconds = Math.floor(ms / 1000) * 1000;
  const wall = wallClock(seconds, timeZone);
  const utcOfWall = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  const offsetMinutes = Math.round((utcOfWall - seconds) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return (
    `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}:${pad(wall.second)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}
