/** freshSingleFlight's former name and place, for the profile cache until it imports services/fresh-single-flight.ts itself (its owner's change). */
export { freshSingleFlight as freshlyShared } from './services/fresh-single-flight.js';
