// Moved to src/pricing/price-cdr.ts. This re-export keeps service.ts's `export ... from './price-cdr.ts'` working
// while the composition-root package edits service.ts in parallel; drop it when that lands.
export { priceCdr } from '../../pricing/price-cdr.ts';
