// What every start-up step of the service (src/main.ts) is given: the
// configuration, the logger, the clock, and the stop list on which each step
// registers what it started, so that a shutdown or a failed start-up stops
// exactly that, last first. What a step needs beyond that it takes as
// arguments, from the steps before it.
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.ts';
import type { Config } from '../platform/config.ts';
import type { StopList } from '../platform/lifecycle.ts';

export interface StartupContext {
  config: Config;
  log: Logger;
  clock: Clock;
  stops: StopList;
}
