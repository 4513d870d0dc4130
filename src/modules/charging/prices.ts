// Moved to src/pricing/session-prices.ts. This re-export keeps service.ts's `export ... from './prices.ts'` working
// while the composition-root package edits service.ts in parallel; drop it when that lands.
export { estimateCost, fallbackTariff, userFacingPrices } from '../../pricing/session-prices.ts';
