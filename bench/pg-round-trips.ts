import { reportOnSignal } from './round-trips.js';

/** Loaded into a Redrive server with --import by the Postgres workloads (round-trips.ts). */
reportOnSignal();
